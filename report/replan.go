package report

import (
	"fmt"
	"io"
	"time"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
)

// NewReplanReport is the report of res, the replan of old onto p (old's
// placement on the new cluster), which took took; without a fresh
// search (Fresh nil).
func NewReplanReport(old *schedule.Schedule, p *placement.Placement, res *search.ReplanResult, took time.Duration) ReplanReport {
	rep := ReplanReport{Placement: p.Name, Devices: p.Devices, MicroBatches: old.MicroBatches, Memory: old.Memory, Old: schedule.Makespan(old)}
	if !p.Uniform(old.Memory) {
		rep.Budgets = p.Budgets(old.Memory)
	}
	rep.OldOrders, rep.OldRepetend, rep.OldRepetendKept = res.OldOrders, res.OldRepetend, res.OldRepetendKept
	rep.Makespan, rep.Seconds, rep.Source, rep.LowerBound, rep.Valid = schedule.Makespan(res.Schedule), textfmt.Secs(took), res.Source.String(), res.Bounds.Makespan, true
	return rep
}

// ReplanReport is what tessel replan reports: the old schedule's makespans
// on its own cluster and on the new one, the replanned schedule's and,
// where asked, a fresh search's. Its JSON is tessel replan --json.
type ReplanReport struct {
	Placement    string `json:"placement"`
	Devices      int    `json:"devices"`
	MicroBatches int    `json:"micro_batches"`
	Memory       int    `json:"memory"`
	Budgets      []int  `json:"budgets,omitempty"`
	Old          int    `json:"old_makespan"`          // on its own cluster
	OldOrders    *int   `json:"old_orders_makespan"`   // its orders on the new cluster; null when they break a budget there
	OldRepetend  *int   `json:"old_repetend_makespan"` // its repetend re-timed on the new cluster; null when not re-timed (none, no period fits, or nothing to gain: see README)
	// OldRepetendKept: the replanned schedule repeats the old repetend's
	// offsets, re-timed (the solver found no shorter period from there).
	OldRepetendKept bool    `json:"old_repetend_kept"`
	Makespan        int     `json:"makespan"`                 // replanned
	Seconds         float64 `json:"seconds"`                  // of the replanning search
	Source          string  `json:"source"`                   // what built the replanned schedule
	Fresh           *int    `json:"fresh_makespan,omitempty"` // a fresh search's
	FreshSeconds    float64 `json:"fresh_seconds,omitempty"`
	LowerBound      int     `json:"lower_bound"`
	Valid           bool    `json:"valid"`
}

// WriteText writes the report as tessel replan prints it; p is the
// placement on the new cluster.
func (r *ReplanReport) WriteText(w io.Writer, p *placement.Placement) {
	fmt.Fprintf(w, "tessel replan: %s, %d devices, %d micro-batches, memory %s, on the new cluster\n\n", p.Name, p.Devices, r.MicroBatches, p.BudgetText(r.Memory))
	oldOrders := "they break a memory budget there"
	if r.OldOrders != nil {
		oldOrders = fmt.Sprint(*r.OldOrders)
	}
	fmt.Fprintf(w, "old schedule   makespan %d on its own cluster; its orders on the new one: %s\n", r.Old, oldOrders)
	if r.OldRepetend != nil {
		fmt.Fprintf(w, "               its repetend re-timed on the new one: %d\n", *r.OldRepetend)
	}
	built := r.Source
	if r.OldRepetendKept {
		built += " (the old repetend's offsets, re-timed)"
	}
	fmt.Fprintf(w, "replanned      makespan %d (lower bound %d) in %.3fs, built by %s\n", r.Makespan, r.LowerBound, r.Seconds, built)
	if r.Fresh != nil {
		fmt.Fprintf(w, "fresh search   makespan %d in %.3fs\n", *r.Fresh, r.FreshSeconds)
	}
	fmt.Fprintf(w, "verified       yes\n")
}
