//go:build unix

package runtimegen

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/internal/torchrun"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
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
	testskip.Skip(t, "skipping the PyTorch end-to-end test: "+msg)
}

// The generated workers train the example MLP on 4 ranks (gloo, CPU) for
// 3 iterations, an SGD step between them, and in every iteration every
// parameter's gradient, summed over 8 micro-batches, equals the
// single-process run's (worker.py check, allclose in float64). The
// schedules: greedy ones on the built-in shapes, a split backward on the
// v-shape (input and weight blocks, the weights deferred; and ZB-H1 on
// the built-in split v-shape), a searched schedule on the V placement (two
// stages per device, split backward), and schedules that offload and
// recompute activations (OptPipe's decisions: PipeOffload, 1F1B with full
// recompute, and both mixed, whole and split backward, on the V placement
// too, in both program modes), whose workers move what each forward saved
// to a host buffer and back and run forwards again, every rank reporting
// the bytes and the forwards.
//
// All of them run in one launch of launch.sh (worker.py runs several
// program directories in turn), started as a new user would: no PYTHON and
// a python3 first on the PATH that cannot import torch, so launch.sh must
// find /usr/bin/python3 itself.
func TestWorkersEndToEnd(t *testing.T) {
	testskip.Short(t, "the PyTorch end-to-end test")
	needTorch(t)
	type run struct {
		label string
		s     *schedule.Schedule
		mode  Mode
		acts  []MemoryAction
	}
	var runs []run
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
		runs = append(runs, run{tc.shape + "/" + string(tc.mode), greedy(t, builtin(t, tc.shape, 4, false), 8), tc.mode, nil})
	}
	split := loadPlacement(t, "split-v-shape.json")
	runs = append(runs, run{"split-v-shape/deferred-weights", deferredWeights(t, split, 8), NonBlocking, nil})
	zb, err := placement.Builtin("v-shape", placement.Options{Devices: 4, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	zbh1, err := baseline.ZBH1(spec.New(zb, 8))
	if err != nil {
		t.Fatal(err)
	}
	runs = append(runs, run{"v-shape-split/zb-h1", zbh1, NonBlocking, nil})
	res, err := search.Run(context.Background(), spec.Spec{Placement: loadPlacement(t, "v-chunks.json"), MicroBatches: 8, Memory: 8}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	runs = append(runs, run{"v-chunks/searched", res.Schedule, NonBlocking, nil})
	// Offloads and recomputes, decided by the offload and recompute
	// baselines (verified schedules with decisions): PipeOffload on the
	// split v-shape, 1F1B with full recompute on the V placement, and
	// schedules that offload some stages and recompute others, whole and
	// split backward, both modes.
	saving := func(opt placement.Options) *placement.Placement {
		p, err := placement.Builtin("v-shape", opt)
		if err != nil {
			t.Fatal(err)
		}
		return p.WithOffload(1).WithRecompute()
	}
	vsplit := saving(placement.Options{Devices: 4, SplitBackward: true})
	vchunks := saving(placement.Options{Devices: 4, SplitBackward: true, Chunks: 2, Order: placement.V})
	vwhole := saving(placement.Options{Devices: 4})
	mixed := []placement.Action{placement.Offload, placement.Recompute, placement.Offload, placement.Recompute}
	for _, r := range []struct {
		label string
		build func() (*schedule.Schedule, error)
		mode  Mode
	}{
		{"v-shape-split/pipeoffload", func() (*schedule.Schedule, error) {
			return baseline.PipeOffload(spec.Spec{Placement: vsplit, MicroBatches: 8, Memory: 2})
		}, NonBlocking},
		{"v-shape-v2-split/1f1b-recompute", func() (*schedule.Schedule, error) {
			return baseline.OneFOneBRecompute(spec.Spec{Placement: vchunks, MicroBatches: 8, Memory: 2})
		}, NonBlocking},
		{"v-shape/offload+recompute", func() (*schedule.Schedule, error) {
			return baseline.Savings(spec.Spec{Placement: vwhole, MicroBatches: 8, Memory: 2}, mixed)
		}, NonBlocking},
		{"v-shape/offload+recompute/blocking", func() (*schedule.Schedule, error) {
			return baseline.Savings(spec.Spec{Placement: vwhole, MicroBatches: 8, Memory: 2}, mixed)
		}, Blocking},
		{"v-shape-split/offload+recompute", func() (*schedule.Schedule, error) {
			return baseline.Savings(spec.Spec{Placement: vsplit, MicroBatches: 8, Memory: 2}, mixed)
		}, NonBlocking},
		{"v-shape-v2-split/offload+recompute", func() (*schedule.Schedule, error) {
			return baseline.Savings(spec.Spec{Placement: vchunks, MicroBatches: 8, Memory: 3}, append(append([]placement.Action(nil), mixed...), mixed...))
		}, NonBlocking},
	} {
		s, err := r.build()
		if err != nil {
			t.Fatalf("%s: %v", r.label, err)
		}
		if off, rec := s.Count(); off+rec == 0 {
			t.Fatalf("%s: neither offloads nor recomputes", r.label)
		}
		runs = append(runs, run{r.label, s, r.mode, memoryActions(s)})
	}

	fake := t.TempDir()
	if err := os.WriteFile(filepath.Join(fake, "python3"), []byte("#!/bin/sh\necho 'fake python3: no torch here' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var dirs, outs []string
	for _, r := range runs {
		files, err := Files(generateActions(t, r.s, r.mode, r.acts), "gloo")
		if err != nil {
			t.Fatalf("%s: %v", r.label, err)
		}
		dir := t.TempDir()
		for name, b := range files {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		dirs, outs = append(dirs, dir), append(outs, t.TempDir())
	}
	// launch.sh passes "--programs ." (dirs[0]) itself.
	args := []string{"--out", outs[0]}
	for k := 1; k < len(dirs); k++ {
		args = append(args, "--programs", dirs[k], "--out", outs[k])
	}
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "PYTHON=") && !strings.HasPrefix(e, "PATH=") {
			env = append(env, e)
		}
	}
	env = append(env, "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"), "MASTER_PORT="+strconv.Itoa(torchrun.Port(t)))

	start := time.Now()
	log := torchrun.Script(t, env, 300*time.Second, filepath.Join(dirs[0], "launch.sh"), append([]string{"--iterations", "3"}, args...)...)
	for rank := range 4 {
		if got := strings.Count(log, fmt.Sprintf("worker: rank %d: ", rank)); got != len(runs) {
			t.Errorf("rank %d reported %d runs, want %d:\n%s", rank, got, len(runs), log)
		}
	}
	if !strings.Contains(log, "3 iterations, ") || !strings.Contains(log, " ms per iteration after the first") {
		t.Errorf("no time per iteration reported:\n%s", log)
	}
	// Every rank that offloads or recomputes in a run says how much.
	want := 0
	for _, r := range runs {
		devs := map[int]bool{}
		for _, a := range r.acts {
			devs[r.s.Placement.Blocks[a.Block].Devices[0]] = true
		}
		want += len(devs)
	}
	if got := strings.Count(log, " bytes offloaded and "); got != want {
		t.Errorf("%d rank reports of offloads and recomputes, want %d:\n%s", got, want, log)
	}
	t.Logf("launch: %d schedules on 4 ranks in %.1f s", len(runs), time.Since(start).Seconds())
	check := torchrun.Script(t, env, 300*time.Second, filepath.Join(dirs[0], "launch.sh"), append([]string{"check"}, args...)...)
	if got := strings.Count(check, "check: ok: "); got != len(runs) || strings.Contains(check, "FAILED") {
		t.Fatalf("gradients differ from the single-process run's (%d of %d ok):\n%s", got, len(runs), check)
	}
	for k, line := range strings.Split(strings.TrimSpace(check), "\n") {
		t.Logf("%s: %s", runs[k].label, line)
	}
	t.Logf("total %.1f s", time.Since(start).Seconds())
}

// A PYTHON that cannot import torch gets one line saying what to install,
// before anything starts.
func TestLaunchWithoutTorch(t *testing.T) {
	files, err := Files(generate(t, greedy(t, builtin(t, "v-shape", 2, false), 2), NonBlocking), "gloo")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := filepath.Join(t.TempDir(), "python")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", filepath.Join(dir, "launch.sh"))
	cmd.Env = append(os.Environ(), "PYTHON="+fake)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("launch.sh with a PYTHON without torch: %v, want exit status 1", err)
	}
	msg := stderr.String()
	if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "cannot import torch") || !strings.Contains(msg, "pip install torch") {
		t.Errorf("want one line naming the problem and what to install, got %q", msg)
	}
}

