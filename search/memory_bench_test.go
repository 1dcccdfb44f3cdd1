package search

import (
	"context"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// memoryCase is one search of the offload and recompute cases (docs/memory.md).
type memoryCase struct {
	name               string
	opt                placement.Options
	memory, n          int
	offload, recompute bool
	move               int // offload time; 0: 1
}

func memoryCases() []memoryCase {
	v2 := placement.Options{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true}
	v := placement.Options{Devices: 4, SplitBackward: true}
	v8 := placement.Options{Devices: 8, SplitBackward: true}
	out := []memoryCase{
		{"v2-m1-offload", v2, 1, 16, true, false, 1},
		{"v2-m1-recompute", v2, 1, 16, false, true, 1},
		{"v-m2-offload", v, 2, 16, true, false, 1},
		{"v-m2-recompute", v, 2, 16, false, true, 1},
		{"v-m2-keep", v, 2, 16, false, false, 1},
	}
	// 8 devices, memory from 2 to 2·devices activations, N = 16 and 64.
	for _, n := range []int{16, 64} {
		for m := 2; m <= 16; m += 2 {
			out = append(out, memoryCase{fmt.Sprintf("v8-m%d-n%d-offload", m, n), v8, m, n, true, false, 1})
			if m == 2 {
				out = append(out, memoryCase{fmt.Sprintf("v8-m3-n%d-offload", n), v8, 3, n, true, false, 1})
			}
		}
	}
	// OptPipe's setting (docs/memory-experiment.md): the V placement of
	// 8 devices in 16 chunks, every move 2 (PCIe slower than the
	// compute), offload only.
	v82 := placement.Options{Devices: 8, Chunks: 2, Order: placement.V, SplitBackward: true}
	for _, n := range []int{16, 64} {
		for _, m := range []int{2, 3, 4, 6, 8, 12, 16} {
			out = append(out, memoryCase{fmt.Sprintf("v8x2-m%d-n%d-offload", m, n), v82, m, n, true, false, 2})
		}
	}
	return out
}

// BenchmarkMemorySearch times the whole search (tessel search) of every
// case, and reports its makespan and how many activations it offloaded
// and recomputed.
func BenchmarkMemorySearch(b *testing.B) {
	for _, c := range memoryCases() {
		b.Run(c.name, func(b *testing.B) {
			p, err := placement.Builtin("v-shape", c.opt)
			if err != nil {
				b.Fatal(err)
			}
			if c.offload {
				p = p.WithOffload(max(c.move, 1))
			}
			if c.recompute {
				p = p.WithRecompute()
			}
			sp := spec.Spec{Placement: p, MicroBatches: c.n, Memory: c.memory, Allowed: spec.Decisions{Offload: c.offload, Recompute: c.recompute}}
			opt := Options{DecidedWindows: 4}
			for b.Loop() {
				res, err := Run(context.Background(), sp, opt)
				if err != nil {
					b.Fatal(err)
				}
				if err := verify.Schedule(res.Schedule); err != nil {
					b.Fatal(err)
				}
				off, rec := res.Schedule.Count()
				b.ReportMetric(float64(res.Makespan()), "makespan")
				b.ReportMetric(float64(off), "offloaded")
				b.ReportMetric(float64(rec), "recomputed")
			}
		})
	}
}

// TestMemorySearchDeterministic: the same input gives the same schedule
// file, byte for byte.
func TestMemorySearchDeterministic(t *testing.T) {
	c := memoryCases()[0]
	p, err := placement.Builtin("v-shape", c.opt)
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithOffload(1).WithRecompute()
	var files []string
	for range 2 {
		res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: c.n, Memory: c.memory, Allowed: spec.Decisions{Offload: true, Recompute: true}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fmt.Sprint(res.Schedule.Instances, res.Schedule.Decisions))
	}
	if files[0] != files[1] {
		t.Errorf("two searches differ")
	}
}

// TestDecidedWindowsImproveSearch: with --recompute on the split v-shape of
// 4 devices at memory 2, the windows that decide (refine.LNS with
// Decisions) shorten the best construction or baseline, 62, to 60
// (Qi et al., "OptPipe", Appendix C, solved per window).
func TestDecidedWindowsImproveSearch(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithRecompute()
	res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 16, Memory: 2, Allowed: spec.Decisions{Recompute: true}}, Options{DecidedWindows: 4})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(res.Schedule); err != nil {
		t.Fatal(err)
	}
	best := 0
	for _, c := range res.Contenders {
		if best == 0 || c.Makespan < best {
			best = c.Makespan
		}
	}
	if !res.Source.Windows || res.Refined.Improved == 0 || res.Makespan() >= best {
		t.Errorf("makespan %d (windows %v, %d steps improved), want below the best candidate's %d", res.Makespan(), res.Source.Windows, res.Refined.Improved, best)
	}
	if _, rec := res.Schedule.Count(); rec == 0 {
		t.Errorf("nothing recomputed")
	}
}
