package report

import (
	"fmt"
	"io"
	"time"

	"github.com/tessel-pp/tessel/coarsen"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// CoarsenSummary is a coarsened search's answer in the JSON form tessel search
// and optimal print with --coarsen and --json (docs/operator-placement.md).
type CoarsenSummary struct {
	Placement    string `json:"placement"`
	Devices      int    `json:"devices"`
	Memory       int    `json:"memory"`
	MicroBatches int    `json:"micro_batches"`
	Blocks       int    `json:"blocks"`
	CoarseBlocks int    `json:"coarse_blocks"`
	EdgeMerges   int    `json:"edge_merges"`
	PairMerges   int    `json:"pair_merges"`
	Unit         int    `json:"unit"`
	// CoarseMakespan is in units of Unit.
	CoarseMakespan int `json:"coarse_makespan"`
	// Expanded is the makespan of the coarse schedule expanded and
	// re-timed; Makespan is the answer's, HEFT's where ByHEFT.
	Expanded   int     `json:"expanded_makespan"`
	HEFT       int     `json:"heft_makespan,omitempty"`
	ByHEFT     bool    `json:"by_heft,omitempty"`
	Makespan   int     `json:"makespan"`
	BubbleRate float64 `json:"bubble_rate"`
	// LowerBound is the rules' bound (rules.LowerBounds) of the chosen
	// placement: of this choice of devices, not of every choice.
	LowerBound int `json:"lower_bound"`
	// OneDevice is the makespan of every block on one device, one after
	// another: the sum of their times (the least over the devices).
	OneDevice int            `json:"one_device"`
	Valid     bool           `json:"valid"`
	Seconds   CoarsenSeconds `json:"seconds"`
}

// CoarsenSeconds is the time each step of a coarsened search took.
type CoarsenSeconds struct {
	Coarsen float64 `json:"coarsen"`
	Solve   float64 `json:"solve"`
	Expand  float64 `json:"expand"`
	Total   float64 `json:"total"`
}

func roundedSecs(d time.Duration) float64 {
	return float64(d.Round(time.Millisecond)) / float64(time.Second)
}

// NewCoarsenSummary is the summary of s, the verified expanded schedule of
// a coarsened search, with r its report and total the whole time.
func NewCoarsenSummary(s *schedule.Schedule, r coarsen.Report, total time.Duration) CoarsenSummary {
	m := schedule.Measure(s)
	p := s.Placement
	return CoarsenSummary{
		Placement: p.Name, Devices: p.Devices, Memory: s.Memory, MicroBatches: s.MicroBatches,
		Blocks: r.Blocks, CoarseBlocks: r.Coarse, EdgeMerges: r.EdgeMerges, PairMerges: r.PairMerges, Unit: r.Unit,
		CoarseMakespan: r.CoarseMakespan, Expanded: r.Makespan, HEFT: r.HEFT, ByHEFT: r.ByHEFT, Makespan: m.Makespan, BubbleRate: m.BubbleRate,
		LowerBound: rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: s.MicroBatches, Memory: s.Memory}).Makespan, OneDevice: coarsen.OneDevice(s),
		Valid:   verify.Schedule(s) == nil,
		Seconds: CoarsenSeconds{Coarsen: roundedSecs(r.Coarsen), Solve: roundedSecs(r.Solve), Expand: roundedSecs(r.Expand), Total: roundedSecs(total)},
	}
}

// WriteText writes the summary as tessel search and optimal print it with
// --coarsen: what coarsening did, the schedule, and the time of each step.
func (sum CoarsenSummary) WriteText(w io.Writer, command string) error {
	_, err := fmt.Fprintf(w, "tessel %s: %s, %d devices, %d micro-batches, coarsened\n\n"+
		"coarsening   %d -> %d blocks (%d merges along edges, %d of unconnected pairs), time unit %d\n"+
		"coarse       makespan %d units of %d; expanded and re-timed: makespan %d%s\n"+
		"schedule     makespan %d (one device %d, speedup %.2f×), bubble rate %s, lower bound of this choice %d\n"+
		"valid        %s\n"+
		"time         coarsen %.3f s, solve %.3f s, expand %.3f s, total %.3f s\n",
		command, sum.Placement, sum.Devices, sum.MicroBatches,
		sum.Blocks, sum.CoarseBlocks, sum.EdgeMerges, sum.PairMerges, sum.Unit,
		sum.CoarseMakespan, sum.Unit, sum.Expanded, hefText(sum),
		sum.Makespan, sum.OneDevice, float64(sum.OneDevice)/float64(max(sum.Makespan, 1)), textfmt.Pct(sum.BubbleRate), sum.LowerBound,
		yesVerified(sum.Valid),
		sum.Seconds.Coarsen, sum.Seconds.Solve, sum.Seconds.Expand, sum.Seconds.Total)
	return err
}

func yesVerified(ok bool) string {
	if ok {
		return "yes (verified)"
	}
	return "NO"
}

// hefText says how the expanded schedule compares with HEFT's.
func hefText(sum CoarsenSummary) string {
	switch {
	case sum.HEFT == 0:
		return ""
	case sum.ByHEFT:
		return fmt.Sprintf("; HEFT's %d is shorter and is the answer", sum.HEFT)
	}
	return fmt.Sprintf("; HEFT's %d", sum.HEFT)
}
