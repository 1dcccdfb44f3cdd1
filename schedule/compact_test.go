package schedule_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

func TestCompactErrors(t *testing.T) {
	v := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2}) // f0 f1 b1 b0
	m := placementtest.Builtin(t, "m-shape", placement.Options{Devices: 2}) // fs f0 f1 b1 b0 bs
	fs, bs := block(t, m, "fs"), block(t, m, "bs")
	good := oneF1BOrders(t, v, 2)
	tests := []struct {
		name   string
		p      *placement.Placement
		n      int
		orders func() [][]schedule.Ref
		want   string
	}{
		{"wrong device count", v, 2, func() [][]schedule.Ref { return good[:1] }, "compact: 1 device orders for 2 devices"},
		{"out of range", v, 2, func() [][]schedule.Ref {
			o := clone(good)
			o[0][0].Micro = 2
			return o
		}, "compact: device 0, position 0: instance block 0 micro-batch 2 out of range (4 blocks, 2 micro-batches)"},
		{"wrong device", v, 2, func() [][]schedule.Ref {
			o := clone(good)
			o[1] = append(o[1], schedule.Ref{0, 0})
			return o
		}, "compact: device 1, position 4: f0^0 is listed but runs on device 0"},
		{"listed twice", v, 2, func() [][]schedule.Ref {
			o := clone(good)
			o[0] = append(o[0], o[0][0])
			return o
		}, "compact: device 0: f0^0 listed twice"},
		{"missing", v, 2, func() [][]schedule.Ref {
			o := clone(good)
			o[1] = o[1][:3]
			return o
		}, "compact: b1^1 missing from the order of device 1"},
		{"against a dependency", v, 2, func() [][]schedule.Ref {
			// Device 0 runs b0^0 first, but it needs f0^0 (also device 0)
			// and its chain.
			return [][]schedule.Ref{{{3, 0}, {0, 0}, {0, 1}, {3, 1}}, good[1]}
		}, "compact: the orders contradict each other or the dependencies: cycle f0^0 -(dependency)-> f1^0 -(device 1)-> b1^0 -(dependency)-> b0^0 -(device 0)-> f0^0"},
		{"group block ordered differently", m, 2, func() [][]schedule.Ref {
			// Device 0 runs fs^0 before fs^1, device 1 the reverse.
			o := [][]schedule.Ref{{{fs, 0}, {fs, 1}}, {{fs, 1}, {fs, 0}}}
			for d := range 2 {
				for mb := range 2 {
					o[d] = append(o[d], schedule.Ref{block(t, m, "f"+string(rune('0'+d))), mb}, schedule.Ref{block(t, m, "b"+string(rune('0'+d))), mb})
				}
				o[d] = append(o[d], schedule.Ref{bs, 0}, schedule.Ref{bs, 1})
			}
			return o
		}, "cycle fs^0 -(device 0)-> fs^1 -(device 1)-> fs^0"},
		{"group block missing on a member", m, 1, func() [][]schedule.Ref {
			return [][]schedule.Ref{{{fs, 0}, {1, 0}, {4, 0}, {bs, 0}}, {{2, 0}, {3, 0}, {bs, 0}}}
		}, "compact: fs^0 missing from the order of device 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compact.Compact(spec.New(tt.p, tt.n), compact.Keep{Orders: tt.orders()})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Compact error %v, want %q", err, tt.want)
			}
		})
	}
}

func clone(o [][]schedule.Ref) [][]schedule.Ref {
	c := make([][]schedule.Ref, len(o))
	for d := range o {
		c[d] = slices.Clone(o[d])
	}
	return c
}

