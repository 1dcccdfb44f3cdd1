package torchcsv_test

// Export and import against every producer of schedules: the baselines
// and the Tessel search. An external test package, so that torchcsv
// itself imports only placement and schedule.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/torchcsv"
)

// chains are the exportable placements this test can build: the built-ins
// that Chain accepts (v-shape on any device count), and the split
// backward, V and loop placements of testdata.
func chains(t *testing.T) []*placement.Placement {
	t.Helper()
	var ps []*placement.Placement
	for _, name := range placement.BuiltinNames() {
		for _, d := range []int{2, 4, 8} {
			// Every built-in, with its inference variant, its backward
			// split, and cut into chunks in loop and V order.
			for _, opt := range []placement.Options{
				{Devices: d}, {Devices: d, Inference: true}, {Devices: d, SplitBackward: true},
				{Devices: d, Chunks: 2, Order: placement.Loop}, {Devices: d, Chunks: 2, Order: placement.V},
				{Devices: d, Chunks: 2, Order: placement.Loop, SplitBackward: true}, {Devices: d, Chunks: 2, Order: placement.V, SplitBackward: true},
			} {
				p, err := placement.Builtin(name, opt)
				if err != nil {
					continue // not a valid device count or option for this shape
				}
				if _, err := torchcsv.Chain(p); err == nil {
					ps = append(ps, p)
				} else if strings.Contains(err.Error(), "\n") {
					t.Errorf("%s: refusal of more than one line: %q", p.Name, err)
				}
			}
		}
	}
	for _, f := range []string{"split-v-shape.json", "v-chunks.json", "loop-chunks.json"} {
		p, err := placement.Load(filepath.Join("..", "testdata", "placements", f))
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}

// For every exportable placement and every schedule of it (each baseline
// that applies, the Tessel search): the exported CSV passes PyTorch's
// rules, and importing it gives a schedule whose every device runs the
// same actions in the same order.
func TestExportImportRoundTrip(t *testing.T) {
	ps := chains(t)
	names := map[string]bool{}
	for _, p := range ps {
		names[p.Name] = true
	}
	for _, want := range []string{"v-shape", "split-v-shape", "v-chunks", "loop-chunks", "v-shape-split", "v-shape-loop2-split", "v-shape-v2-split"} {
		if !names[want] {
			t.Errorf("%s is not exportable", want)
		}
	}
	for _, p := range ps {
		type labelled struct {
			label string
			s     *schedule.Schedule
		}
		var scheds []labelled
		for _, m := range baseline.All() {
			s, err := m.Build(spec.New(p, 8))
			if errors.Is(err, baseline.ErrNotApplicable) {
				continue
			}
			if err != nil && !errors.Is(err, baseline.ErrOverBudget) {
				t.Fatalf("%s %s: %v", p.Name, m.Name, err)
			}
			scheds = append(scheds, labelled{m.Name, s})
		}
		res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 12, Memory: 2 * p.Devices}, search.Options{})
		if err != nil {
			t.Fatalf("%s: search: %v", p.Name, err)
		}
		scheds = append(scheds, labelled{"tessel", res.Schedule})
		for _, ls := range scheds {
			label := fmt.Sprintf("%s (%d devices)/%s", p.Name, p.Devices, ls.label)
			roundTrip(t, label, ls.s)
		}
	}
}

