package cnf

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
	"github.com/tessel-pp/tessel/z3"
)

// Status is a SAT solver's verdict.
type Status int

const (
	// Unknown: the solver gave no verdict (it stopped, or ran out).
	Unknown Status = iota
	// Satisfiable: the answer has a model.
	Satisfiable
	// Unsatisfiable: no assignment satisfies the formula.
	Unsatisfiable
)

func (s Status) String() string {
	switch s {
	case Satisfiable:
		return "satisfiable"
	case Unsatisfiable:
		return "unsatisfiable"
	}
	return "unknown"
}

// Answer is what a SAT solver printed: its verdict and, when
// satisfiable, the value of every variable (Values[v], v ≥ 1).
type Answer struct {
	Status Status
	Values []bool
}

// maxLine is the longest line ReadAnswer reads: most solvers print a
// model a few dozen literals a line, some all of it on one.
const maxLine = 1 << 27

// ReadAnswer reads a SAT solver's output in the format of the SAT
// competitions (what CaDiCaL, Kissat and CryptoMiniSat print): comment lines "c …", one status line "s SATISFIABLE",
// "s UNSATISFIABLE" or "s UNKNOWN", and the model in "v …" lines ending
// with 0. vars is the formula's number of variables: a satisfiable
// answer gives every one of them and no other.
func ReadAnswer(r io.Reader, vars int) (Answer, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxLine)
	a := Answer{}
	seen, ended := false, false
	var values, set []bool
	assigned := 0
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		switch {
		case text == "" || text[0] == 'c':
		case text[0] == 's':
			if seen {
				return Answer{}, inputerr.Errorf("line %d: a second status line", line)
			}
			seen = true
			switch strings.TrimSpace(text[1:]) {
			case "SATISFIABLE":
				a.Status = Satisfiable
				values, set = make([]bool, vars+1), make([]bool, vars+1)
			case "UNSATISFIABLE":
				a.Status = Unsatisfiable
			case "UNKNOWN", "INDETERMINATE":
				a.Status = Unknown
			default:
				return Answer{}, inputerr.Errorf("line %d: status %q is none of SATISFIABLE, UNSATISFIABLE, UNKNOWN", line, strings.TrimSpace(text[1:]))
			}
		case text[0] == 'v':
			if a.Status != Satisfiable {
				return Answer{}, inputerr.Errorf("line %d: a model without a line \"s SATISFIABLE\" before it", line)
			}
			if ended {
				return Answer{}, inputerr.Errorf("line %d: the model goes on after its 0", line)
			}
			for _, field := range strings.Fields(text[1:]) {
				l, err := strconv.Atoi(field)
				if err != nil {
					return Answer{}, inputerr.Errorf("line %d: literal %q is not a number", line, field)
				}
				if l == 0 {
					ended = true
					continue
				}
				if ended {
					return Answer{}, inputerr.Errorf("line %d: the model goes on after its 0", line)
				}
				if l > vars || l < -vars {
					return Answer{}, inputerr.Errorf("line %d: literal %d names a variable past the formula's %d", line, l, vars)
				}
				v := max(l, -l)
				if set[v] {
					return Answer{}, inputerr.Errorf("line %d: variable %d is given twice", line, v)
				}
				set[v] = true
				assigned++
				values[v] = l > 0
			}
		default:
			return Answer{}, inputerr.Errorf("line %d: %q is no line of a SAT solver's answer (c, s or v)", line, clip(text))
		}
	}
	if err := sc.Err(); err != nil {
		return Answer{}, fmt.Errorf("reading the answer: %w", err)
	}
	if !seen {
		return Answer{}, inputerr.Errorf("no status line (s SATISFIABLE, s UNSATISFIABLE or s UNKNOWN)")
	}
	if a.Status == Satisfiable {
		if !ended {
			return Answer{}, inputerr.Errorf("the model does not end with 0")
		}
		if assigned != vars {
			return Answer{}, inputerr.Errorf("the model gives %d of the formula's %d variables: is it the answer to another formula?", assigned, vars)
		}
		a.Values = values
	}
	return a, nil
}

