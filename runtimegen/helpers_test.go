package runtimegen

import (
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// greedy is a list scheduler for tests: it repeatedly starts the ready
// instance that can start earliest (ties: lower micro-batch, then lower
// block index) as early as its dependencies and devices allow, ignoring
// memory. Each start is then the end of the instance's latest predecessor
// on its devices or in its micro-batch, so the schedule is compact: running
// its per-device orders as fast as possible reproduces it.
func greedy(t testing.TB, p *placement.Placement, n int) *schedule.Schedule {
	t.Helper()
	preds := p.Preds()
	free := make([]int, p.Devices)
	end := map[schedule.Ref]int{}
	var ins []schedule.Instance
	for len(ins) < n*p.K() {
		best, bestStart := schedule.Ref{Block: -1}, 0
		for m := range n {
			for i, b := range p.Blocks {
				r := schedule.Ref{Block: i, Micro: m}
				if _, done := end[r]; done {
					continue
				}
				start, ready := 0, true
				for _, j := range preds[i] {
					e, ok := end[schedule.Ref{Block: j, Micro: m}]
					ready = ready && ok
					start = max(start, e)
				}
				if !ready {
					continue
				}
				for _, d := range b.Devices {
					start = max(start, free[d])
				}
				if best.Block < 0 || start < bestStart {
					best, bestStart = r, start
				}
			}
		}
		b := p.Blocks[best.Block]
		for _, d := range b.Devices {
			free[d] = bestStart + b.Time
		}
		end[best] = bestStart + b.Time
		ins = append(ins, schedule.Instance{Block: best.Block, Micro: best.Micro, Start: bestStart})
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n}, Instances: ins}
	if err := verify.Schedule(s); err != nil {
		t.Fatalf("greedy schedule of %s, N=%d: %v", p.Name, n, err)
	}
	return s
}

// builtin builds a built-in placement or fails the test.
func builtin(t testing.TB, name string, devices int, infer bool) *placement.Placement {
	t.Helper()
	return placementtest.Builtin(t, name, placement.Options{Devices: devices, Inference: infer})
}

// builtinCase is a built-in placement with a label for subtests.
type builtinCase struct {
	label string
	p     *placement.Placement
}

// allBuiltins lists every built-in shape on D devices, training and
// inference.
func allBuiltins(t testing.TB, devices int) []builtinCase {
	t.Helper()
	var cs []builtinCase
	for _, name := range placement.BuiltinNames() {
		for _, infer := range []bool{false, true} {
			p := builtin(t, name, devices, infer)
			cs = append(cs, builtinCase{fmt.Sprintf("%s/D=%d", p.Name, devices), p})
		}
	}
	return cs
}

// generate builds programs or fails the test.
func generate(t testing.TB, s *schedule.Schedule, mode Mode) []*Program {
	t.Helper()
	progs, err := Generate(s, mode)
	if err != nil {
		t.Fatalf("Generate(%s, %s): %v", s.Placement.Name, mode, err)
	}
	return progs
}

// simulate runs programs or fails the test.
func simulate(t testing.TB, progs []*Program, comm int) *Result {
	t.Helper()
	r, err := Simulate(progs, comm)
	if err != nil {
		t.Fatalf("Simulate(%s, %s, comm %d): %v", progs[0].Placement, progs[0].Mode, comm, err)
	}
	return r
}
