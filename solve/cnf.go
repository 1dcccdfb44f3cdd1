package solve

import (
	"context"
	"fmt"
	"io"

	"github.com/tessel-pp/tessel/encode/cnf"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/spec"
)

// satStep is tessel optimal --cnf and --answer: the problem at the
// makespan --makespan as a CNF formula for a SAT solver, or the solver's
// answer to it read back (a verified schedule, or the bound that no
// schedule ends by then).
func satStep(ctx context.Context, sp spec.Spec, opts OptimalOptions, stdout io.Writer) error {
	if u := sp.Placement.Units; u.HasTime() {
		// A model's placement is timed in fine steps (its critical path
		// runs to hundreds of thousands): one variable a step would make a
		// formula no solver takes, and --makespan would not be in the
		// user's unit.
		return inputerr.Errorf("optimal: --cnf and --answer work on placements timed in whole steps (the built-ins, a placement file without units); %s times its blocks in steps of %s, its critical path %s",
			sp.Placement.Name, u.StepText(1), u.Duration(float64(sp.Placement.CriticalPath())))
	}
	if opts.Makespan < 1 {
		return inputerr.Errorf("optimal: --cnf and --answer need --makespan, the makespan the formula asks for (at least 1)")
	}
	if opts.CNF != "" && opts.Answer != "" {
		return inputerr.Errorf("optimal: --cnf writes the formula and --answer reads a solver's answer to it: give one")
	}
	if opts.CNF != "" {
		if o := opts.Outputs; o.Out != "" || o.SVG != "" || o.HTML != "" {
			return inputerr.Errorf("optimal: --cnf writes the formula, not a schedule: --out, --svg and --html go with --answer")
		}
		if err := outfile.Check(opts.Outputs.Force, opts.CNF); err != nil {
			return err
		}
	}
	f, err := cnf.Encode(ctx, sp, opts.Makespan)
	if err != nil {
		return err
	}
	if opts.CNF != "" {
		if err := outfile.WriteDrawn(opts.CNF, opts.Outputs.Force, f.WriteDIMACS); err != nil {
			return err
		}
		sum := report.CNFSummary{Makespan: opts.Makespan, Vars: f.Vars, Clauses: len(f.Clauses), File: opts.CNF}
		if opts.JSON {
			return textfmt.JSON(stdout, sum)
		}
		return report.CNFText(stdout, sum)
	}
	// An answer is a few bytes a variable; the limit of a schedule file
	// bounds a pipe too.
	r, err := limits.Open(opts.Answer, limits.ScheduleFileBytes)
	if err != nil {
		return inputerr.Wrap(err)
	}
	a, err := cnf.ReadAnswer(io.LimitReader(r, limits.ScheduleFileBytes), f.Vars)
	r.Close()
	if err != nil {
		return inputerr.Errorf("%s: %w", opts.Answer, err)
	}
	sum := report.CNFSummary{Makespan: opts.Makespan, Vars: f.Vars, Clauses: len(f.Clauses), File: opts.Answer, Status: a.Status.String()}
	switch a.Status {
	case cnf.Unknown:
		return fmt.Errorf("optimal: %s: the SAT solver gave no verdict", opts.Answer)
	case cnf.Unsatisfiable:
		sum.LowerBound = opts.Makespan + 1
		if opts.JSON {
			return textfmt.JSON(stdout, sum)
		}
		return report.CNFText(stdout, sum)
	}
	s, err := f.Schedule(a)
	if err != nil {
		return err
	}
	if err := opts.Outputs.WriteVerified("optimal", s); err != nil {
		return err
	}
	full := report.NewSummary(s, "SAT solver", false)
	full.WithDecisions(s)
	if opts.JSON {
		return textfmt.JSON(stdout, full)
	}
	sum.Schedule = &full
	return report.CNFText(stdout, sum)
}
