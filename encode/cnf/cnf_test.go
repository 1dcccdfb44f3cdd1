package cnf_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/encode/cnf"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
	"github.com/tessel-pp/tessel/z3"
)

// solve answers f with Z3's SAT engine (Formula.Solve; the formulas here
// are small) and passes the answer through the format SAT solvers print
// and ReadAnswer, as a solver's would.
func solve(t *testing.T, f *cnf.Formula) cnf.Answer {
	t.Helper()
	a, err := f.Solve(context.Background(), nil, z3.SolverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Status == cnf.Unknown {
		t.Fatalf("z3: %v", a.Status)
	}
	var out strings.Builder
	if err := cnf.WriteAnswer(&out, a); err != nil {
		t.Fatal(err)
	}
	back, err := cnf.ReadAnswer(strings.NewReader(out.String()), f.Vars)
	if err != nil {
		t.Fatal(err)
	}
	if back.Status != a.Status || !slices.Equal(back.Values, a.Values) {
		t.Fatalf("the answer read back differs from the one written")
	}
	return back
}

// At the proven optimum T* of a small problem (encode.OptimalDecisions,
// the solver's integer encoding of the same rules) the formula is
// satisfiable and its model is a verified schedule that ends by T*; at
// T* − 1 it is unsatisfiable: the two encodings agree on the optimum.
func TestFormulaMeetsOptimum(t *testing.T) {
	vsplit := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2, SplitBackward: true})
	shared := vsplit.WithOffload(1)
	shared.Switches = []int{0, 0}
	delayed := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2})
	delayed.Transfers = map[placement.Dep]int{}
	for _, d := range delayed.Deps {
		if !delayed.Shares(d.From, d.To) {
			delayed.Transfers[d] = 1
		}
	}
	for _, tc := range []struct {
		name string
		sp   spec.Spec
	}{
		{"keep, memory 2", spec.Spec{Placement: vsplit, MicroBatches: 3, Memory: 2}},
		{"offload 1, memory 1", spec.Spec{Placement: vsplit.WithOffload(1), MicroBatches: 3, Memory: 1, Allowed: spec.Decisions{Offload: true}}},
		{"offload 2, memory 1", spec.Spec{Placement: vsplit.WithOffload(2), MicroBatches: 3, Memory: 1, Allowed: spec.Decisions{Offload: true}}},
		{"one switch", spec.Spec{Placement: shared, MicroBatches: 3, Memory: 1, Allowed: spec.Decisions{Offload: true}}},
		{"transfers, unlimited", spec.Spec{Placement: delayed, MicroBatches: 3}},
		{"m-shape, memory 2", spec.Spec{Placement: placementtest.Builtin(t, "m-shape", placement.Options{Devices: 2}), MicroBatches: 3, Memory: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, sol, err := encode.OptimalDecisions(context.Background(), tc.sp, nil, smt.Options{})
			if err != nil || !sol.Proven {
				t.Fatalf("optimum: %v, %+v", err, sol)
			}
			f, err := cnf.Encode(context.Background(), tc.sp, sol.Makespan)
			if err != nil {
				t.Fatal(err)
			}
			s, err := f.Schedule(solve(t, f))
			if err != nil {
				t.Fatal(err)
			}
			if got := schedule.Makespan(s); got > sol.Makespan {
				t.Errorf("the model's schedule ends at %d, after %d", got, sol.Makespan)
			}
			f, err = cnf.Encode(context.Background(), tc.sp, sol.Makespan-1)
			if err != nil {
				t.Fatal(err)
			}
			if a := solve(t, f); a.Status != cnf.Unsatisfiable {
				t.Errorf("at %d, one below the optimum: %v", sol.Makespan-1, a.Status)
			}
		})
	}
}

