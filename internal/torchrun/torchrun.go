//go:build unix

// Package torchrun starts the launch.sh that tessel gen writes (which
// starts every rank with torch.distributed.run): a free port for its
// rendezvous, a command that ends all of its ranks when its context
// ends, and, for tests, a run that fails the test on error or overrun.
package torchrun

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// FreePort returns a TCP port on localhost that nothing listens on now
// (for MASTER_PORT).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Command is sh script args… in a process group of its own: when ctx
// ends, the whole group is killed (torch.distributed.run starts one
// process per rank), not only the launcher.
func Command(ctx context.Context, script string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "sh", append([]string{script}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// Script runs script with args under env and returns its output; it
// fails t when the script fails or runs longer than limit.
func Script(t testing.TB, env []string, limit time.Duration, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := Command(ctx, script, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not finish within %v:\n%s", script, args, limit, out)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s: %v", script, err)
	}
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", script, args, err, out)
	}
	return string(out)
}

// Port is FreePort for tests: it fails t when no port is free.
func Port(t testing.TB) int {
	t.Helper()
	p, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
