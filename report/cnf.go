package report

import (
	"fmt"
	"io"

	"github.com/tessel-pp/tessel/internal/textfmt"
)

// CNFSummary is what tessel optimal --cnf and --answer report: the
// formula "a schedule that ends by Makespan" (its size, the file written
// or the answer read), the SAT solver's verdict, and what follows from it:
// no schedule ends by Makespan (LowerBound, Makespan + 1), or the
// schedule of its model (Schedule, verified).
type CNFSummary struct {
	Makespan   int      `json:"makespan_at_most"`
	Vars       int      `json:"variables"`
	Clauses    int      `json:"clauses"`
	File       string   `json:"file"`
	Status     string   `json:"status,omitempty"`
	LowerBound int      `json:"lower_bound,omitempty"`
	Schedule   *Summary `json:"-"`
}

// CNFText writes sum as tessel optimal prints it.
func CNFText(w io.Writer, sum CNFSummary) error {
	fmt.Fprintf(w, "formula      a schedule that ends by %d: %d variables, %d clauses\n", sum.Makespan, sum.Vars, sum.Clauses)
	switch {
	case sum.Status == "":
		fmt.Fprintf(w, "written to   %s (DIMACS CNF: give it to a SAT solver, e.g. cadical %s > answer.txt,\n", sum.File, sum.File)
		fmt.Fprintf(w, "             then read its answer back with the same flags and --answer answer.txt)\n")
	case sum.LowerBound > 0:
		fmt.Fprintf(w, "answer       unsatisfiable (%s): no schedule ends by %d\n", sum.File, sum.Makespan)
		fmt.Fprintf(w, "lower bound  %d, on the SAT solver's word (tessel does not check its proof)\n", sum.LowerBound)
	case sum.Schedule != nil:
		s := sum.Schedule
		fmt.Fprintf(w, "answer       satisfiable (%s)\n", sum.File)
		fmt.Fprintf(w, "schedule     %d micro-batches: makespan %d, bubble rate %s\n", s.MicroBatches, s.Makespan, textfmt.Pct(s.BubbleRate))
		fmt.Fprintf(w, "peak memory  %s\n", textfmt.Ints(s.PeakMemory))
		if s.Offloaded != nil {
			fmt.Fprintf(w, "decisions    %d activations offloaded\n", *s.Offloaded)
		}
		fmt.Fprintf(w, "verified     %s\n", textfmt.YesNo(s.Valid))
	}
	return nil
}