func roundTrip(t *testing.T, label string, s *schedule.Schedule) {
	t.Helper()
	tab, err := torchcsv.Export(s)
	if err != nil {
		t.Fatalf("%s: export: %v", label, err)
	}
	if _, err := torchcsv.Validate(tab); err != nil {
		t.Fatalf("%s: exported CSV fails PyTorch's rules: %v", label, err)
	}
	data := tab.Marshal()
	back, err := torchcsv.Parse(data)
	if err != nil {
		t.Fatalf("%s: parse of the export: %v", label, err)
	}
	imp, err := torchcsv.Import(back, torchcsv.DefaultImportOptions())
	if err != nil {
		t.Fatalf("%s: import of the export: %v\n%s", label, err, data)
	}
	want, got := deviceActions(t, s), deviceActions(t, imp)
	if !slices.EqualFunc(want, got, slices.Equal) {
		t.Errorf("%s: per-device orders differ after the round trip:\nwant %v\ngot  %v", label, want, got)
	}
	again, err := torchcsv.Export(imp)
	if err != nil {
		t.Fatalf("%s: export of the import: %v", label, err)
	}
	if string(again.Marshal()) != string(data) {
		t.Errorf("%s: export(import(export(s))) differs from export(s)", label)
	}
	// The compute_comms form: PyTorch's lowering, its checks (sends and
	// receives, the deadlock simulation), and the same orders read back.
	ct, err := torchcsv.ExportComms(s)
	if err != nil {
		t.Fatalf("%s: compute_comms export: %v", label, err)
	}
	if _, err := torchcsv.ValidateComms(ct); err != nil {
		t.Fatalf("%s: compute_comms export fails its checks: %v", label, err)
	}
	rd, err := torchcsv.Read(ct.Marshal(), torchcsv.ReadOptions{})
	if err != nil {
		t.Fatalf("%s: read of the compute_comms export: %v\n%s", label, err, ct.Marshal())
	}
	if rd.Format != torchcsv.FormatComputeComms && hasComms(ct) {
		t.Errorf("%s: read as %s", label, rd.Format)
	}
	imp2, err := torchcsv.Import(rd.Table, torchcsv.DefaultImportOptions())
	if err != nil {
		t.Fatalf("%s: import of the compute_comms export: %v", label, err)
	}
	if got := deviceActions(t, imp2); !slices.EqualFunc(want, got, slices.Equal) {
		t.Errorf("%s: per-device orders differ after the compute_comms round trip:\nwant %v\ngot  %v", label, want, got)
	}
	// Receives deferred (PyTorch's _defer_recv_ops): the same checks, the
	// same orders; on links that overlap transfers freely the two forms
	// run alike, and each serial run ends no earlier than the free one.
	dt, _, err := torchcsv.ExportCommsWith(s, torchcsv.CommsOptions{Recv: torchcsv.RecvDeferred})
	if err != nil {
		t.Fatalf("%s: compute_comms export with deferred receives: %v", label, err)
	}
	rd, err = torchcsv.Read(dt.Marshal(), torchcsv.ReadOptions{})
	if err != nil {
		t.Fatalf("%s: read of the deferred export: %v\n%s", label, err, dt.Marshal())
	}
	imp3, err := torchcsv.Import(rd.Table, torchcsv.DefaultImportOptions())
	if err != nil {
		t.Fatalf("%s: import of the deferred export: %v", label, err)
	}
	if got := deviceActions(t, imp3); !slices.EqualFunc(want, got, slices.Equal) {
		t.Errorf("%s: per-device orders differ after the deferred round trip", label)
	}
	c, err := torchcsv.CompareRecv(s, 1)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	free, err := torchcsv.SimulateComms(s, dt, torchcsv.CommsRunOptions{CommTime: 1})
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	if free.Makespan != c.FreeLinks.Makespan || c.Early.Makespan < free.Makespan || c.Deferred.Makespan < free.Makespan {
		t.Errorf("%s: makespans free %d/%d, serial early %d, deferred %d", label, free.Makespan, c.FreeLinks.Makespan, c.Early.Makespan, c.Deferred.Makespan)
	}
}

func hasComms(ct *torchcsv.CommsTable) bool {
	for _, row := range ct.Rows {
		for _, c := range row {
			if c.IsComm() {
				return true
			}
		}
	}
	return false
}

// deviceActions is every device's order of instances, each named by its
// stage (position in the chain of forwards), kind and micro-batch.
func deviceActions(t *testing.T, s *schedule.Schedule) [][]string {
	t.Helper()
	stages, err := torchcsv.Chain(s.Placement)
	if err != nil {
		t.Fatal(err)
	}
	stage := make([]int, s.Placement.K())
	for i, st := range stages {
		for _, b := range []int{st.Forward, st.Backward, st.Input, st.Weight} {
			if b >= 0 {
				stage[b] = i
			}
		}
	}
	var out [][]string
	for _, order := range schedule.Orders(s) {
		row := []string{}
		for _, r := range order {
			row = append(row, fmt.Sprintf("%d/%s/%d", stage[r.Block], s.Placement.Blocks[r.Block].Kind, r.Micro))
		}
		out = append(out, row)
	}
	return out
}

