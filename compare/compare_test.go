package compare

import (
	"context"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
)

// Run on k-shape (the paper's Flava, Table II): 1F1B, Chimera-direct and
// 1F1B+ have no adaptation to it (×; the paper's view, each on a
// placement of its own, is TableII), GPipe keeps every forward in flight
// and breaks the budget, Tessel finds a repetend without bubbles, and
// every schedule shown passed the verifier.
func TestRun(t *testing.T) {
	p, err := placement.Builtin("k-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := Run(context.Background(), p, Options{MicroBatches: 8, Memory: 6})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		placement, status string
		budget            bool
	}{
		"GPipe":          {"k-shape", StatusOK, false},
		"1F1B":           {"k-shape", StatusNotApplicable, false},
		"Chimera-direct": {"k-shape", StatusNotApplicable, false},
		"1F1B+":          {"k-shape", StatusNotApplicable, false},
		"Tessel":         {"k-shape", StatusOK, true},
	}
	for _, r := range cmp.Rows {
		w, ok := want[r.Method]
		if !ok {
			continue
		}
		delete(want, r.Method)
		if r.Placement != w.placement || r.Status != w.status {
			t.Errorf("%s: on %s, %s; want %s, %s", r.Method, r.Placement, r.Status, w.placement, w.status)
		}
		if r.Status == StatusOK && (*r.BudgetRespected != w.budget || r.Schedule == nil) {
			t.Errorf("%s: budget respected %v, schedule %v", r.Method, *r.BudgetRespected, r.Schedule != nil)
		}
		if r.Method == "Tessel" && (r.RepetendBubbleRate == nil || *r.RepetendBubbleRate != 0) {
			t.Errorf("Tessel: repetend bubble rate %v, want 0", r.RepetendBubbleRate)
		}
	}
	if len(want) > 0 {
		t.Errorf("rows missing: %v", want)
	}
}

// Every row of a comparison runs on the placement compared: its stages,
// times and memories (the schedule's placement is that placement), on
// built-ins whose baselines the paper ran elsewhere (m-shape, k-shape)
// and on chunks, where 1F1B is the interleaved row.
func TestEveryRowOnThePlacement(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    placement.Options
		ok   []string // rows that must have a schedule
	}{
		{"m-shape", placement.Options{}, []string{"GPipe", "1F1B+", "Tessel"}},
		{"k-shape", placement.Options{}, []string{"GPipe", "Tessel"}},
		{"v-shape", placement.Options{Chunks: 2, Order: placement.V, SplitBackward: true}, []string{"1F1B interleaved", "ZB-V", "DualPipeV", "Tessel"}},
		{"v-shape", placement.Options{Chunks: 2, Order: placement.Loop}, []string{"1F1B interleaved", "Tessel"}},
	} {
		tc.o.Devices = 4
		p, err := placement.Builtin(tc.name, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		cmp, err := Run(context.Background(), p, Options{MicroBatches: 8})
		if err != nil {
			t.Fatal(err)
		}
		rows := map[string]Row{}
		for _, r := range cmp.Rows {
			rows[r.Method] = r
			if r.Placement != p.Name {
				t.Errorf("%s: %s on %s", p.Name, r.Method, r.Placement)
			}
			if r.Schedule != nil && !r.Schedule.Placement.Equal(p) {
				t.Errorf("%s: %s's schedule runs on another placement", p.Name, r.Method)
			}
		}
		for _, m := range tc.ok {
			if r, ok := rows[m]; !ok || r.Status != StatusOK {
				t.Errorf("%s: %s is %+v, want a schedule", p.Name, m, r)
			}
		}
		if tc.o.Chunks > 1 && rows["1F1B"].Status != StatusNotApplicable {
			t.Errorf("%s: 1F1B on chunks is %s, want × beside the interleaved row", p.Name, rows["1F1B"].Status)
		}
	}
}

// withRedundant is p with a dependency from every forward to every block
// its chain already reaches on its own device (what tessel plan wrote
// for a split backward: f_i → i_i beside the chain's path).
func withRedundant(t *testing.T, p *placement.Placement) *placement.Placement {
	t.Helper()
	q := p.Clone()
	has := map[placement.Dep]bool{}
	for _, d := range q.Deps {
		has[d] = true
	}
	added := 0
	for i, b := range q.Blocks {
		if b.Kind != placement.Forward {
			continue
		}
		for j, c := range q.Blocks {
			d := placement.Dep{From: i, To: j}
			if c.Kind != placement.Forward && c.Devices[0] == b.Devices[0] && !has[d] && reaches(q, i, j) {
				q.Deps = append(q.Deps, d)
				has[d] = true
				added++
			}
		}
	}
	if added == 0 || q.Validate() != nil {
		t.Fatalf("%s: %d redundant dependencies added", p.Name, added)
	}
	return q
}

