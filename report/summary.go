package report

import (
	"maps"

	"github.com/tessel-pp/tessel/exact"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/rule/latency"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/verify"
)

// Summary is a schedule and how it was found, in the JSON form tessel
// search, optimal and plan print with --json (docs/formats.md, "Summary
// output"). Optional parts are omitted when empty.
type Summary struct {
	Placement          string         `json:"placement"`
	Devices            int            `json:"devices"`
	Memory             int            `json:"memory"`
	Budgets            []int          `json:"budgets,omitempty"`  // every device's, where they differ (a cluster's memories)
	QueuedLinks        bool           `json:"channels,omitempty"` // links carry one transfer at a time
	Method             string         `json:"method"`
	NR                 int            `json:"nr,omitempty"`
	Period             int            `json:"period,omitempty"`
	RepetendBubbleRate *float64       `json:"repetend_bubble_rate,omitempty"`
	Offsets            map[string]int `json:"offsets,omitempty"`
	// RepetendUsed says whether the schedule repeats the repetend above
	// (nr, period, offsets); where it does not, SteadyState is the
	// schedule's own.
	RepetendUsed *bool          `json:"repetend_used,omitempty"`
	SteadyState  *SummarySteady `json:"steady_state,omitempty"`
	MicroBatches int            `json:"micro_batches"`
	Makespan     int            `json:"makespan"`
	BubbleRate   float64        `json:"bubble_rate"`
	PeakMemory   []int          `json:"peak_memory"`
	// Offloaded and Recomputed count the instances whose activation the
	// schedule offloads and recomputes; present only where the search
	// could decide (--offload, --recompute: WithDecisions).
	Offloaded  *int `json:"offloaded,omitempty"`
	Recomputed *int `json:"recomputed,omitempty"`
	// Latency is every schedule's latency figures (schedule's
	// MeasureLatency), the budget where there is one.
	Latency    schedule.LatencySummary `json:"latency"`
	LowerBound SummaryBounds           `json:"lower_bound"`
	Valid      bool                    `json:"valid"`
	// FromPeriod says that the schedule was checked from its period
	// (a periodic schedule: package verify, "A schedule checked from
	// its period"); omitted otherwise.
	FromPeriod   bool            `json:"checked_from_period,omitempty"`
	Proven       bool            `json:"proven"`
	PeriodProven *bool           `json:"period_proven,omitempty"`
	Gap          *int            `json:"gap,omitempty"`
	Source       string          `json:"source,omitempty"`
	Enumeration  *SummaryOffsets `json:"candidates,omitempty"`
	Seconds      SummarySeconds  `json:"seconds"`
	// Stopped says why the search ended early (Result.Stopped): at a
	// time limit, the answer depends on the time given.
	Stopped string `json:"stopped,omitempty"`
	// Chosen is the devices of every block with candidates, by block id,
	// where the search chose them (docs/placement-search.md).
	Chosen map[string][]int `json:"chosen,omitempty"`
	// Units, for a placement that says what its steps and memory units
	// are (placement's Units: one made from a model), is the schedule's
	// figures in time and bytes; omitted otherwise.
	Units *schedule.UnitsSummary `json:"units,omitempty"`

	steady steadyOf // for WriteText
}

// SummaryBounds are the lower bounds of the period and the makespan.
type SummaryBounds struct {
	Period   int `json:"period"`
	Makespan int `json:"makespan"`
	// By says what proves Makespan (the time-optimal search only).
	By string `json:"by,omitempty"`
}

// SummarySteady is the steady state of the schedule returned
// (schedule.SteadyOf): its period for micro_batches_per_period more
// micro-batches, the N_R of its longest periodic stretch, the bubble rate
// as N grows, and the stretches (one after another, every block in one).
type SummarySteady struct {
	Period     int              `json:"period"`
	PerPeriod  int              `json:"micro_batches_per_period"`
	NR         int              `json:"nr"`
	BubbleRate float64          `json:"bubble_rate"`
	Stretches  []SummaryStretch `json:"stretches"`
}

// SummaryStretch is one periodic stretch of a steady state.
type SummaryStretch struct {
	Start      int      `json:"start"`
	Period     int      `json:"period"`
	PerPeriod  int      `json:"micro_batches_per_period"`
	Iterations int      `json:"iterations"`
	NR         int      `json:"nr"`
	Blocks     []string `json:"blocks"`
}

