package construct

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Every rule, with and without a window and a budget, gives a valid
// schedule (finish verifies it) that respects the budget, on every
// built-in shape; and the same input gives the same schedule.
func TestListEveryShapeAndRule(t *testing.T) {
	for _, name := range placement.BuiltinNames() {
		for _, d := range []int{4, 8} {
			p := placementtest.Builtin(t, name, placement.Options{Devices: d})
			for _, rule := range Rules() {
				for _, c := range []ListOptions{{Rule: rule}, {Rule: rule, Window: d, Memory: 2 * d}, {Rule: rule, Window: 2, Memory: d}} {
					s, err := List(p, 3*d, c)
					if err != nil {
						t.Errorf("%s %d devices %+v: %v", name, d, c, err)
						continue
					}
					for dev, peak := range schedule.Measure(s).PeakMemory {
						if c.Memory > 0 && peak > c.Memory {
							t.Errorf("%s %+v: device %d peaks at %d", name, c, dev, peak)
						}
					}
					again, _ := List(p, 3*d, c)
					if fmt.Sprint(again.Instances) != fmt.Sprint(s.Instances) {
						t.Errorf("%s %+v: two runs differ", name, c)
					}
				}
			}
		}
	}
}

// A list schedule that cannot go on under the budget stops with an error
// naming the block that waits, never with a schedule over the budget. On
// the x-shape with memory 1 the oldest-first rule fills the devices with
// forwards whose backwards cannot follow (a schedule exists — one chain
// at a time — which the search finds: the constructions are a start, not
// the whole search).
func TestListStuckNamesTheBlock(t *testing.T) {
	p := placementtest.Builtin(t, "x-shape", placement.Options{})
	_, err := List(p, 4, ListOptions{Rule: OldestFirst, Memory: 1})
	if err == nil || !strings.Contains(err.Error(), "waits for memory") {
		t.Fatalf("memory 1 on x-shape: %v, want the list schedule to say which block waits", err)
	}
}

// 1F1B is optimal on the V-shape; the constructions reach its makespan,
// which meets the lower bound, at any scale, from the modulo schedule
// alone: one block per slot of a period equal to the device load.
// Reference: docs/never-lose.md, v-shape on 16, 32 and 64 devices.
func TestPortfolioVShapeMeets1F1B(t *testing.T) {
	for _, d := range []int{4, 16, 64} {
		p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: d})
		n := 4 * d
		cands, err := Portfolio(context.Background(), spec.Spec{Placement: p, MicroBatches: n, Memory: d})
		if err != nil || len(cands) == 0 {
			t.Fatalf("%d devices: %v", d, err)
		}
		ref, err := baseline.OneFOneB(spec.Spec{Placement: p, MicroBatches: n, Memory: d})
		if err != nil {
			t.Fatal(err)
		}
		best := cands[0]
		if best.Makespan != schedule.Makespan(ref) || best.Makespan != rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: n, Memory: d}).Makespan {
			t.Errorf("%d devices: makespan %d (%s), 1F1B %d, lower bound %d", d, best.Makespan, best.Name, schedule.Makespan(ref), rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: n, Memory: d}).Makespan)
		}
		if best.Periodic == nil || best.Periodic.Period != p.MaxLoad() {
			t.Errorf("%d devices: best %s, want the modulo schedule at the load bound", d, best.Name)
		}
		if best.Schedule.Repetend == nil {
			t.Errorf("%d devices: the modulo schedule lost its repetend", d)
		}
	}
}

// The modulo schedule is a repetend: offsets never grow along a
// dependency (property 4.2, Tessel §IV-B), they span 0..N_R−1, and the
// unrolled schedule repeats the repetend exactly (the verifier checks the
// metadata).
func TestModuloIsARepetend(t *testing.T) {
	for _, name := range placement.BuiltinNames() {
		for _, d := range []int{4, 8} {
			p := placementtest.Builtin(t, name, placement.Options{Devices: d})
			for _, mem := range []int{0, 2 * d} {
				ps, err := Modulo(context.Background(), p, ModuloOptions{Memory: mem, MicroBatches: 64})
				if err != nil {
					t.Errorf("%s %d memory %d: %v", name, d, mem, err)
					continue
				}
				offs, nr := ps.Offsets()
				for _, dep := range p.Deps {
					if offs[dep.From] < offs[dep.To] {
						t.Errorf("%s: offset of %s %d < offset of %s %d", name, p.Blocks[dep.From].ID, offs[dep.From], p.Blocks[dep.To].ID, offs[dep.To])
					}
				}
				lo, hi := nr, -1
				for _, o := range offs {
					lo, hi = min(lo, o), max(hi, o)
				}
				if lo != 0 || hi != nr-1 {
					t.Errorf("%s: offsets span %d..%d, N_R %d", name, lo, hi, nr)
				}
				n := max(nr, 16)
				s, err := ps.Schedule(spec.Spec{Placement: p, MicroBatches: n, Memory: mem})
				if err != nil {
					t.Errorf("%s %d memory %d: %v", name, d, mem, err)
					continue
				}
				if ps.Period < p.MaxLoad() {
					t.Errorf("%s: period %d below the load %d", name, ps.Period, p.MaxLoad())
				}
				if s.Repetend == nil {
					continue // compaction moved the iterations; the schedule is still verified
				}
				if s.Repetend.Period != ps.Period || s.Repetend.NR != nr {
					t.Errorf("%s: repetend %+v, want period %d N_R %d", name, s.Repetend, ps.Period, nr)
				}
			}
		}
	}
}

