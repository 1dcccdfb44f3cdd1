package schedule

import (
	"context"
	"math"

	"github.com/tessel-pp/tessel/placement"
)

// Metrics are what a schedule achieves, measured from its start times.
// The lower bounds of its spec are not among them: they are the rules'
// (rules.LowerBounds), which sit above this package.
type Metrics struct {
	Makespan   int
	BubbleRate float64 // idle device-time / (D × makespan)
	PeakMemory []int   // per device: the highest running memory, from 0, in start order (offloads and recomputes counted)
	Loads      []int   // per device: busy time over the whole schedule (recomputes included)
}

// Makespan is the latest end of any instance (0 for none). Instances of
// unknown blocks are skipped.
func Makespan(s *Schedule) int {
	if s == nil || s.Placement == nil {
		return 0
	}
	if fromForm(s) {
		return measurePeriodic(s, false).Makespan
	}
	ms := 0
	pg := newPairing(s, nil)
	for _, in := range s.Instances {
		if in.Block >= 0 && in.Block < len(s.Placement.Blocks) {
			ms = max(ms, in.Start+pg.dur(s.Placement, in.Ref()))
		}
	}
	return ms
}

// Measure computes the metrics of s. It does not verify s: on an invalid
// schedule the numbers describe the start times as given (instances of
// unknown blocks are skipped), and the bubble rate of overlapping instances
// can be negative.
func Measure(s *Schedule) Metrics {
	var m Metrics
	if s == nil || s.Placement == nil {
		return m
	}
	if fromForm(s) {
		return measurePeriodic(s, true)
	} else if s.Periodic != nil && s.Instances == nil {
		if full, err := s.Materialize(context.Background()); err == nil {
			return Measure(full)
		}
	}
	p := s.Placement
	m.Makespan = Makespan(s)
	m.PeakMemory = make([]int, p.Devices)
	m.Loads = make([]int, p.Devices)
	xs := deviceInstances(s, nil)
	pg := newPairing(s, nil)
	for d, xs := range xs {
		for _, x := range xs {
			if r := s.Instances[x].Ref(); !pg.follower(r) {
				m.Loads[d] += pg.dur(p, r)
			}
		}
	}
	for _, rr := range Reruns(s) {
		for _, d := range p.Blocks[rr.Ref.Block].Devices {
			m.Loads[d] += p.Blocks[rr.Ref.Block].Time
		}
	}
	for d, evs := range memoryEvents(s, xs, nil) {
		sum := 0
		for _, e := range evs {
			sum += e.delta
			m.PeakMemory[d] = max(m.PeakMemory[d], sum)
		}
	}
	m.finish(s)
	return m
}

// finish sets the bubble rate, from the makespan and loads.
func (m *Metrics) finish(s *Schedule) {
	if m.Makespan > 0 {
		busy := 0
		for _, l := range m.Loads {
			busy += l
		}
		total := float64(s.Placement.Devices) * float64(m.Makespan)
		m.BubbleRate = (total - float64(busy)) / total
	}
}

// RepetendBubbleRate is (D·P − Σ_d load_d) / (D·P): the bubble rate of a
// repetend schedule with period P as the number of micro-batches grows.
// It is 0 for a period below 1.
func RepetendBubbleRate(p *placement.Placement, period int) float64 {
	if period < 1 {
		return 0
	}
	busy := 0
	for _, l := range p.Loads() {
		busy += l
	}
	total := float64(p.Devices) * float64(period)
	return (total - float64(busy)) / total
}

// roundRate rounds a rate to 6 decimals, as schedule files store it.
func roundRate(x float64) float64 { return math.Round(x*1e6) / 1e6 }
