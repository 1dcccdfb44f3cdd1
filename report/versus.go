package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/plan"
	"github.com/tessel-pp/tessel/schedule"
)

// Versus is the plan beside the schedules a user would otherwise run
// (plan.Versus), each on the same stages, devices and budgets, in the
// model's time and memory, and the levers where the budget binds.
type Versus struct {
	// Rows: Tessel's first, then each baseline's.
	Rows []VersusRow `json:"rows"`
	// Winner is the fastest baseline that fits ("" where none does), its
	// time per iteration WinnerTime; Margin is how much faster Tessel is,
	// (winner − Tessel) / winner (negative where the baseline is faster:
	// it recomputes or offloads, which the plan was not allowed).
	Winner     string  `json:"winner,omitempty"`
	WinnerTime float64 `json:"winner_time,omitempty"`
	Margin     float64 `json:"margin,omitempty"`
	// Binds says the budget may hold the schedule back (plan.Result.Binds).
	Binds  bool       `json:"binds"`
	Levers []LeverRow `json:"levers,omitempty"`

	rows []compare.Row // the baselines', with their schedules
}

// VersusRow is one schedule of the plan's comparison.
type VersusRow struct {
	Method string `json:"method"`
	Status string `json:"status"` // compare's: ok, not applicable, does not fit, failed
	// Makespan in steps, Time in the model's time unit: N micro-batches,
	// one iteration.
	Makespan *int     `json:"makespan,omitempty"`
	Time     *float64 `json:"time,omitempty"`
	// Memory is each device's peak: what its stages hold for good and the
	// schedule's activations at their peak, in the model's memory unit
	// (bytes where the model is in bytes); PeakMemory the activations in
	// placement units.
	Memory     []float64 `json:"memory,omitempty"`
	PeakMemory []int     `json:"peak_memory,omitempty"`
	Fits       *bool     `json:"fits,omitempty"`
	Note       string    `json:"note,omitempty"`
}

// LeverRow is what one lever gives: the plan with --recompute or
// --offload, its time per iteration and its speed-up over the plan.
type LeverRow struct {
	Flag     string   `json:"flag"`
	Makespan *int     `json:"makespan,omitempty"`
	Time     *float64 `json:"time,omitempty"`
	Speedup  float64  `json:"speedup,omitempty"` // plan's time / the lever's
	Error    string   `json:"error,omitempty"`
}

// SetVersus adds the comparison to the report: the baselines' rows
// (plan.Versus) and the levers (plan.Levers).
func (r *Plan) SetVersus(rows []compare.Row, levers []plan.Lever) {
	in := r.plan
	unit := r.Partition.Converted.TimeUnit
	s := in.Search.Schedule
	m := schedule.Measure(s)
	v := &Versus{Binds: in.Binds(), rows: rows}
	v.Rows = append(v.Rows, r.versusRow(VersusRow{Method: "Tessel", Status: compare.StatusOK, Makespan: &m.Makespan, PeakMemory: m.PeakMemory, Fits: textfmt.Ptr(true)}))
	for _, row := range rows {
		v.Rows = append(v.Rows, r.versusRow(VersusRow{Method: row.Method, Status: row.Status, Makespan: row.Makespan, PeakMemory: row.PeakMemory, Fits: row.BudgetRespected, Note: row.Note}))
	}
	if w := plan.Winner(rows); w != nil {
		v.Winner, v.WinnerTime = w.Method, textfmt.Round6(float64(*w.Makespan)*unit)
		v.Margin = textfmt.Round6(float64(*w.Makespan-m.Makespan) / float64(*w.Makespan))
	}
	for _, lv := range levers {
		lr := LeverRow{Flag: lv.Flag}
		if lv.Err != nil {
			lr.Error = lv.Err.Error()
		} else {
			span := schedule.Makespan(lv.Result.Search.Schedule)
			lr.Makespan, lr.Time = &span, textfmt.Ptr(textfmt.Round6(float64(span)*unit))
			lr.Speedup = textfmt.Round6(float64(m.Makespan) / float64(span))
		}
		v.Levers = append(v.Levers, lr)
	}
	r.Versus = v
}

// versusRow is row with its time and memory in the model's units.
func (r *Plan) versusRow(row VersusRow) VersusRow {
	makespan, peak := row.Makespan, row.PeakMemory
	if makespan != nil {
		row.Time = textfmt.Ptr(textfmt.Round6(float64(*makespan) * r.Partition.Converted.TimeUnit))
	}
	if mem := r.plan.Memory; mem != nil && peak != nil {
		for d, x := range peak {
			row.Memory = append(row.Memory, textfmt.Round6(mem[d].Static+float64(x)*mem[d].Unit))
		}
	}
	return row
}

