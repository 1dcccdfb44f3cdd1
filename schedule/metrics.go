package schedule

import (
	"math"

	"tessel/placement"
)

// Bounds are lower bounds that no schedule of the placement can beat.
type Bounds struct {
	Period   int // of a repetend: max_d load_d of one micro-batch
	Makespan int // of N micro-batches; see LowerBounds
}

// Metrics are what a schedule achieves, measured from its start times.
type Metrics struct {
	Makespan   int
	BubbleRate float64 // idle device-time / (D × makespan)
	PeakMemory []int   // per device: the highest running memory, from 0, in start order
	Loads      []int   // per device: busy time over the whole schedule
	LowerBound Bounds
}

// Makespan is the latest end of any instance (0 for none). Instances of
// unknown blocks are skipped.
func Makespan(s *Schedule) int {
	if s == nil || s.Placement == nil {
		return 0
	}
	ms := 0
	for _, in := range s.Instances {
		if in.Block >= 0 && in.Block < len(s.Placement.Blocks) {
			ms = max(ms, in.Start+s.Placement.Blocks[in.Block].Time)
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
	p := s.Placement
	m.Makespan = Makespan(s)
	m.PeakMemory = make([]int, p.Devices)
	m.Loads = make([]int, p.Devices)
	for d, xs := range deviceInstances(s, nil) {
		sum := 0
		for _, x := range xs {
			b := p.Blocks[s.Instances[x].Block]
			m.Loads[d] += b.Time
			sum += b.Memory
			m.PeakMemory[d] = max(m.PeakMemory[d], sum)
		}
	}
	if m.Makespan > 0 {
		busy := 0
		for _, l := range m.Loads {
			busy += l
		}
		total := float64(p.Devices) * float64(m.Makespan)
		m.BubbleRate = (total - float64(busy)) / total
	}
	m.LowerBound = LowerBounds(p, s.MicroBatches)
	return m
}

// LowerBounds returns lower bounds for n micro-batches of p (which must be
// valid). Period = max_d load_d: a repetend runs every block once on each
// device. Makespan is the largest of:
//
//   - the critical path of one micro-batch (its dependency chain alone);
//   - max_d n·load_d: device d runs n·load_d of work, one block at a time;
//   - max_d (min head_d + n·load_d + min tail_d), where head_i (tail_i) is
//     the longest dependency path before (after) block i, transfer times
//     included (placement's Heads and Tails), and the minima run
//     over the blocks on d. Proof: the first instance device d runs, of some
//     block i, starts no earlier than head_i ≥ min head_d, since its
//     predecessors in the same micro-batch run before it; from then d is
//     busy for n·load_d in total, one instance at a time, so its last
//     instance, of some block j, ends at E ≥ min head_d + n·load_d; the
//     successors of that instance then need tail_j ≥ min tail_d more.
//
// For n ≤ 0 the makespan bound is 0.
func LowerBounds(p *placement.Placement, n int) Bounds {
	b := Bounds{Period: p.MaxLoad()}
	if n <= 0 {
		return b
	}
	b.Makespan = p.CriticalPath()
	heads, tails := p.Heads(), p.Tails()
	loads := p.Loads()
	for d, blocks := range p.DeviceBlocks() {
		if len(blocks) == 0 {
			continue
		}
		minHead, minTail := math.MaxInt, math.MaxInt
		for _, i := range blocks {
			minHead = min(minHead, heads[i])
			minTail = min(minTail, tails[i])
		}
		b.Makespan = max(b.Makespan, minHead+n*loads[d]+minTail)
	}
	return b
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
