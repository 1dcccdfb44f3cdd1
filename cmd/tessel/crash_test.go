package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/internal/safego"
	"github.com/tessel-pp/tessel/outfile"
)

// The test binary doubles as tessel: with TESSEL_TEST_MAIN set it runs
// its arguments as main does (signals included), with the commands of
// testCommands beside tessel's, so that tests can run tessel as a child
// process: send it signals, kill it, read its exit code.
func TestMain(m *testing.M) {
	if os.Getenv("TESSEL_TEST_MAIN") != "" {
		ctx, stop := interruptible()
		code := runWith(ctx, os.Args, os.Stdout, os.Stderr, testCommands()...)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// testCommands are commands of the test build only: crash panics, in the
// command or in a worker goroutine, after its --out file was checked.
func testCommands() []*cli.Command {
	return []*cli.Command{{
		Name:  "crash",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "worker"}, &cli.StringFlag{Name: "out"}},
		Action: func(c *cli.Context) error {
			if err := outfile.Check(false, c.String("out")); err != nil {
				return err
			}
			var xs []int
			if !c.Bool("worker") {
				_ = xs[len(c.Args().Slice())+3] // index out of range
			}
			var pan safego.Panic
			var wg sync.WaitGroup
			pan.Go(&wg, func() { _ = xs[len(c.Args().Slice())+3] })
			wg.Wait()
			pan.Repanic()
			return outfile.WriteNew(c.String("out"), false, []byte("never"))
		},
	}}
}

// tesselChild is the command that runs the test binary as tessel.
func tesselChild(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "TESSEL_TEST_MAIN=1")
	return cmd
}

var crashLine = regexp.MustCompile(`^tessel: internal error at tessel/crash_test\.go:\d+: runtime error: index out of range \[3\] with length 0 \(a bug in tessel: please report it with the command line that caused it\)\n$`)

// A panic, in the command or in one of its worker goroutines, is one
// line asking for a report and exit code 3 (neither 1, no answer, nor 2,
// bad input), and writes nothing.
func TestCrashExitCode(t *testing.T) {
	for _, worker := range []bool{false, true} {
		dir := t.TempDir()
		out := filepath.Join(dir, "s.json")
		args := []string{"crash", "--out", out}
		if worker {
			args = append(args, "--worker")
		}
		// In this process, through run's recover.
		var stdout, stderr bytes.Buffer
		code := runWith(context.Background(), append([]string{"tessel"}, args...), &stdout, &stderr, testCommands()...)
		if code != exitCrash || stdout.Len() > 0 || !crashLine.MatchString(stderr.String()) {
			t.Errorf("worker %v: exit %d, stdout %q, stderr %q; want exit 3 and the crash line", worker, code, stdout.String(), stderr.String())
		}
		// As a process: the exit code the shell sees.
		cmd := tesselChild(args...)
		var childErr bytes.Buffer
		cmd.Stderr = &childErr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 || !crashLine.MatchString(childErr.String()) {
			t.Errorf("worker %v, child: %v, stderr %q; want exit status 3 and the crash line", worker, err, childErr.String())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("worker %v: a crash left files: %v", worker, entries)
		}
	}
	if !strings.Contains(crashLine.String(), "report") {
		t.Fatal("the crash line must ask for a report")
	}
}