// peakText is a row's fullest device: its memory and index.
func (r *Plan) peakText(row VersusRow) string {
	if row.Memory == nil {
		if row.PeakMemory == nil {
			return "-"
		}
		return textfmt.Ints(row.PeakMemory)
	}
	d := 0
	for i, x := range row.Memory {
		if x > row.Memory[d] {
			d = i
		}
	}
	return fmt.Sprintf("%s (device %d)", partition.FormatMemory(row.Memory[d], r.Partition.Graph.Bytes), d)
}

// WriteVersusText writes the comparison as tessel plan prints it after
// the plan (WriteText): a table of time per iteration and peak memory,
// the winner and its margin, and the levers; nothing without SetVersus.
func (r *Plan) WriteVersusText(w io.Writer) error {
	v := r.Versus
	if v == nil {
		return nil
	}
	fmt.Fprintf(w, "\nagainst the baselines, each on the same stages, devices and budgets (%d micro-batches, one iteration; time in the model's unit, memory the fullest device's):\n\n", r.plan.Search.Schedule.MicroBatches)
	header, rows := r.versusTable()
	table, err := textfmt.Plain(header, rows)
	if err != nil {
		return err
	}
	fmt.Fprint(w, table)
	fmt.Fprintf(w, "\nwinner       %s\n", r.winnerText())
	if lv := r.leversText(); lv != "" {
		fmt.Fprintf(w, "levers       %s\n", lv)
	}
	return nil
}

// winnerText names the fastest schedule that fits and its margin.
func (r *Plan) winnerText() string {
	v := r.Versus
	tessel := *v.Rows[0].Time
	mt := r.Partition.Graph.FormatTime // the model's time, as the plan's
	switch {
	case v.Winner == "":
		return fmt.Sprintf("Tessel, %s per iteration: no baseline fits the budget", mt(tessel))
	case v.Margin == 0:
		return fmt.Sprintf("Tessel, %s per iteration, as fast as %s (the fastest baseline that fits)", mt(tessel), v.Winner)
	case v.Margin < 0:
		// A baseline that recomputes or offloads, which the plan was not
		// allowed: the levers say what Tessel does with the same.
		return fmt.Sprintf("%s, %s per iteration, %.1f%% faster than Tessel without its decisions (the levers below)", v.Winner, mt(v.WinnerTime), 100*(tessel-v.WinnerTime)/tessel)
	}
	return fmt.Sprintf("Tessel, %s per iteration, %.1f%% faster than %s (the fastest baseline that fits)", mt(tessel), 100*v.Margin, v.Winner)
}

// leversText says what each lever gives where the budget binds; "" where
// it does not.
func (r *Plan) leversText() string {
	v := r.Versus
	if !v.Binds || len(v.Levers) == 0 {
		return ""
	}
	var parts []string
	for _, lv := range v.Levers {
		if lv.Error != "" {
			parts = append(parts, "with "+lv.Error)
			continue
		}
		what := fmt.Sprintf("%.2fx faster", lv.Speedup)
		if lv.Speedup <= 1 {
			what = "no faster"
		}
		parts = append(parts, fmt.Sprintf("with %s: %s per iteration, %s", lv.Flag, r.Partition.Graph.FormatTime(*lv.Time), what))
	}
	return "the budget binds; " + strings.Join(parts, "; ")
}

// versusTable is the comparison's header and cells, as people read it.
func (r *Plan) versusTable() ([]string, [][]string) {
	v := r.Versus
	tessel := *v.Rows[0].Time
	var rows [][]string
	for _, row := range v.Rows {
		switch row.Status {
		case compare.StatusNotApplicable:
			rows = append(rows, []string{row.Method, "×", "×", "×", "×", row.Note})
			continue
		case compare.StatusNoFit, compare.StatusFailed, compare.StatusNone:
			rows = append(rows, []string{row.Method, row.Status, "-", "-", "no", row.Note})
			continue
		}
		against := "-"
		if row.Method != "Tessel" {
			against = fmt.Sprintf("%+.1f%%", 100*(*row.Time-tessel)/tessel)
		}
		note := row.Note
		if i := strings.Index(note, "does not "); i >= 0 {
			note = note[i:] // the steady period is compare's detail
		} else {
			note = ""
		}
		rows = append(rows, []string{row.Method, r.Partition.Graph.FormatTime(*row.Time), against, r.peakText(row), textfmt.YesNo(*row.Fits), note})
	}
	return []string{"method", "per iteration", "against Tessel", "peak memory", "fits", "note"}, rows
}