// Compacting the orders of a valid schedule keeps it valid, keeps every
// device order (so peak memory), and never ends later; compacting again
// changes nothing.
func TestCompactOrdersProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	shorter := 0
	for trial := range 300 {
		name := placement.BuiltinNames()[trial%len(placement.BuiltinNames())]
		p := placementtest.Builtin(t, name, placement.Options{Devices: 2 + 2*rng.IntN(2), BackwardTime: 1 + rng.IntN(3)})
		n := 1 + rng.IntN(5)
		s := randomValid(rng, p, n, rng.IntN(4))
		s.Memory = slices.Max(schedule.Measure(s).PeakMemory)
		if err := verify.Schedule(s); err != nil {
			t.Fatal(err)
		}
		insC, err := compact.Compact(spec.New(p, n), compact.Keep{Orders: schedule.Orders(s)})
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		ins := insC.Instances
		c := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: s.Memory}, Instances: ins}
		if err := verify.Schedule(c); err != nil {
			t.Fatalf("trial %d: compacted schedule invalid: %v", trial, err)
		}
		if schedule.Makespan(c) > schedule.Makespan(s) {
			t.Fatalf("trial %d: compaction lengthened %d to %d", trial, schedule.Makespan(s), schedule.Makespan(c))
		}
		if schedule.Makespan(c) < schedule.Makespan(s) {
			shorter++
		}
		if !slices.EqualFunc(schedule.Orders(c), schedule.Orders(s), slices.Equal) {
			t.Fatalf("trial %d: compaction changed a device order", trial)
		}
		if !slices.Equal(schedule.Measure(c).PeakMemory, schedule.Measure(s).PeakMemory) {
			t.Fatalf("trial %d: compaction changed peak memory", trial)
		}
		again, err := compact.Compact(spec.New(p, n), compact.Keep{Orders: schedule.Orders(c)})
		if err != nil || !slices.Equal(again.Instances, ins) {
			t.Fatalf("trial %d: compaction is not idempotent (%v)", trial, err)
		}
	}
	// Random delays leave room: compaction must have had work to do.
	if shorter < 50 {
		t.Errorf("only %d of 300 schedules got shorter", shorter)
	}
}

// Every instance starts as early as its device order and dependencies
// allow: it starts at 0 or right at the end of a predecessor in its device
// orders or dependencies.
func TestCompactTight(t *testing.T) {
	tests := []struct {
		name      string
		transfers bool
	}{
		{"no transfers", false},
		// Transfers of 1..3 on the cross-device dependencies: a dependency
		// edge is tight at the producer's start plus its Delay.
		{"transfers", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := placementtest.Builtin(t, "k-shape", placement.Options{Devices: 4})
			if tc.transfers {
				setTransfers(p, func(n int) int { return 1 + n%3 })
			}
			n := 4
			rng := rand.New(rand.NewPCG(7, 8))
			s := randomValid(rng, p, n, 3)
			insC, err := compact.Compact(spec.New(p, n), compact.Keep{Orders: schedule.Orders(s)})
			if err != nil {
				t.Fatal(err)
			}
			ins := insC.Instances
			c := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n}, Instances: ins}
			if err := verify.Schedule(c); err != nil {
				t.Fatalf("compacted schedule: %v", err)
			}
			start := map[schedule.Ref]int{}
			for _, in := range ins {
				start[in.Ref()] = in.Start
			}
			end := func(r schedule.Ref) int { return start[r] + p.Blocks[r.Block].Time }
			preds := p.PredDeps()
			for _, order := range schedule.Orders(c) {
				for x, r := range order {
					if start[r] == 0 {
						continue
					}
					tight := x > 0 && end(order[x-1]) == start[r]
					for _, d := range preds[r.Block] {
						tight = tight || start[schedule.Ref{d.From, r.Micro}]+p.Delay(d) == start[r]
					}
					if !tight {
						// A group block may be held by another member device.
						for _, o := range schedule.Orders(c) {
							if i := slices.Index(o, r); i > 0 && end(o[i-1]) == start[r] {
								tight = true
							}
						}
					}
					if !tight {
						t.Errorf("%s starts at %d with slack", schedule.RefName(c, r), start[r])
					}
				}
			}
		})
	}
}

func BenchmarkCompact(b *testing.B) {
	p := placementtest.Builtin(b, "v-shape", placement.Options{Devices: 10})
	orders := oneF1BOrders(b, p, 1024)
	for b.Loop() {
		if _, err := compact.Compact(spec.New(p, 1024), compact.Keep{Orders: orders}); err != nil {
			b.Fatal(err)
		}
	}
}