// Every schedule the verifier accepts is a model of the formula at its
// makespan (Pins fixes its starts and decisions; the rest follows): the
// encoding asks nothing the rules do not, so "unsatisfiable" is a bound.
// The schedules: PipeOffload's (offloads on every device, micro-batches
// out of order), the search's with decisions, 1F1B's and ZB-H2's under
// their own peak memory.
func TestFormulaAdmitsSchedules(t *testing.T) {
	vsplit := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 3, SplitBackward: true})
	// Two chunks a device: w8 … w7 both free device 7's memory, and only
	// f7's own (its pair) may free f7's, whose reload can follow w8.
	chunks := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2, Chunks: 2, Order: placement.V, SplitBackward: true})
	off := spec.Decisions{Offload: true}
	var cases []*schedule.Schedule
	for _, sp := range []spec.Spec{
		{Placement: vsplit.WithOffload(1), MicroBatches: 4, Memory: 2, Allowed: off},
		{Placement: vsplit.WithOffload(2), MicroBatches: 5, Memory: 1, Allowed: off},
		{Placement: chunks.WithOffload(2), MicroBatches: 6, Memory: 2, Allowed: off},
		{Placement: chunks.WithOffload(1), MicroBatches: 5, Memory: 3, Allowed: off},
	} {
		po, err := baseline.PipeOffload(sp)
		if err != nil {
			t.Fatal(err)
		}
		po.Allowed = off
		res, err := search.Run(context.Background(), sp, search.Options{})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, po, res.Schedule)
	}
	for _, b := range []func(spec.Spec) (*schedule.Schedule, error){baseline.OneFOneB, baseline.ZBH2} {
		s, err := b(spec.Spec{Placement: placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4, SplitBackward: true}), MicroBatches: 6})
		if err != nil {
			t.Fatal(err)
		}
		s.Memory = slices.Max(schedule.Measure(s).PeakMemory) // a budget that binds
		cases = append(cases, s)
	}
	for k, s := range cases {
		if err := verify.Schedule(s); err != nil {
			t.Fatalf("case %d: %v", k, err)
		}
		sp := spec.Spec{Placement: s.Placement, MicroBatches: s.MicroBatches, Memory: s.Memory}
		if len(s.Decisions) > 0 {
			sp.Allowed = off
		}
		T := schedule.Makespan(s)
		f, err := cnf.Encode(context.Background(), sp, T)
		if err != nil {
			t.Fatal(err)
		}
		pins, err := f.Pins(s)
		if err != nil {
			t.Fatalf("case %d (%s, makespan %d): %v", k, s.Placement.Name, T, err)
		}
		a, err := f.Solve(context.Background(), pins, z3.SolverOptions{})
		if err != nil || a.Status != cnf.Satisfiable {
			t.Errorf("case %d (%s, %d micro-batches, memory %d, %d decisions, makespan %d): %v %v, want satisfiable",
				k, s.Placement.Name, s.MicroBatches, s.Memory, len(s.Decisions), T, a.Status, err)
		}
	}
}

// The formula is the same bytes every time.
func TestWriteDIMACSDeterministic(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2, SplitBackward: true}).WithOffload(1)
	sp := spec.Spec{Placement: p, MicroBatches: 3, Memory: 1, Allowed: spec.Decisions{Offload: true}}
	var first []byte
	for range 2 {
		f, err := cnf.Encode(context.Background(), sp, 14)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := f.WriteDIMACS(&b); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = b.Bytes()
			head := fmt.Sprintf("c tessel: %s, 3 micro-batches, memory 1, makespan at most 14\np cnf %d %d\n", p.Name, f.Vars, len(f.Clauses))
			if !bytes.HasPrefix(first, []byte(head)) {
				t.Fatalf("header %q, want %q", first[:min(len(first), 120)], head)
			}
			continue
		}
		if !bytes.Equal(first, b.Bytes()) {
			t.Fatal("two encodings of one problem differ")
		}
	}
}

// What the encoding does not model is refused in one line that names it.
func TestEncodeRefuses(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2, SplitBackward: true})
	zeroTime := p.Clone()
	zeroTime.Blocks[zeroTime.Index("w0")].Time = 0
	for _, tc := range []struct {
		name string
		sp   spec.Spec
		T    int
		want string
	}{
		{"recompute", spec.Spec{Placement: p.WithRecompute(), MicroBatches: 2, Memory: 1, Allowed: spec.Decisions{Recompute: true}}, 20, "recompute"},
		{"latency", spec.Spec{Placement: p, MicroBatches: 2, Latency: 12}, 20, "the latency budget"},
		{"no time", spec.Spec{Placement: zeroTime, MicroBatches: 2}, 20, "block w0, which takes no time"},
		{"below the critical path", spec.Spec{Placement: p, MicroBatches: 2}, 4, "critical path"},
		{"too short", spec.Spec{Placement: p, MicroBatches: 8}, 8, "has no time"},
		{"too large", spec.Spec{Placement: p, MicroBatches: 1 << 16}, 400_000, "fewer micro-batches or an earlier makespan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cnf.Encode(context.Background(), tc.sp, tc.T)
			if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %v, want one line of bad input with %q", err, tc.want)
			}
		})
	}
}

