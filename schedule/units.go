package schedule

import "github.com/tessel-pp/tessel/internal/textfmt"

// UnitsSummary is a schedule's figures in a person's units: Time is the
// model's time unit ("" where it names none), Step one placement step in
// it, SearchStep the steps of one step of the search's copy (in which
// nr, period and offsets are; omitted where the search ran on the
// placement itself), MemoryBytes one memory unit in bytes; then the
// makespan, its lower bound and the steady state's time per micro-batch
// in Time, and the peak memory and the budgets in bytes.
type UnitsSummary struct {
	Time              string    `json:"time,omitempty"`
	Step              float64   `json:"step,omitempty"`
	SearchStep        int       `json:"search_step,omitempty"`
	MemoryBytes       float64   `json:"memory_bytes,omitempty"`
	Makespan          *float64  `json:"makespan,omitempty"`
	LowerBound        *float64  `json:"lower_bound,omitempty"`
	TimePerMicroBatch *float64  `json:"time_per_micro_batch,omitempty"`
	PeakMemoryBytes   []float64 `json:"peak_memory_bytes,omitempty"`
	BudgetBytes       []float64 `json:"budget_bytes,omitempty"`
}

// SummarizeUnits is s's figures in its placement's units (nil where the
// placement states none), as the --json reports give them, lowerBound
// being the makespan's lower bound of s's spec (rules.LowerBounds); s
// must be verified.
func SummarizeUnits(s *Schedule, lowerBound int) *UnitsSummary {
	u := s.Placement.Units
	if u == nil {
		return nil
	}
	m := Measure(s)
	out := &UnitsSummary{Time: u.Time, Step: u.Step, MemoryBytes: u.MemoryBytes}
	if u.Search > 1 {
		out.SearchStep = u.Search
	}
	if u.HasTime() {
		out.Makespan = textfmt.Ptr(textfmt.Round6(u.InUnit(float64(m.Makespan))))
		out.LowerBound = textfmt.Ptr(textfmt.Round6(u.InUnit(float64(lowerBound))))
		if st := SteadyOf(s); st != nil {
			out.TimePerMicroBatch = textfmt.Ptr(textfmt.Round6(u.InUnit(st.TimePerMicroBatch())))
		}
	}
	if u.HasMemory() {
		for _, x := range m.PeakMemory {
			out.PeakMemoryBytes = append(out.PeakMemoryBytes, float64(x)*u.MemoryBytes)
		}
		for _, x := range s.Budgets() {
			out.BudgetBytes = append(out.BudgetBytes, float64(x)*u.MemoryBytes)
		}
	}
	return out
}