// SteadySummary is s's steady state for the summary (nil when it has
// none).
func SteadySummary(s *schedule.Schedule) *SummarySteady {
	return steadySummary(s, schedule.SteadyOf(s))
}

// steadySummary is SteadySummary with s's steady state st known.
func steadySummary(s *schedule.Schedule, st *schedule.SteadyState) *SummarySteady {
	if st == nil {
		return nil
	}
	out := &SummarySteady{Period: st.Period, PerPeriod: st.PerPeriod, NR: st.NR, BubbleRate: textfmt.Round6(st.BubbleRate)}
	for _, x := range st.Stretches {
		ids := make([]string, len(x.Blocks))
		for k, i := range x.Blocks {
			ids[k] = s.Placement.Blocks[i].ID
		}
		out.Stretches = append(out.Stretches, SummaryStretch{Start: x.Start, Period: x.Period, PerPeriod: x.PerPeriod, Iterations: x.Iterations, NR: x.NR, Blocks: ids})
	}
	return out
}

// SummaryOffsets count the repetend search's candidate offsets
// (repetend.Stats).
type SummaryOffsets struct {
	Seen     int `json:"seen"`
	Pruned   int `json:"pruned"`
	Solved   int `json:"solved"`
	Rejected int `json:"rejected"`
	Checks   int `json:"solver_calls"`
}

// SummarySeconds split the search time (Times), in seconds.
type SummarySeconds struct {
	Total         float64 `json:"total"`
	Constructions float64 `json:"constructions"`
	Repetend      float64 `json:"repetend"`
	Warmup        float64 `json:"warmup"`
	Cooldown      float64 `json:"cooldown"`
	Refine        float64 `json:"refine"`
}

// NewSummary fills what every schedule has; s must be verified.
func NewSummary(s *schedule.Schedule, method string, proven bool) Summary {
	return newSummary(s, schedule.SteadyOf(s), method, proven, false)
}

// newSummary is NewSummary with s's steady state st known; the summary
// keeps it for the text report (steady), so that it is found once.
// verified says that s was verified where it was built (an extension to
// N, verified in package search), so that it is not checked twice.
func newSummary(s *schedule.Schedule, st *schedule.SteadyState, method string, proven, verified bool) Summary {
	m, lb := schedule.Measure(s), rules.LowerBounds(s.Spec)
	var budgets []int
	if !s.Placement.Uniform(s.Memory) {
		budgets = s.Budgets()
	}
	return Summary{
		Budgets:      budgets,
		QueuedLinks:  links.Queued(s.Placement),
		Placement:    s.Placement.Name,
		Devices:      s.Placement.Devices,
		Memory:       s.Memory,
		Method:       method,
		MicroBatches: s.MicroBatches,
		Makespan:     m.Makespan,
		BubbleRate:   textfmt.Round6(m.BubbleRate),
		PeakMemory:   m.PeakMemory,
		Latency:      schedule.SummarizeLatencyOf(s, st),
		LowerBound:   SummaryBounds{Period: lb.Period, Makespan: lb.Makespan},
		Valid:        verified || verify.Schedule(s) == nil,
		FromPeriod:   verify.FromPeriod(s),
		Proven:       proven,
		Chosen:       chosen(s.Placement),
		Units:        schedule.SummarizeUnits(s, lb.Makespan),
		steady:       steadyOf{s: s, st: st},
	}
}

// steadyOf is a schedule's steady state, found once for its reports.
type steadyOf struct {
	s  *schedule.Schedule
	st *schedule.SteadyState
	// unsought says that st was not looked for (schedule.SteadyWithin).
	unsought bool
}

// of is schedule.SteadyOf(s), the one known when it is s's.
func (k steadyOf) of(s *schedule.Schedule) *schedule.SteadyState {
	if k.s == s && s != nil {
		return k.st
	}
	return schedule.SteadyOf(s)
}

// text is schedule.SteadyText of s, from the steady state known when it
// is s's.
func (k steadyOf) text(s *schedule.Schedule) string {
	if k.s == s && s != nil {
		if k.unsought {
			return schedule.SteadyNotSought
		}
		return schedule.SteadyTextOf(s, k.st)
	}
	return schedule.SteadyText(s)
}

