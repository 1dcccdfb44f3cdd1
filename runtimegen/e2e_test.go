//go:build unix

package runtimegen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"tessel/schedule"
)

// python is the interpreter of Debian's python3-torch.
const python = "/usr/bin/python3"

// needTorch skips the test when python cannot import torch, except under
// CI=true, where a missing torch is a failure.
func needTorch(t *testing.T) {
	t.Helper()
	out, err := exec.Command(python, "-c", "import torch").CombinedOutput()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("%s cannot import torch (%v: %s); install it with: apt-get install -y --no-install-recommends python3-torch",
		python, err, strings.TrimSpace(string(out)))
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip("skipping the PyTorch end-to-end test: " + msg)
}

// The generated workers train the example MLP on 4 ranks (gloo, CPU) and
// every parameter's gradient, summed over 8 micro-batches, equals the
// single-process run's (worker.py check, allclose in float64).
func TestWorkersEndToEnd(t *testing.T) {
	if testing.Short() && os.Getenv("CI") != "true" {
		t.Skip("skipping the PyTorch end-to-end test in short mode")
	}
	needTorch(t)
	for _, tc := range []struct {
		shape string
		mode  Mode
	}{
		{"v-shape", NonBlocking},
		{"x-shape", NonBlocking},
		{"m-shape", NonBlocking},
		{"k-shape", NonBlocking},
		{"x-shape", Blocking}, // crossing chains: the order that naive programs get wrong
	} {
		t.Run(tc.shape+"/"+string(tc.mode), func(t *testing.T) {
			runWorkers(t, greedy(t, builtin(t, tc.shape, 4, false), 8), tc.mode)
		})
	}
}

// runWorkers writes the runtime of s, runs launch.sh within two minutes and
// checks the gradients against the single-process run.
func runWorkers(t *testing.T, s *schedule.Schedule, mode Mode) {
	t.Helper()
	files, err := Files(generate(t, s, mode), "gloo")
	if err != nil {
		t.Fatal(err)
	}
	dir, out := t.TempDir(), t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", filepath.Join(dir, "launch.sh"), "--out", out)
	cmd.Env = append(os.Environ(), "PYTHON="+python, "MASTER_PORT="+strconv.Itoa(freePort(t)))
	// torch.distributed.run starts one process per rank: on timeout, end
	// the whole process group, not only the launcher.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	log, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("launch.sh did not finish within 120 s:\n%s", log)
	}
	if err != nil {
		t.Fatalf("launch.sh: %v\n%s", err, log)
	}
	for r := range s.Placement.Devices {
		if !strings.Contains(string(log), fmt.Sprintf("worker: rank %d: ", r)) {
			t.Errorf("rank %d did not report completion:\n%s", r, log)
		}
	}
	check := exec.CommandContext(ctx, python, filepath.Join(dir, "worker.py"), "check", "--programs", dir, "--out", out)
	res, err := check.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("worker.py check: %v", err)
	}
	if err != nil || !strings.HasPrefix(string(res), "check: ok") {
		t.Fatalf("gradients differ from the single-process run (%v):\n%s", err, res)
	}
	t.Logf("%s %s: %s (%.1f s)", s.Placement.Name, mode, strings.TrimSpace(string(res)), time.Since(start).Seconds())
}

// freePort returns a TCP port on localhost that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
