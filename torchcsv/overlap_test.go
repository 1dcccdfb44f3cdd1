package torchcsv_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/torchcsv"
	"github.com/tessel-pp/tessel/verify"
)

// TestDualPipeVOverlap is the acceptance test of overlapped forward and
// backward (DeepSeek-V3 technical report, §3.2.1: DualPipe overlaps the
// forward of one micro-batch with the backward of another; its V form,
// DualPipeV, runs the same steady phase): at a given overlap time, the
// Tessel search is no worse than DualPipeV's own order with its pairs
// overlapped, under the same times and memory; both are verified, and
// their exports carry OVERLAP_F_B in both of PyTorch's formats and read
// back as the same pairs.
func TestDualPipeVOverlap(t *testing.T) {
	for _, c := range []struct {
		devices, n  int
		f, i, w     int
		overlapTime string
	}{
		{4, 8, 1, 1, 1, "2"},
		{4, 16, 2, 2, 2, "0.7x"},
		{4, 12, 1, 2, 1, "3"},
	} {
		p, err := placement.Builtin("v-shape", placement.Options{Devices: c.devices, ForwardTime: c.f, SplitBackward: true, InputTime: c.i, WeightTime: c.w,
			Chunks: 2, Order: placement.V})
		if err != nil {
			t.Fatal(err)
		}
		if p.Overlap, err = placement.ParseOverlapTime(c.overlapTime); err != nil {
			t.Fatal(err)
		}
		plain, err := baseline.DualPipeV(spec.New(p, c.n))
		if err != nil {
			t.Fatal(err)
		}
		dpv, err := baseline.DualPipeVOverlap(spec.New(p, c.n))
		if err != nil {
			t.Fatal(err)
		}
		memory := schedule.Measure(dpv).PeakMemory[0]
		for _, m := range schedule.Measure(dpv).PeakMemory {
			memory = max(memory, m)
		}
		// The same schedule under its own peak as the budget.
		if dpv, err = baseline.DualPipeVOverlap(spec.Spec{Placement: p, MicroBatches: c.n, Memory: memory}); err != nil {
			t.Fatal(err)
		}
		name := p.Name + " --overlap-time " + c.overlapTime
		if len(dpv.Pairs) == 0 || schedule.Makespan(dpv) >= schedule.Makespan(plain) {
			t.Errorf("%s: DualPipeV with overlap: %d pairs, makespan %d; without: %d", name, len(dpv.Pairs), schedule.Makespan(dpv), schedule.Makespan(plain))
		}
		res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: c.n, Memory: memory}, search.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := verify.Schedule(res.Schedule); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got, want := schedule.Makespan(res.Schedule), schedule.Makespan(dpv); got > want {
			t.Errorf("%s: search makespan %d > DualPipeV with overlap %d", name, got, want)
		}
		if b := res.Bounds.Makespan; b > schedule.Makespan(dpv) {
			t.Errorf("%s: lower bound %d above DualPipeV with overlap %d", name, b, schedule.Makespan(dpv))
		}
		for _, s := range []*schedule.Schedule{dpv, res.Schedule} {
			if len(s.Pairs) == 0 {
				continue
			}
			tb, err := torchcsv.Export(s)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			ct, err := torchcsv.ExportComms(s)
			if err != nil {
				t.Fatalf("%s: comms: %v", name, err)
			}
			for _, data := range [][]byte{tb.Marshal(), ct.Marshal()} {
				if got := strings.Count(string(data), "OVERLAP_F_B"); got != len(s.Pairs) {
					t.Errorf("%s: %d OVERLAP_F_B in the export, %d pairs", name, got, len(s.Pairs))
				}
				rd, err := torchcsv.Read(data, torchcsv.ReadOptions{KeepOverlaps: true})
				if err != nil {
					t.Fatalf("%s: read back: %v", name, err)
				}
				opt := torchcsv.DefaultImportOptions()
				opt.ForwardTime, opt.InputTime, opt.WeightTime, opt.BackwardTime = c.f, c.i, c.w, c.i+c.w
				opt.Overlap = p.Overlap
				back, err := torchcsv.Import(rd.Table, opt)
				if err != nil {
					t.Fatalf("%s: import: %v", name, err)
				}
				if len(back.Pairs) != len(s.Pairs) || schedule.Makespan(back) != schedule.Makespan(s) {
					t.Errorf("%s: read back %d pairs, makespan %d; exported %d, %d", name, len(back.Pairs), schedule.Makespan(back), len(s.Pairs), schedule.Makespan(s))
				}
			}
		}
	}
}