// What is no chain of stages is refused with one line saying why.
func TestChainRefuses(t *testing.T) {
	builtin := func(name string, infer bool) *placement.Placement {
		p, err := placement.Builtin(name, placement.Options{Devices: 4, Inference: infer})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	blk := func(id string, k placement.Kind, dev int) placement.Block {
		return placement.Block{ID: id, Kind: k, Devices: []int{dev}, Time: 1}
	}
	for _, tc := range []struct {
		label string
		p     *placement.Placement
		err   string
	}{
		{"m-shape", builtin("m-shape", false), "runs on devices [0 1 2 3], a group: PyTorch's pipelining runs each stage on one rank"},
		{"nn-shape", builtin("nn-shape", false), "a group"},
		{"k-shape", builtin("k-shape", false), "a group"},
		{"join", &placement.Placement{Devices: 3, Blocks: []placement.Block{
			blk("f0", placement.Forward, 0), blk("f1", placement.Forward, 1), blk("f2", placement.Forward, 2)},
			Deps: []placement.Dep{{From: 0, To: 2}, {From: 1, To: 2}}}, `forward "f2" has two forward inputs, a join`},
		{"x-shape", builtin("x-shape", false), "the forward blocks form 2 chains"},
		{"v-shape inference", builtin("v-shape", true), "has no backward: PyTorch's pipelining schedules train every stage"},
		{"branch", &placement.Placement{Devices: 3, Blocks: []placement.Block{
			blk("f0", placement.Forward, 0), blk("f1", placement.Forward, 1), blk("f2", placement.Forward, 2)},
			Deps: []placement.Dep{{From: 0, To: 1}, {From: 0, To: 2}}}, `forward "f0" feeds two forward blocks ("f1" and "f2"), a branch`},
		{"half split", &placement.Placement{Devices: 1, Blocks: []placement.Block{
			blk("f0", placement.Forward, 0), blk("i0", placement.Input, 0)},
			Deps: []placement.Dep{{From: 0, To: 1}}}, "only half of a split backward"},
		{"extra dependency", &placement.Placement{Devices: 2, Blocks: []placement.Block{
			blk("f0", placement.Forward, 0), blk("f1", placement.Forward, 1), blk("b1", placement.Backward, 1), blk("b0", placement.Backward, 0)},
			Deps: []placement.Dep{{From: 0, To: 1}, {From: 1, To: 2}, {From: 2, To: 3}, {From: 0, To: 2}}},
			"dependency f0 → b1 is not one of a chain of stages"},
		{"missing gradient dependency", &placement.Placement{Devices: 2, Blocks: []placement.Block{
			blk("f0", placement.Forward, 0), blk("f1", placement.Forward, 1), blk("b1", placement.Backward, 1), blk("b0", placement.Backward, 0)},
			Deps: []placement.Dep{{From: 0, To: 1}, {From: 1, To: 2}, {From: 0, To: 3}}},
			"no dependency b1 → b0"},
	} {
		_, err := torchcsv.Chain(tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.label, err, tc.err)
		}
	}
}

// A schedule that offloads or recomputes activations is refused in one
// line: PyTorch's CSV has no action for either (its actions are F, B, I,
// W and communication).
func TestExportRefusesOffloadAndRecompute(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithOffload(1).WithRecompute()
	po, err := baseline.PipeOffload(spec.Spec{Placement: p, MicroBatches: 8, Memory: 2})
	if err != nil {
		t.Fatal(err)
	}
	re, err := baseline.OneFOneBRecompute(spec.Spec{Placement: p, MicroBatches: 8, Memory: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*schedule.Schedule{po, re} {
		_, err := torchcsv.Export(s)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "PyTorch's CSV has no action for either") {
			t.Errorf("Export: %v, want one line refusing offload and recompute", err)
		}
	}
	// The same placement without decisions exports.
	plain, err := baseline.OneFOneB(spec.New(p, 8))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := torchcsv.Export(plain); err != nil {
		t.Errorf("1F1B: %v", err)
	}
}
