package construct

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// LatencyList is a list schedule of n micro-batches of p under a latency
// budget (placement's "Latency"; 0: none): micro-batch after
// micro-batch, each block at the earliest time its dependencies and its
// devices allow, filling gaps that earlier micro-batches left; where a
// micro-batch would take longer than the budget, its first blocks are
// delayed (its release moves later, by at least the excess) until it
// finishes within it. Alone on the devices a micro-batch takes its
// latency with one block of a device at a time: a budget below that is an
// error. The memory budget is checked, not planned for (the schedule is
// an error when it is over it): inference placements hold no memory.
// The result is compacted under the budget (schedule.CompactLatency) and
// verified.
func LatencyList(p *placement.Placement, n, memory, budget int) (*schedule.Schedule, error) {
	if err := checkArgs(p, n, memory); err != nil {
		return nil, err
	}
	if err := p.CheckLatency(budget); err != nil {
		return nil, fmt.Errorf("construct: %w", err)
	}
	topo, _ := p.Topo()
	preds := p.PredDeps()
	busy := make([][][2]int, p.Devices) // sorted, disjoint [start, end) per device
	// fits is the earliest t ≥ at with [t, t+dur) free on every device of devs.
	fits := func(devs []int, at, dur int) int {
		for {
			moved := false
			for _, d := range devs {
				iv := busy[d]
				k := sort.Search(len(iv), func(k int) bool { return iv[k][1] > at })
				if k < len(iv) && iv[k][0] < at+dur {
					at, moved = iv[k][1], true
				}
			}
			if !moved {
				return at
			}
		}
	}
	place := func(release int) []int {
		starts := make([]int, len(p.Blocks))
		for _, i := range topo {
			at := release
			for _, d := range preds[i] {
				at = max(at, starts[d.From]+p.Delay(d))
			}
			starts[i] = fits(p.Blocks[i].Devices, at, p.Blocks[i].Time)
		}
		return starts
	}
	ins := make([]schedule.Instance, 0, n*len(p.Blocks))
	release := 0
	for m := range n {
		var starts []int
		for {
			starts = place(release)
			lat := p.Latency(starts)
			if budget <= 0 || lat <= budget {
				break
			}
			last := 0
			for _, iv := range busy {
				if len(iv) > 0 {
					last = max(last, iv[len(iv)-1][1])
				}
			}
			if release >= last {
				return nil, fmt.Errorf("construct: placement %q: one micro-batch alone takes %d > latency budget %d with one block of a device at a time", p.Name, lat, budget)
			}
			release = min(release+lat-budget, last)
		}
		first := starts[0]
		for i, s := range starts {
			first = min(first, s)
			ins = append(ins, schedule.Instance{Block: i, Micro: m, Start: s})
			for _, d := range p.Blocks[i].Devices {
				iv := busy[d]
				k := sort.Search(len(iv), func(k int) bool { return iv[k][0] > s })
				busy[d] = slices.Insert(iv, k, [2]int{s, s + p.Blocks[i].Time})
			}
		}
		release = first // micro-batches start in order
	}
	s := &schedule.Schedule{Placement: p, MicroBatches: n, Memory: memory, Latency: budget, Instances: ins}
	compact, err := schedule.CompactLatency(p, n, schedule.Orders(s), budget)
	if err == nil {
		c := *s
		c.Instances = compact
		if schedule.Verify(&c) == nil && schedule.Makespan(&c) <= schedule.Makespan(s) {
			s = &c
		}
	}
	if err := schedule.Verify(s); err != nil {
		return nil, fmt.Errorf("construct: placement %q: latency list schedule: %w", p.Name, err)
	}
	return s, nil
}

// WithLatency is s re-timed under a latency budget: its device orders
// compacted under the budget (schedule.CompactLatency), verified with the
// budget recorded. ok is false when its orders meet no schedule within
// the budget. Decisions are not carried: a schedule with decisions is
// not re-timed (ok false).
func WithLatency(s *schedule.Schedule, budget int) (out *schedule.Schedule, ok bool) {
	if s == nil || len(s.Decisions) > 0 {
		return nil, false
	}
	t := *s
	t.Latency = budget
	t.Claimed = nil
	if schedule.Verify(&t) == nil {
		return &t, true
	}
	ins, err := schedule.CompactLatency(s.Placement, s.MicroBatches, schedule.Orders(s), budget)
	if err != nil {
		return nil, false
	}
	t.Instances, t.Repetend = ins, nil
	if schedule.Verify(&t) != nil {
		return nil, false
	}
	return &t, true
}

// LatencyPortfolio is PortfolioWith under a latency budget (> 0): every
// candidate of the portfolio re-timed under the budget (WithLatency) where
// its orders allow, and the latency list schedule (LatencyList, named
// "list/latency"), best first as the portfolio orders them. Decisions
// (offload, recompute) are not combined with a budget.
func LatencyPortfolio(ctx context.Context, p *placement.Placement, o PortfolioOptions, budget int) ([]Candidate, error) {
	if err := p.CheckLatency(budget); err != nil {
		return nil, fmt.Errorf("construct: %w", err)
	}
	o.Offload, o.Recompute = false, false
	cands, err := PortfolioWith(ctx, p, o)
	if err != nil {
		return nil, err
	}
	var out []Candidate
	if s, err := LatencyList(p, o.MicroBatches, o.Memory, budget); err == nil {
		out = append(out, Candidate{Name: "list/latency", Schedule: s, Makespan: schedule.Makespan(s)})
	}
	for _, c := range cands {
		s, ok := WithLatency(c.Schedule, budget)
		if !ok {
			continue
		}
		if !slices.Equal(s.Instances, c.Schedule.Instances) {
			c.Periodic = nil // re-timed: no longer the modulo schedule
		}
		c.Schedule, c.Makespan = s, schedule.Makespan(s)
		out = append(out, c)
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Makespan < out[b].Makespan })
	return out, nil
}
