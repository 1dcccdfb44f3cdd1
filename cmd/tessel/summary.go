package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// summary is the JSON object searching commands print with --json (docs/formats.md,
// "Summary output"). Optional parts are omitted when empty.
type summary struct {
	Placement          string         `json:"placement"`
	Devices            int            `json:"devices"`
	Memory             int            `json:"memory"`
	Budgets            []int          `json:"budgets,omitempty"`  // every device's, where they differ (a cluster's memories)
	Channels           bool           `json:"channels,omitempty"` // links carry one transfer at a time
	Method             string         `json:"method"`
	NR                 int            `json:"nr,omitempty"`
	Period             int            `json:"period,omitempty"`
	RepetendBubbleRate *float64       `json:"repetend_bubble_rate,omitempty"`
	Offsets            map[string]int `json:"offsets,omitempty"`
	MicroBatches       int            `json:"micro_batches"`
	Makespan           int            `json:"makespan"`
	BubbleRate         float64        `json:"bubble_rate"`
	PeakMemory         []int          `json:"peak_memory"`
	Offloaded          *int           `json:"offloaded,omitempty"`  // with --offload or --recompute: instances offloaded
	Recomputed         *int           `json:"recomputed,omitempty"` // and recomputed`
	LowerBound         lowerBound     `json:"lower_bound"`
	Valid              bool           `json:"valid"`
	Proven             bool           `json:"proven"`
	PeriodProven       *bool          `json:"period_proven,omitempty"`
	Gap                *int           `json:"gap,omitempty"`
	Source             string         `json:"source,omitempty"`
	Candidates         *candidates    `json:"candidates,omitempty"`
	Seconds            seconds        `json:"seconds"`
}

type lowerBound struct {
	Period   int `json:"period"`
	Makespan int `json:"makespan"`
}

type candidates struct {
	Seen     int `json:"seen"`
	Pruned   int `json:"pruned"`
	Solved   int `json:"solved"`
	Rejected int `json:"rejected"`
	Checks   int `json:"solver_calls"`
}

type seconds struct {
	Total         float64 `json:"total"`
	Constructions float64 `json:"constructions"`
	Repetend      float64 `json:"repetend"`
	Warmup        float64 `json:"warmup"`
	Cooldown      float64 `json:"cooldown"`
	Refine        float64 `json:"refine"`
}

// newSummary fills what every schedule has; s must be verified.
func newSummary(s *schedule.Schedule, method string, proven bool) summary {
	m := schedule.Measure(s)
	var budgets []int
	if !s.Placement.Uniform(s.Memory) {
		budgets = s.Budgets()
	}
	return summary{
		Budgets:      budgets,
		Channels:     s.Placement.Channels,
		Placement:    s.Placement.Name,
		Devices:      s.Placement.Devices,
		Memory:       s.Memory,
		Method:       method,
		MicroBatches: s.MicroBatches,
		Makespan:     m.Makespan,
		BubbleRate:   round6(m.BubbleRate),
		PeakMemory:   m.PeakMemory,
		LowerBound:   lowerBound{Period: m.LowerBound.Period, Makespan: m.LowerBound.Makespan},
		Valid:        schedule.Verify(s) == nil,
		Proven:       proven,
	}
}

func round6(x float64) float64 { return float64(int64(x*1e6+0.5)) / 1e6 }

func secs(d time.Duration) float64 { return round6(d.Seconds()) }

func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func pct(x float64) string { return fmt.Sprintf("%.2f%%", 100*x) }

// budgetOf is the budget of p's devices under memory: one number where
// they share it (budget), else every device's.
func budgetOf(p *placement.Placement, memory int) string {
	if p.Uniform(memory) {
		return budget(p.Budget(0, memory))
	}
	return ints(p.Budgets(memory))
}

// linksText says how tensors cross devices on p, for a report's header:
// "" when every transfer is free, else the range of transfer times and,
// with channels, that each link carries one at a time.
func linksText(p *placement.Placement) string {
	lo, hi := 0, 0
	for _, d := range p.Deps {
		if c := p.Transfer(d); c > 0 {
			if lo == 0 || c < lo {
				lo = c
			}
			hi = max(hi, c)
		}
	}
	if hi == 0 {
		return ""
	}
	t := fmt.Sprintf("every transfer between devices takes %d", lo)
	if lo != hi {
		t = fmt.Sprintf("transfers between devices take %d to %d", lo, hi)
	}
	if p.Channels {
		t += "; each link carries one at a time, the others queue"
	}
	return t
}

func budget(m int) string {
	if m <= 0 {
		return "unlimited"
	}
	return fmt.Sprint(m)
}

func ints(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
