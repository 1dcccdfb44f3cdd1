//go:build unix

package measure

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/internal/torchrun"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/profile"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// checkConfig is the gradient check's decoder: float64, small enough to
// run in seconds, 6 layers (embedding, 4 decoder layers, head).
var checkConfig = profile.Config{Layers: 4, Hidden: 8, Heads: 2, FFN: 16, Seq: 4, Batch: 2, Vocab: 16, DType: "float64", Optimizer: "sgd", LR: 0.05}

// The workers built from the decoder's config train it on 2 and on 4
// ranks (gloo, CPU), 1 warm-up and 2 traced iterations, an SGD step
// between them, and every parameter's gradient and every loss of every
// traced iteration equals the single-process run's (float64): 1F1B and
// ZB-H1 (split backward) on 2 ranks; ZB-H1, PipeOffload, offloads and
// recomputes mixed (split and whole backward, non-blocking and blocking
// programs) on 4. Every run's traces load and measure against the
// prediction, and a calibration fitted to them loads.
func TestDecoderWorkersEndToEnd(t *testing.T) {
	testskip.Short(t, "the PyTorch end-to-end test of the decoder's workers")
	if _, err := profile.FindPython(""); err != nil {
		testskip.Skip(t, "skipping the decoder's end-to-end test: "+err.Error())
	}
	builtin := func(d int, split bool) *placement.Placement {
		p, err := placement.Builtin("v-shape", placement.Options{Devices: d, SplitBackward: split})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	must := func(s *schedule.Schedule, err error) *schedule.Schedule {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	type run struct {
		label string
		s     *schedule.Schedule
		mode  runtimegen.Mode
	}
	vsplit := builtin(4, true).WithOffload(1).WithRecompute()
	vwhole := builtin(4, false).WithOffload(1).WithRecompute()
	mixed := []placement.Action{placement.Offload, placement.Recompute, placement.Offload, placement.Recompute}
	launches := [][]run{
		{
			{"2 ranks/zb-h1", must(baseline.ZBH1(spec.New(builtin(2, true), 6))), runtimegen.NonBlocking},
			{"2 ranks/1f1b", must(baseline.OneFOneB(spec.New(builtin(2, false), 6))), runtimegen.NonBlocking},
		},
		{
			{"4 ranks/zb-h1", must(baseline.ZBH1(spec.New(builtin(4, true), 8))), runtimegen.NonBlocking},
			{"4 ranks/pipeoffload", must(baseline.PipeOffload(spec.Spec{Placement: vsplit, MicroBatches: 8, Memory: 2})), runtimegen.NonBlocking},
			{"4 ranks/split offload+recompute", must(baseline.Savings(spec.Spec{Placement: vsplit, MicroBatches: 8, Memory: 2}, mixed)), runtimegen.NonBlocking},
			{"4 ranks/offload+recompute/blocking", must(baseline.Savings(spec.Spec{Placement: vwhole, MicroBatches: 8, Memory: 2}, mixed)), runtimegen.Blocking},
		},
	}
	model := modelFileOf(t, checkConfig, [][3]float64{{0.1, 0.01, 0.1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0.5, 0.5, 0.5}})
	g, err := partition.Parse(model)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, runs := range launches {
		var dirs []string
		for _, r := range runs {
			progs, err := runtimegen.Generate(r.s, r.mode)
			if err != nil {
				t.Fatalf("%s: %v", r.label, err)
			}
			dec, err := runtimegen.NewDecoder(r.s.Placement, checkConfig, nil, nil)
			if err != nil {
				t.Fatalf("%s: %v", r.label, err)
			}
			files, err := runtimegen.DecoderFiles(progs, "gloo", dec)
			if err != nil {
				t.Fatalf("%s: %v", r.label, err)
			}
			dir := t.TempDir()
			if err := runtimegen.WriteFiles(dir, files); err != nil {
				t.Fatal(err)
			}
			dirs = append(dirs, dir)
		}
		args := []string{"--out", "results"}
		for _, d := range dirs[1:] {
			args = append(args, "--programs", d, "--out", filepath.Join(d, "results"))
		}
		env := append(os.Environ(), "MASTER_PORT="+strconv.Itoa(torchrun.Port(t)))
		script := filepath.Join(dirs[0], "launch.sh")
		log := torchrun.Script(t, env, 300*time.Second, script, append([]string{"--warmup", "1", "--iterations", "2", "--trace"}, args...)...)
		if got := strings.Count(log, "3 iterations, "); got != len(runs)*runs[0].s.Placement.Devices {
			t.Errorf("%d ranks reported 3 iterations, want %d:\n%s", got, len(runs)*runs[0].s.Placement.Devices, log)
		}
		check := torchrun.Script(t, env, 300*time.Second, script, append([]string{"check"}, args...)...)
		if got := strings.Count(check, "check: ok: "); got != len(runs) || strings.Contains(check, "FAILED") {
			t.Fatalf("gradients differ from the single-process run's (%d of %d ok):\n%s", got, len(runs), check)
		}
		for k, line := range strings.Split(strings.TrimSpace(check), "\n") {
			t.Logf("%s: %s", runs[k].label, line)
		}
		var measured []*Run
		for k, d := range dirs {
			r, err := Load(d, filepath.Join(d, "results"), g)
			if err != nil {
				t.Fatalf("%s: %v", runs[k].label, err)
			}
			rep, err := Compare(r, 3)
			if err != nil {
				t.Fatalf("%s: %v", runs[k].label, err)
			}
			if len(rep.Iterations) != 2 || !(rep.Measured.Iteration > 0) || !(rep.Predicted.Iteration > 0) || rep.DType != "float64" {
				t.Errorf("%s: %d iterations, measured %v, predicted %v, dtype %s", runs[k].label, len(rep.Iterations),
					rep.Measured.Iteration, rep.Predicted.Iteration, rep.DType)
			}
			for d := range rep.Measured.Idle {
				if !(rep.Measured.Idle[d] >= 0 && rep.Measured.Idle[d] < rep.Measured.Iteration) {
					t.Errorf("%s: device %d idle %v of %v", runs[k].label, d, rep.Measured.Idle[d], rep.Measured.Iteration)
				}
			}
			measured = append(measured, r)
		}
		cal, err := Calibrate(model, measured)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := partition.Parse(cal.Model); err != nil {
			t.Fatal(err)
		}
		t.Logf("calibration of %d runs: %s", len(measured), Text(cal.Calibration))
	}
	t.Logf("total %.1f s", time.Since(start).Seconds())
}