// Zero-bubble placements (the backward split into input and weight
// gradients, F = I = W = 1, memory +1/0/−1, budget 2·D): with one stage per
// device, in loop order (two stages per device, interleaved) and in V
// order (ZB-V), the constructions reach the makespan's lower bound at every
// N ≥ 2·D, in milliseconds — at or below what hand-written zero-bubble
// schedules reach: N·load + 2(D − 1) with one stage per device, N·load +
// (D − 1) with two. Reference: Qi et al., Zero Bubble Pipeline
// Parallelism (ICLR 2024), ZB-H1 and ZB-V.
func TestPortfolioZeroBubbleReachesTheBound(t *testing.T) {
	for _, order := range []string{"one", "loop", "v"} {
		for _, d := range []int{2, 4, 8} {
			for _, n := range []int{8, 16, 32} {
				if n < 2*d {
					continue
				}
				p := zeroBubbleChain(t, d, order)
				cands, err := Portfolio(context.Background(), spec.Spec{Placement: p, MicroBatches: n, Memory: 2 * d})
				if err != nil || len(cands) == 0 {
					t.Fatalf("%s %d devices: %v", order, d, err)
				}
				hand := n*p.MaxLoad() + d - 1
				if order == "one" {
					hand = n*p.MaxLoad() + 2*(d-1)
				}
				lb := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: n, Memory: 2 * d}).Makespan
				if got := cands[0].Makespan; got != lb || got > hand {
					t.Errorf("%s, %d devices, N %d: makespan %d (%s), lower bound %d, hand-written %d", order, d, n, got, cands[0].Name, lb, hand)
				}
			}
		}
	}
}

// zeroBubbleChain is the built-in v-shape with its backward split:
// order "one" one stage per device, "loop" and "v" two chunks.
func zeroBubbleChain(t testing.TB, d int, order string) *placement.Placement {
	opt := placement.Options{Devices: d, SplitBackward: true}
	if order != "one" {
		opt.Chunks, opt.Order = 2, placement.Order(order)
	}
	return placementtest.Builtin(t, "v-shape", opt)
}

func BenchmarkPortfolio(b *testing.B) {
	for _, c := range []struct {
		name string
		d    int
	}{{"v-shape", 64}, {"m-shape", 16}, {"nn-shape", 16}} {
		p := placementtest.Builtin(b, c.name, placement.Options{Devices: c.d})
		b.Run(fmt.Sprintf("%s-%dd", c.name, c.d), func(b *testing.B) {
			for b.Loop() {
				cands, err := Portfolio(context.Background(), spec.Spec{Placement: p, MicroBatches: 4 * c.d, Memory: c.d})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(cands[0].Makespan), "makespan")
				b.ReportMetric(float64(len(cands)), "candidates")
			}
		})
	}
}

// schedule.FindRepetend names the steady state of schedules built without
// one: on every list schedule of the built-ins the repetend it finds
// passes the verifier, and on an unrolled modulo schedule it finds the
// modulo period over all its iterations.
func TestFindRepetend(t *testing.T) {
	found := 0
	for _, name := range placement.BuiltinNames() {
		p := placementtest.Builtin(t, name, placement.Options{Devices: 4})
		for _, rule := range Rules() {
			s, err := List(p, 24, ListOptions{Rule: rule, Memory: 8})
			if err != nil {
				continue
			}
			rp := schedule.FindRepetend(s)
			if rp == nil {
				continue
			}
			found++
			s.Repetend = rp
			if err := verify.Schedule(s); err != nil {
				t.Errorf("%s %s: found %+v: %v", name, rule, rp, err)
			}
		}
	}
	if found == 0 {
		t.Error("no list schedule has a steady state: the test checks nothing")
	}
	p := placementtest.Builtin(t, "m-shape", placement.Options{})
	ps, err := Modulo(context.Background(), p, ModuloOptions{Memory: 6})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ps.Schedule(spec.Spec{Placement: p, MicroBatches: 32, Memory: 6})
	if err != nil {
		t.Fatal(err)
	}
	s.Repetend = nil
	rp := schedule.FindRepetend(s)
	if rp == nil || rp.Period != ps.Period {
		t.Fatalf("modulo period %d, found %+v", ps.Period, rp)
	}
	if _, nr := ps.Offsets(); rp.Iterations < 32-nr+1-1 {
		t.Errorf("found %d iterations, the modulo schedule has %d", rp.Iterations, 32-nr+1)
	}
}

// A restart with perturbed priorities (Restart) is a verified schedule
// under the budget, the same for the same index on every run, and the
// indices do not all give the same schedule.
func TestRestartDeterministic(t *testing.T) {
	p, err := placement.Builtin("nn-shape", placement.Options{Devices: 8})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for r := 1; r <= 4; r++ {
		a, err := Restart(context.Background(), spec.Spec{Placement: p, MicroBatches: 16, Memory: 8}, r)
		if err != nil || a == nil {
			t.Fatalf("restart %d: %v %v", r, a, err)
		}
		if err := verify.Schedule(a.Schedule); err != nil {
			t.Fatalf("restart %d: %v", r, err)
		}
		b, _ := Restart(context.Background(), spec.Spec{Placement: p, MicroBatches: 16, Memory: 8}, r)
		if fmt.Sprint(a.Schedule.Instances) != fmt.Sprint(b.Schedule.Instances) || a.Name != b.Name {
			t.Errorf("restart %d: two runs differ", r)
		}
		seen[fmt.Sprint(a.Schedule.Instances)] = true
	}
	if len(seen) < 2 {
		t.Error("every restart gave the same schedule: the priorities are not perturbed")
	}
}