// WriteAnswer writes a in the format ReadAnswer reads, as SAT solvers
// print it: the status line and, when satisfiable, the model, 16
// literals a "v" line, ending with 0.
func WriteAnswer(w io.Writer, a Answer) error {
	bw := bufio.NewWriter(w)
	switch a.Status {
	case Satisfiable:
		bw.WriteString("s SATISFIABLE\n")
		for v := 1; v < len(a.Values); v++ {
			if (v-1)%16 == 0 {
				if v > 1 {
					bw.WriteByte('\n')
				}
				bw.WriteString("v")
			}
			l := v
			if !a.Values[v] {
				l = -v
			}
			bw.WriteByte(' ')
			bw.WriteString(strconv.Itoa(l))
		}
		if len(a.Values) > 1 {
			bw.WriteByte('\n')
		}
		bw.WriteString("v 0\n")
	case Unsatisfiable:
		bw.WriteString("s UNSATISFIABLE\n")
	default:
		bw.WriteString("s UNKNOWN\n")
	}
	return bw.Flush()
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Schedule reads a satisfiable answer to f back as a schedule: every
// instance at the least time its order encoding is true, every offload
// the model switches on with its moves. A model that leaves a clause
// false is refused, and the schedule is verified (verify.Schedule) before
// it is returned: the solver is not trusted.
func (f *Formula) Schedule(a Answer) (*schedule.Schedule, error) {
	if a.Status != Satisfiable {
		return nil, fmt.Errorf("cnf: the answer is %s, not satisfiable", a.Status)
	}
	if len(a.Values) != f.Vars+1 {
		return nil, inputerr.Errorf("cnf: the answer has %d variables, the formula %d", len(a.Values)-1, f.Vars)
	}
	val := func(l int) bool {
		if l < 0 {
			return !a.Values[-l]
		}
		return a.Values[l]
	}
	for k, c := range f.Clauses {
		if !slices.ContainsFunc(c, val) {
			return nil, inputerr.Errorf("cnf: the answer's model leaves clause %d of the formula false: an answer to another formula, or a solver's fault", k+1)
		}
	}
	at := func(v ivar) int {
		for t := v.lo; t < v.hi; t++ {
			if val(f.le(v, t)) {
				return t
			}
		}
		return v.hi
	}
	sp := f.sp
	out := &schedule.Schedule{Spec: spec.Spec{Placement: sp.Placement, MicroBatches: sp.MicroBatches, Memory: sp.Memory}}
	for m := range sp.MicroBatches {
		for i := range f.starts {
			out.Instances = append(out.Instances, schedule.Instance{Block: i, Micro: m, Start: at(f.starts[i][m])})
		}
	}
	for _, mv := range f.moves {
		if val(mv.on) {
			out.Decisions = append(out.Decisions, schedule.Decision{Block: mv.block, Micro: mv.micro, Action: placement.Offload, Start: at(mv.off), Reload: at(mv.back)})
		}
	}
	out.Sort()
	if err := verify.Schedule(out); err != nil {
		return nil, fmt.Errorf("cnf: the solver's model is no schedule (a fault of the encoding): %w", err)
	}
	return out, nil
}

// Pins returns the literals that fix s's starts and offloads in f, its
// micro-batches renamed in the order of their first blocks' starts (as
// the formula orders them). With them, f is satisfiable when s is a
// schedule of f's spec that ends by f.Makespan: a check that the formula
// admits every schedule the verifier does. An instance outside its window
// in f, or a decision f has no variable for, is an error.
func (f *Formula) Pins(s *schedule.Schedule) ([]int, error) {
	p := f.sp.Placement
	if s.MicroBatches != f.sp.MicroBatches || len(s.Placement.Blocks) != len(p.Blocks) {
		return nil, fmt.Errorf("cnf: a schedule of %d micro-batches of %d blocks, the formula's %d of %d", s.MicroBatches, len(s.Placement.Blocks), f.sp.MicroBatches, len(p.Blocks))
	}
	first := f.first
	start := map[schedule.Ref]int{}
	for _, in := range s.Instances {
		start[in.Ref()] = in.Start
	}
	ms := make([]int, s.MicroBatches)
	for m := range ms {
		ms[m] = m
	}
	slices.SortStableFunc(ms, func(a, b int) int {
		return cmp.Compare(start[schedule.Ref{Block: first, Micro: a}], start[schedule.Ref{Block: first, Micro: b}])
	})
	rename := make([]int, len(ms)) // s's micro-batch → the formula's
	for k, m := range ms {
		rename[m] = k
	}
	var pins []int
	pin := func(v ivar, t int, what string) error {
		if t < v.lo || t > v.hi {
			return fmt.Errorf("cnf: %s at %d, outside its window [%d, %d] in the formula", what, t, v.lo, v.hi)
		}
		pins = append(pins, f.le(v, t), -f.le(v, t-1))
		return nil
	}
	for _, in := range s.Instances {
		if err := pin(f.starts[in.Block][rename[in.Micro]], in.Start, fmt.Sprintf("%s of micro-batch %d", p.Blocks[in.Block].ID, in.Micro)); err != nil {
			return nil, err
		}
	}
	decided := map[schedule.Ref]schedule.Decision{}
	for _, d := range s.Decisions {
		if d.Action != placement.Offload {
			return nil, fmt.Errorf("cnf: the formula has no %s decisions", d.Action)
		}
		decided[schedule.Ref{Block: d.Block, Micro: rename[d.Micro]}] = d
	}
	for _, mv := range f.moves {
		d, ok := decided[schedule.Ref{Block: mv.block, Micro: mv.micro}]
		if !ok {
			pins = append(pins, -mv.on)
			continue
		}
		delete(decided, schedule.Ref{Block: mv.block, Micro: mv.micro})
		pins = append(pins, mv.on)
		what := fmt.Sprintf("the offload of %s of micro-batch %d", p.Blocks[d.Block].ID, d.Micro)
		if err := pin(mv.off, d.Start, what); err != nil {
			return nil, err
		}
		if err := pin(mv.back, d.Reload, "the reload"+what[len("the offload"):]); err != nil {
			return nil, err
		}
	}
	for r := range decided {
		return nil, fmt.Errorf("cnf: the formula cannot offload %s of its micro-batch %d", p.Blocks[r.Block].ID, r.Micro)
	}
	// Constants drop out: a pin that is the true literal holds, and one
	// that is its negation cannot.
	out := pins[:0]
	for _, l := range pins {
		switch l {
		case f.tru:
			continue
		case -f.tru:
			return nil, fmt.Errorf("cnf: a pin contradicts the formula's windows")
		}
		out = append(out, l)
	}
	return out, nil
}

// Solve answers f with Z3's SAT engine, under the assumptions (literals
// that must hold; Pins): for small formulas and checks. A large formula
// is a SAT solver's job (WriteDIMACS). opt caps the effort; an answer cut
// short by it or by ctx is Unknown.
func (f *Formula) Solve(ctx context.Context, assume []int, opt z3.SolverOptions) (Answer, error) {
	x, s, err := z3.NewSolving(opt)
	if err != nil {
		return Answer{}, err
	}
	defer x.Close()
	vars := make([]z3.Bool, f.Vars+1)
	for v := 1; v <= f.Vars; v++ {
		vars[v] = x.BoolVar("v" + strconv.Itoa(v))
	}
	lit := func(l int) z3.Bool {
		if l > 0 {
			return vars[l]
		}
		return x.Not(vars[-l])
	}
	lits := make([]z3.Bool, 0, 8)
	for k, c := range f.Clauses {
		if k%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return Answer{}, err
			}
		}
		lits = lits[:0]
		for _, l := range c {
			lits = append(lits, lit(l))
		}
		s.Assert(x.Or(lits...))
	}
	for _, l := range assume {
		s.Assert(lit(l))
	}
	st, err := s.Check(ctx)
	switch {
	case errors.Is(err, z3.ErrIncomplete) || errors.Is(err, z3.ErrEffort):
		return Answer{Status: Unknown}, nil
	case err != nil:
		return Answer{}, err
	case st == z3.Unsat:
		return Answer{Status: Unsatisfiable}, nil
	case st != z3.Sat:
		return Answer{Status: Unknown}, nil
	}
	m, err := s.Model()
	if err != nil {
		return Answer{}, err
	}
	defer m.Close()
	a := Answer{Status: Satisfiable, Values: make([]bool, f.Vars+1)}
	for v := 1; v <= f.Vars; v++ {
		if a.Values[v], err = m.Bool(vars[v]); err != nil {
			return Answer{}, err
		}
	}
	return a, nil
}