// loadPlacement reads a placement file of the repository's testdata.
func loadPlacement(t testing.TB, name string) *placement.Placement {
	t.Helper()
	p, err := placement.Load(filepath.Join("..", "testdata", "placements", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// deferredWeights schedules a chain with one stage per device whose
// backward is split (input block i_d, weight block w_d on device d) in the
// order of 1F1B, with each weight block run D−1−d micro-batches after its
// input block and the rest at the end: the weight gradients run long after
// the input gradients they depend on, other micro-batches in between.
func deferredWeights(t testing.TB, p *placement.Placement, n int) *schedule.Schedule {
	t.Helper()
	D := p.Devices
	idx := func(prefix string, d int) int {
		i := p.Index(fmt.Sprintf("%s%d", prefix, d))
		if i < 0 {
			t.Fatalf("%s: no block %s%d", p.Name, prefix, d)
		}
		return i
	}
	orders := make([][]schedule.Ref, D)
	for d := range D {
		f, in, w := idx("f", d), idx("i", d), idx("w", d)
		warm, delay := min(n, D-d-1), D-1-d
		var o []schedule.Ref
		for m := range warm {
			o = append(o, schedule.Ref{Block: f, Micro: m})
		}
		for k := range n {
			if k+warm < n {
				o = append(o, schedule.Ref{Block: f, Micro: k + warm})
			}
			o = append(o, schedule.Ref{Block: in, Micro: k})
			if k >= delay {
				o = append(o, schedule.Ref{Block: w, Micro: k - delay})
			}
		}
		for m := max(0, n-delay); m < n; m++ {
			o = append(o, schedule.Ref{Block: w, Micro: m})
		}
		orders[d] = o
	}
	cs, err := compact.Compact(spec.New(p, n), compact.Keep{Orders: orders})
	if err != nil {
		t.Fatal(err)
	}
	ins := cs.Instances
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n}, Instances: ins}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	return s
}