// chosen is Summary.Chosen: nil without candidates.
func chosen(p *placement.Placement) map[string][]int {
	var out map[string][]int
	for _, b := range p.Blocks {
		if len(b.Candidates) > 0 && b.Devices != nil {
			if out == nil {
				out = map[string][]int{}
			}
			out[b.ID] = b.Devices
		}
	}
	return out
}

// SearchSummary is r's schedule, how it was built and its repetend;
// method names the repetend search where the solver's did not run.
func SearchSummary(r *search.Result, method repetend.Strategy) Summary {
	s, p := r.Schedule, r.Schedule.Placement
	name := string(method)
	if r.Search != nil {
		name = string(r.Search.Strategy)
	}
	st, sought := r.Steady, true // known where the search extended a window
	switch {
	case st != nil:
	case r.Stopped != "":
		// After a stop the report does no work that grows with the
		// schedule beyond checking it: the steady state only where s
		// records its repetend.
		st = schedule.RecordedSteady(s)
		sought = st != nil
	default:
		st, sought = schedule.SteadyWithin(s)
	}
	sum := newSummary(s, st, name, r.Proven(), r.Window > 0)
	sum.steady.unsought = !sought
	if r.Assigned {
		// Bounds over every choice of devices, not the chosen one's.
		sum.LowerBound = SummaryBounds{Period: r.Bounds.Period, Makespan: r.Bounds.Makespan}
	}
	if r.BoundBy == latency.By && !r.Assigned {
		sum.LowerBound.By = r.BoundBy.String()
	}
	sum.Source = r.Source.String()
	sum.Stopped = r.Stopped
	sum.Gap = textfmt.Ptr(r.Gap())
	secs := textfmt.Secs
	sum.Seconds = SummarySeconds{Total: secs(r.Times.Total), Constructions: secs(r.Times.Constructions), Repetend: secs(r.Times.Repetend), Warmup: secs(r.Times.Warmup), Cooldown: secs(r.Times.Cooldown), Refine: secs(r.Times.Refine)}
	sum.SteadyState = steadySummary(s, st)
	if r.Search != nil {
		st := r.Search.Stats
		sum.Enumeration = &SummaryOffsets{Seen: st.Seen, Pruned: st.Pruned, Solved: st.Solved, Rejected: st.Rejected, Checks: st.Checks}
	}
	if rp := r.Repetend; rp != nil {
		rate := schedule.RepetendBubbleRate(p, rp.Period)
		sum.NR, sum.Period, sum.RepetendBubbleRate = rp.NR, rp.Period, &rate
		sum.PeriodProven = textfmt.Ptr(r.PeriodProven())
		sum.RepetendUsed = textfmt.Ptr(r.RepetendUsed())
		sum.Offsets = map[string]int{}
		for i, b := range p.Blocks {
			sum.Offsets[b.ID] = rp.Offsets[i]
		}
	}
	return sum
}

// ExactSummary is the summary of a search on a placement's coarse copy
// (package exact): SearchSummary of r.Search with the figures of the
// answer, r.Schedule — makespan, bubble rate, peak memory, latency,
// lower bound, steady state, gap and the verifier's verdict at the
// placement's own times; the repetend's (nr, period, offsets, its bubble
// rate) and the proofs stay the search's, in the copy's steps, which
// Units.SearchStep says. Without a coarse copy it is SearchSummary.
func ExactSummary(r *exact.Result, method repetend.Strategy) Summary {
	sum := SearchSummary(r.Search, method)
	if !r.Coarse() {
		return sum
	}
	fine := NewSummary(r.Schedule, sum.Method, sum.Proven)
	fine.NR, fine.Period, fine.RepetendBubbleRate = sum.NR, sum.Period, sum.RepetendBubbleRate
	fine.Offsets, fine.RepetendUsed, fine.PeriodProven = maps.Clone(sum.Offsets), sum.RepetendUsed, sum.PeriodProven
	fine.Source, fine.Enumeration, fine.Seconds = sum.Source, sum.Enumeration, sum.Seconds
	fine.SteadyState = SteadySummary(r.Schedule)
	gap := fine.Makespan - fine.LowerBound.Makespan
	fine.Gap = &gap
	return fine
}

// WithDecisions sets Offloaded and Recomputed from s's decisions.
func (sum *Summary) WithDecisions(s *schedule.Schedule) {
	off, rec := s.Count()
	sum.Offloaded, sum.Recomputed = &off, &rec
}
