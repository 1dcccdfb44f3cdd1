package pairs

import (
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
)

var _ rule.Merger = Rule{}

// Merge makes each overlapped pair kept (rule.Merging's Pairs) one
// variable, its forward's, every instance of it occupying its devices
// for the pair's time (placement's OverlapGroup), checking the pairs as
// it reads them: each allowed by the placement's rule, of two
// micro-batches in range, and an instance in one pair at most. Pairs on
// links that carry one transfer at a time are refused (Excludes).
func (Rule) Merge(m *rule.Merging) error {
	if len(m.Pairs) == 0 {
		return nil
	}
	p, n := m.Spec.Placement, m.Spec.MicroBatches
	if (links.Rule{}).On(m.Spec) {
		return errors.New("overlapped pairs on a cluster with channels: not supported")
	}
	name := func(r schedule.Ref) string { return p.Blocks[r.Block].ID + fmt.Sprintf("^%d", r.Micro) }
	roles := p.Roles()
	for _, q := range m.Pairs {
		refs, t, why := schedule.PairGroup(p, roles, q)
		if why == "" && q.Forward.Micro == q.Backward.Micro {
			why = "one micro-batch"
		}
		if why != "" {
			return fmt.Errorf("pair %s+%s: %s", name(q.Forward), name(q.Backward), why)
		}
		for _, r := range refs {
			if r.Micro < 0 || r.Micro >= n {
				return fmt.Errorf("pair %s+%s: micro-batch out of range", name(q.Forward), name(q.Backward))
			}
			if !m.Join(r, q.Forward, t) {
				return fmt.Errorf("%s is in two pairs", name(r))
			}
		}
	}
	return nil
}