// Encode stops when its context ends.
func TestEncodeCancelled(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2, SplitBackward: true})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := cnf.Encode(ctx, spec.Spec{Placement: p, MicroBatches: 4}, 30); !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

func TestReadAnswer(t *testing.T) {
	for _, tc := range []struct {
		in     string
		status cnf.Status
		values []bool
		err    string
	}{
		{"c hi\ns SATISFIABLE\nv 1 -2\nv 3 0\n", cnf.Satisfiable, []bool{false, true, false, true}, ""},
		{"s SATISFIABLE\nv 1 -2 0\n", 0, nil, "gives 2 of the formula's 3"},
		{"s UNSATISFIABLE\n", cnf.Unsatisfiable, nil, ""},
		{"s UNKNOWN\n", cnf.Unknown, nil, ""},
		{"s SATISFIABLE\nv 1 -2 3\n", 0, nil, "does not end with 0"},
		{"s SATISFIABLE\nv 1 -2 3 -1 0\n", 0, nil, "variable 1 is given twice"},
		{"s SATISFIABLE\nv 1 -2 4 0\n", 0, nil, "past the formula's 3"},
		{"v 1 0\n", 0, nil, "without a line"},
		{"s SATISFIABLE\nv 1 0 2\n", 0, nil, "goes on after"},
		{"s MAYBE\n", 0, nil, "MAYBE"},
		{"c only\n", 0, nil, "no status line"},
		{"s UNSATISFIABLE\ns UNSATISFIABLE\n", 0, nil, "second status"},
		{"hello\n", 0, nil, "no line of a SAT solver"},
		{"s SATISFIABLE\nv x 0\n", 0, nil, "not a number"},
	} {
		a, err := cnf.ReadAnswer(strings.NewReader(tc.in), 3)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || a.Status != tc.status || fmt.Sprint(a.Values) != fmt.Sprint(tc.values) {
			t.Errorf("%q: %+v, %v; want %v %v", tc.in, a, err, tc.status, tc.values)
		}
	}
}

// ReadAnswer never panics, what it accepts has a model exactly when it
// says satisfiable and reads the same once written again (WriteAnswer),
// and a model of any values read back is a verified schedule or an
// error, never a panic.
func FuzzReadAnswer(f *testing.F) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2, SplitBackward: true})
	if err != nil {
		f.Fatal(err)
	}
	formula, err := cnf.Encode(context.Background(), spec.Spec{Placement: p.WithOffload(1), MicroBatches: 2, Memory: 1, Allowed: spec.Decisions{Offload: true}}, 9)
	if err != nil {
		f.Fatal(err)
	}
	var all strings.Builder
	all.WriteString("s SATISFIABLE\nv")
	for v := 1; v <= formula.Vars; v++ {
		fmt.Fprintf(&all, " %d", v)
	}
	all.WriteString(" 0\n")
	for _, s := range []string{all.String(), strings.ReplaceAll(all.String(), " ", " -"), "s UNSATISFIABLE\n", "c x\ns UNKNOWN\n", "s SATISFIABLE\nv -9223372036854775808 0\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a, err := cnf.ReadAnswer(strings.NewReader(in), formula.Vars)
		if err != nil {
			return
		}
		if (a.Status == cnf.Satisfiable) != (len(a.Values) == formula.Vars+1) {
			t.Fatalf("status %v with %d values", a.Status, len(a.Values))
		}
		var again strings.Builder
		if err := cnf.WriteAnswer(&again, a); err != nil {
			t.Fatal(err)
		}
		if b, err := cnf.ReadAnswer(strings.NewReader(again.String()), formula.Vars); err != nil || b.Status != a.Status || !slices.Equal(b.Values, a.Values) {
			t.Fatalf("written and read again: %v, %v", b.Status, err)
		}
		if a.Status != cnf.Satisfiable {
			return
		}
		if s, err := formula.Schedule(a); err == nil {
			if err := verify.Schedule(s); err != nil {
				t.Errorf("a schedule read back fails verification: %v", err)
			}
		}
	})
}
