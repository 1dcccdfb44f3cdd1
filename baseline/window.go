package baseline

import (
	"errors"
	"slices"

	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// # Baselines carried from a window of micro-batches
//
// A baseline's rule runs every micro-batch of its steady phase the same
// way, so its schedule of N micro-batches repeats by micro-batch between
// its fill and its drain. Building it at N costs a compaction and a
// verification that follow N (seconds at N = 10,000 for the baselines
// that decide); built on a window of w micro-batches and extended
// periodically (schedule.ExtendPeriodic) it costs the window's build and
// one verification at N.

// Carrier builds baselines on a window of W micro-batches and carries
// them to N (Build). Two baselines whose window schedules are the same
// (PipeOffload and AdaOffload where the budget leaves AdaOffload no
// denser fill) share one extension and its verification.
type Carrier struct {
	W    int
	seen []carried
}

// carried is a window's schedule and its extension (nil: none).
type carried struct {
	win, ext *schedule.Schedule
}

// Build is m's schedule of sp: built on c.W micro-batches and extended
// periodically to sp.MicroBatches where the window's schedule repeats by
// micro-batch (schedule.FindPeriodicity) and N − W is a multiple of its
// micro-batches per period, the extension passing verify.Schedule; built
// on all N micro-batches otherwise (W ≤ 0 or W ≥ N, a rule not
// applicable or stuck on the window, no periodic stretch, an extension
// that fails verification).
//
// A window whose schedule is over the budget answers for N, with no
// schedule and the window's error (wrapping ErrOverBudget): a
// baseline's fixed rule holds at least as many activations with more
// micro-batches (its fill is the window's), so its peak does not fall
// as N grows.
func (c *Carrier) Build(m Baseline, sp spec.Spec) (*schedule.Schedule, error) {
	n := sp.MicroBatches
	if c.W <= 0 || c.W >= n {
		return m.Build(sp)
	}
	s, err := m.Build(sp.WithMicroBatches(c.W))
	switch {
	case errors.Is(err, ErrOverBudget):
		return nil, err
	case err != nil:
		return m.Build(sp)
	}
	if e := c.extend(s, n); e != nil {
		return e, nil
	}
	return m.Build(sp)
}

// extend is s carried periodically to n micro-batches and verified, nil
// where it does not repeat or the extension fails verification; an s
// seen before gets the same answer.
func (c *Carrier) extend(s *schedule.Schedule, n int) *schedule.Schedule {
	for _, x := range c.seen {
		if sameSchedule(x.win, s) {
			return x.ext
		}
	}
	var ext *schedule.Schedule
	if per, ok := schedule.FindPeriodicity(s); ok && (n-s.MicroBatches)%per.PerPeriod == 0 {
		if e, err := schedule.ExtendPeriodic(s, per, n); err == nil && verify.Schedule(e) == nil {
			ext = e
		}
	}
	c.seen = append(c.seen, carried{s, ext})
	return ext
}

// sameSchedule reports whether a and b are one schedule: the same spec
// and the same instances, decisions and pairs, in order.
func sameSchedule(a, b *schedule.Schedule) bool {
	return a.MicroBatches == b.MicroBatches && a.Memory == b.Memory && a.Placement.Equal(b.Placement) &&
		a.Repetend == nil && b.Repetend == nil && a.LinkOrder == nil && b.LinkOrder == nil && a.Shards == nil && b.Shards == nil &&
		slices.Equal(a.Instances, b.Instances) && slices.Equal(a.Decisions, b.Decisions) && slices.Equal(a.Pairs, b.Pairs)
}
