package schedule

import (
	"fmt"
	"strconv"

	"github.com/tessel-pp/tessel/internal/textfmt"
)

// Latency of a schedule: the latency of micro-batch n is the time from
// the start of its first block to the end of its last (placement's
// "Latency"), what one request of an inference service waits.

// MicroLatency is one micro-batch's latency and the instances that make
// it: the first to start and the last to end.
type MicroLatency struct {
	Micro, Latency int
	First, Last    Ref
	Start, End     int
}

// Latencies is the latency of every micro-batch of s, by micro-batch;
// a micro-batch missing an instance, or one whose instance names no block,
// is measured from what is there (the verifier reports the rest). s must
// have a placement.
func Latencies(s *Schedule) []MicroLatency {
	p := s.Placement
	out := make([]MicroLatency, s.MicroBatches)
	seen := make([]bool, s.MicroBatches)
	for _, in := range s.Instances {
		if in.Micro < 0 || in.Micro >= s.MicroBatches || in.Block < 0 || in.Block >= len(p.Blocks) {
			continue
		}
		m := &out[in.Micro]
		end := in.Start + p.Blocks[in.Block].Time
		if !seen[in.Micro] {
			*m = MicroLatency{Micro: in.Micro, First: in.Ref(), Last: in.Ref(), Start: in.Start, End: end}
			seen[in.Micro] = true
		}
		if in.Start < m.Start || (in.Start == m.Start && in.Block < m.First.Block) {
			m.Start, m.First = in.Start, in.Ref()
		}
		if end > m.End || (end == m.End && in.Block < m.Last.Block) {
			m.End, m.Last = end, in.Ref()
		}
	}
	for n := range out {
		out[n].Micro = n
		out[n].Latency = out[n].End - out[n].Start
	}
	return out
}

// LatencyStats are a schedule's latency figures: the largest and the
// mean latency of its micro-batches, and the throughput of its steady
// state in micro-batches (requests) per time unit: micro-batches per
// period where the schedule has a steady state (SteadyOf), N / makespan
// otherwise.
type LatencyStats struct {
	Max        int
	Mean       float64
	Throughput float64
}

// MeasureLatency is s's LatencyStats; s must be verified.
func MeasureLatency(s *Schedule) LatencyStats {
	return MeasureLatencyOf(s, SteadyOf(s))
}

// MeasureLatencyOf is MeasureLatency with s's steady state st
// (SteadyOf(s)) already known: a report that shows both finds it once.
func MeasureLatencyOf(s *Schedule, st *SteadyState) LatencyStats {
	ls := Latencies(s)
	var out LatencyStats
	sum := 0
	for _, l := range ls {
		out.Max = max(out.Max, l.Latency)
		sum += l.Latency
	}
	if len(ls) > 0 {
		out.Mean = float64(sum) / float64(len(ls))
	}
	if st != nil && st.Period > 0 {
		out.Throughput = float64(st.PerPeriod) / float64(st.Period)
	} else if ms := Makespan(s); ms > 0 {
		out.Throughput = float64(s.MicroBatches) / float64(ms)
	}
	return out
}

// ShowsLatency reports whether a report on s speaks of latency without
// being asked: s has a latency budget, or its placement is an inference
// placement (every block a forward). Reports on training schedules stay
// as they were.
func ShowsLatency(s *Schedule) bool {
	return s.Latency > 0 || s.Placement.Inference()
}

// LatencyText is s's latency figures for people, e.g. "max 4, mean 4,
// throughput 1 per time unit (budget 4)"; s must be verified.
func LatencyText(s *Schedule) string {
	st := MeasureLatency(s)
	if u := s.Placement.Units; u.Named() {
		// In time where the placement says what a step is: the
		// throughput per second.
		t := fmt.Sprintf("max %s, mean %s, throughput %s per second", u.Duration(float64(st.Max)), u.Duration(st.Mean),
			strconv.FormatFloat(roundRate(st.Throughput/u.Seconds(1)), 'f', -1, 64))
		if s.Latency > 0 {
			t += fmt.Sprintf(" (budget %s)", u.Duration(float64(s.Latency)))
		}
		return t
	}
	t := fmt.Sprintf("max %d, mean %s, throughput %s per time unit", st.Max, strconv.FormatFloat(roundRate(st.Mean), 'f', -1, 64),
		strconv.FormatFloat(roundRate(st.Throughput), 'f', -1, 64))
	if s.Latency > 0 {
		t += fmt.Sprintf(" (budget %d)", s.Latency)
	}
	return t
}

// LatencySummary is the latency per micro-batch (its first block's start
// to its last block's end: max and mean), the throughput of the steady
// state in micro-batches per time unit, and the latency budget (omitted
// without one): MeasureLatency as the --json reports give it.
type LatencySummary struct {
	Max        int     `json:"max"`
	Mean       float64 `json:"mean"`
	Throughput float64 `json:"throughput"`
	Budget     int     `json:"budget,omitempty"`
}

// SummarizeLatency is s's LatencySummary, the mean and the throughput
// rounded to six decimals; s must be verified.
func SummarizeLatency(s *Schedule) LatencySummary {
	return SummarizeLatencyOf(s, SteadyOf(s))
}

// SummarizeLatencyOf is SummarizeLatency with s's steady state steady
// (SteadyOf(s)) already known: a report that shows both finds it once.
func SummarizeLatencyOf(s *Schedule, steady *SteadyState) LatencySummary {
	st := MeasureLatencyOf(s, steady)
	return LatencySummary{Max: st.Max, Mean: textfmt.Round6(st.Mean), Throughput: textfmt.Round6(st.Throughput), Budget: s.Latency}
}
