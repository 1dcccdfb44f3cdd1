package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/testskip"
)

// afterSignal is how long a child took to exit after SIGINT: the wall
// time, and the CPU time it spent after the signal (its user and system
// time at the end less that at the signal, where /proc tells it; else the
// wall time). Wall is negative where it answered, exit 0, before the
// signal.
type afterSignal struct{ wall, cpu time.Duration }

// cpuTime is a running process's user and system time, from
// /proc/PID/stat (fields 14 and 15, in clock ticks of 1/100 s on Linux).
func cpuTime(pid int) (time.Duration, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces; the fields after it
	// start after its closing parenthesis, at field 3.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+s) * 10 * time.Millisecond, true
}

// interruptAfter runs tessel args as a child process, sends it SIGINT
// after delay and returns how long it took to exit after the signal, its
// exit code, stdout and stderr. A child still running 20 s after the
// signal is killed and fails the test.
func interruptAfter(t *testing.T, delay time.Duration, args ...string) (afterSignal, int, string, string) {
	t.Helper()
	cmd := tesselChild(args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v ended before the signal: %v: %s", args, err, stderr.String())
		}
		// A whole answer before the signal: nothing was interrupted (a
		// fast machine finishes some of these runs in time).
		return afterSignal{wall: -1}, 0, stdout.String(), stderr.String()
	case <-time.After(delay):
	}
	cpu0, cpuKnown := cpuTime(cmd.Process.Pid)
	cmd.Process.Signal(syscall.SIGINT)
	t0 := time.Now()
	var err error
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v: still running 20 s after SIGINT", args)
	}
	took := afterSignal{wall: time.Since(t0)}
	took.cpu = took.wall
	if st := cmd.ProcessState; cpuKnown && st != nil {
		took.cpu = st.UserTime() + st.SystemTime() - cpu0
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	return took, code, stdout.String(), stderr.String()
}

// interruptBound is the loose bound of these tests on the work done after
// the signal: tessel answers within about StopGrace of it, plus its
// report; far less than the minutes the runs take otherwise. The CPU time
// is held to it, so that a machine busy with other work (the suite runs
// packages side by side) does not fail the test; the wall time, which
// also counts waiting for a core, to three times it.
const interruptBound = 5 * time.Second

// SIGINT a few seconds into long runs answers at once: the best verified
// schedule so far, saying it was interrupted, or one line saying none was
// reached (exit 1).
func TestInterruptAnswersAtOnce(t *testing.T) {
	testskip.Short(t, "runs long commands as child processes")
	dir := t.TempDir()
	// A chain of 10,000 blocks, and a schedule and a timeline of 1000
	// devices joining for replan.
	chain := filepath.Join(dir, "chain.json")
	writeChain(t, chain, 5000, 4)
	old := filepath.Join(dir, "old.json")
	if code, _, errOut := runCLI(t, "search", "-n", "16", "-o", old); code != 0 {
		t.Fatal(errOut)
	}
	timeline := filepath.Join(dir, "joins.json")
	var changes []map[string]any
	for i := range 1000 {
		changes = append(changes, map[string]any{"at": 10 * (i + 1), "join": map[string]any{"name": fmt.Sprintf("j%d", i), "speed": 1, "memory": 0}})
	}
	data, _ := json.Marshal(map[string]any{"changes": changes})
	os.WriteFile(timeline, data, 0o644)
	for _, args := range [][]string{
		{"search", "-p", "v-shape", "-m", "6", "-n", "1000000"},
		{"search", "-d", "1000", "-n", "128"},
		{"search", "--placement-file", chain, "-n", "4"},
		{"replan", "--schedule", old, "--timeline", timeline},
	} {
		took, code, out, errOut := interruptAfter(t, 3*time.Second, args...)
		if took.wall < 0 {
			t.Logf("%v: answered before the signal", args)
			continue
		}
		t.Logf("%v: exit %d %.2fs after SIGINT (%.2f CPU s)", args, code, took.wall.Seconds(), took.cpu.Seconds())
		if took.cpu > interruptBound || took.wall > 3*interruptBound {
			t.Errorf("%v: answered %.1fs after SIGINT, %.1f CPU s, want within %v of CPU and %v", args, took.wall.Seconds(), took.cpu.Seconds(), interruptBound, 3*interruptBound)
		}
		switch code {
		case 0:
			if searchEndedBefore(out, 3*time.Second) {
				break // a whole answer: the signal came while it was written
			}
			if !strings.Contains(out, "stopped ") {
				t.Errorf("%v: an interrupted answer does not say it stopped:\n%s", args, out)
			}
		case 1:
			if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "stopped before") {
				t.Errorf("%v: exit 1 with %q, want one line saying it stopped before an answer", args, errOut)
			}
		default:
			t.Errorf("%v: exit %d after SIGINT: %s", args, code, errOut)
		}
	}
}

// searchEndedBefore reports whether the report out of tessel search says
// its search took less than d ("search time 2.1s"): an answer the search
// finished before a signal at d, which it does not call stopped (a
// faster machine or search finishes some of the runs above in time).
func searchEndedBefore(out string, d time.Duration) bool {
	m := regexp.MustCompile(`(?m)^search time +([0-9.]+)s`).FindStringSubmatch(out)
	if m == nil {
		return false
	}
	took, err := strconv.ParseFloat(m[1], 64)
	return err == nil && time.Duration(took*float64(time.Second)) < d
}

// writeChain writes a chain placement of 2·half blocks on d devices.
func writeChain(t *testing.T, path string, half, d int) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `{"name": "chain", "devices": %d, "blocks": [`, d)
	for i := range half {
		fmt.Fprintf(&b, `{"id": "f%d", "kind": "forward", "devices": [%d], "time": 1, "memory": 1},`, i, i*d/half)
	}
	for i := half - 1; i >= 0; i-- {
		sep := ","
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&b, `{"id": "b%d", "kind": "backward", "devices": [%d], "time": 2, "memory": -1}%s`, i, i*d/half, sep)
	}
	b.WriteString(`], "deps": [`)
	for i := 1; i < half; i++ {
		fmt.Fprintf(&b, `["f%d", "f%d"], `, i-1, i)
	}
	fmt.Fprintf(&b, `["f%d", "b%d"]`, half-1, half-1)
	for i := half - 1; i > 0; i-- {
		fmt.Fprintf(&b, `, ["b%d", "b%d"]`, i, i-1)
	}
	b.WriteString("]}\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