func reaches(p *placement.Placement, from, to int) bool {
	succs := p.Succs()
	seen := map[int]bool{}
	stack := []int{from}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, s := range succs[i] {
			if s == to {
				return true
			}
			if !seen[s] {
				seen[s] = true
				stack = append(stack, s)
			}
		}
	}
	return false
}

// Dependencies that others already imply change nothing: every row of
// the comparison of a placement and of the same placement with them has
// the same status, makespan and peak memory.
func TestRedundantDependenciesChangeNothing(t *testing.T) {
	for _, o := range []placement.Options{
		{Devices: 4, SplitBackward: true},
		{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true},
		{Devices: 4, Chunks: 2, Order: placement.Loop},
	} {
		p, err := placement.Builtin("v-shape", o)
		if err != nil {
			t.Fatal(err)
		}
		q := withRedundant(t, p)
		a, err := Run(context.Background(), p.WithRecompute(), Options{MicroBatches: 8})
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(context.Background(), q.WithRecompute(), Options{MicroBatches: 8})
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Rows) != len(b.Rows) {
			t.Fatalf("%s: %d rows, %d with redundant dependencies", p.Name, len(a.Rows), len(b.Rows))
		}
		for k, r := range a.Rows {
			s := b.Rows[k]
			if r.Method != s.Method || r.Status != s.Status || textfmt.OptInt(r.Makespan) != textfmt.OptInt(s.Makespan) ||
				textfmt.Ints(r.PeakMemory) != textfmt.Ints(s.PeakMemory) {
				t.Errorf("%s: %s %s %s %v, with redundant dependencies %s %s %s %v", p.Name, r.Method, r.Status, textfmt.OptInt(r.Makespan), r.PeakMemory,
					s.Method, s.Status, textfmt.OptInt(s.Makespan), s.PeakMemory)
			}
		}
	}
}

// A budget below one activation is still a table: every baseline a row
// (those whose rule finds no schedule "does not fit", with what one
// micro-batch needs), the Tessel search "none" with the same, never an
// error.
func TestTightMemoryIsATable(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithOffload(2).WithRecompute()
	for i := range p.Blocks { // every activation 3 units, checkpoint 1
		b := &p.Blocks[i]
		b.Memory *= 3
		if b.Kind == placement.Forward {
			b.Checkpoint = 1
		}
	}
	cmp, err := Run(context.Background(), p, Options{MicroBatches: 8, Memory: 2})
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]string{}
	for _, r := range cmp.Rows {
		statuses[r.Method] = r.Status
		switch r.Status {
		case StatusNoFit, StatusNone:
			if !strings.Contains(r.Note, "needs 3 per micro-batch") && !strings.Contains(r.Note, "needs at least 3 per micro-batch") {
				t.Errorf("%s: note %q does not say what one micro-batch needs", r.Method, r.Note)
			}
		case StatusOK:
			if *r.BudgetRespected || !strings.Contains(r.Note, "does not fit: device") {
				t.Errorf("%s: budget respected %v, note %q", r.Method, *r.BudgetRespected, r.Note)
			}
		}
	}
	for m, want := range map[string]string{"PipeOffload": StatusNoFit, "1F1B + recompute": StatusNoFit, "1F1B": StatusOK, "Tessel": StatusNone} {
		if statuses[m] != want {
			t.Errorf("%s: %q, want %q (%v)", m, statuses[m], want, statuses)
		}
	}
}

// Under a latency budget an inference placement is compared with tensor
// parallelism and the 1F1B chain of its blocks (as search's starts are),
// without --tp-efficiency.
func TestLatencyBudgetListsTensorParallelism(t *testing.T) {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4, Inference: true})
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := Run(context.Background(), p, Options{MicroBatches: 8, Latency: 12})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range cmp.Rows {
		found = found || (r.Method == "TP" && r.Status == StatusOK)
		if r.Method == "1F1B" && r.Status != StatusNotApplicable {
			t.Errorf("1F1B on %s: %s", r.Placement, r.Status)
		}
	}
	if !found {
		t.Errorf("no TP row: %+v", cmp.Rows)
	}
}
