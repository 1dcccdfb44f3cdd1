package fsdp

import (
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/rule"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Rule is the rule of sharded stages, registered with the others
// (rules.All): the verifier runs its Check on every schedule.
type Rule struct{}

var _ interface {
	rule.Rule
	rule.Bounder
	rule.Retimer
	rule.Refuser
} = Rule{}

// Name is "fsdp".
func (Rule) Name() string { return Name }

// Title is "sharded stages" (rule.Titled).
func (Rule) Title() string { return "sharded stages" }

// On reports whether sp shards stages.
func (Rule) On(sp spec.Spec) bool { return sp.Sharding != nil }

// Excludes names what sharded stages are not combined with yet: the
// latency budget, decisions (rule hostchan) and overlapped pairs.
func (Rule) Excludes() []string { return []string{"latency", "hostchan", "pairs"} }

// Check reports the rule's violations in c's schedule: FSDP actions
// without a spec that shards stages, a combination Excludes names, and
// the breaches of the rule (each naming its rank and stage).
func (Rule) Check(c *rule.Checked, r *rule.Report) {
	s := c.S
	if s.Sharding == nil {
		if len(s.Shards) > 0 {
			r.Add(schedule.Sharded, -1, nil, "FSDP actions on a schedule whose spec shards no stage")
		}
		return
	}
	if err := Excludes(s); err != nil {
		r.Add(schedule.Sharded, -1, nil, "%v", err)
		return
	}
	rs, err := resolve(ModelOf(s.Sharding), s.Placement)
	if err != nil {
		r.Add(schedule.Sharded, -1, nil, "%v", err)
		return
	}
	for _, v := range violations(s, rs, PlanOf(s.Shards)) {
		r.Add(schedule.Sharded, v.Rank, nil, "%s", v.Text)
	}
}

// Refuse refuses release times (Retiming.Release) of an instance out of
// the spec's range.
func (Rule) Refuse(t *rule.Retiming) error {
	p, n := t.Spec.Placement, t.Spec.MicroBatches
	if t.Release == nil || p == nil || n <= 0 {
		return nil
	}
	for r := range t.Release {
		if r.Block < 0 || r.Block >= len(p.Blocks) || r.Micro < 0 || r.Micro >= n {
			return fmt.Errorf("release time of an instance out of range (block %d, micro-batch %d)", r.Block, r.Micro)
		}
	}
	return nil
}

// Constrain adds the release times of a compaction (Retiming.Release:
// a compute of a sharded stage waits for its gather, fsdpplan's Time) as
// floors of their instances' variables: v ≥ max(release, 0). The
// compaction is of the spec without its sharding, so it runs whatever
// the spec switches on.
func (Rule) Constrain(t *rule.Retiming) error {
	for r, at := range t.Release {
		t.Sys.Least(t.Var(r), max(at, 0))
	}
	return nil
}

// Sharding is m as the spec holds it.
func (m Model) Sharding() *spec.Sharding {
	return &spec.Sharding{Stages: slices.Clone(m.Stages), MaxActive: m.MaxActive, PerMicroBatch: m.Per == PerMicroBatch}
}

// ModelOf is the model a spec's sharding states.
func ModelOf(sh *spec.Sharding) Model {
	m := Model{Stages: slices.Clone(sh.Stages), MaxActive: sh.MaxActive, Per: PerIteration}
	if sh.PerMicroBatch {
		m.Per = PerMicroBatch
	}
	return m
}

// Shards is the plan as a schedule carries it.
func (p Plan) Shards() [][]schedule.ShardOp {
	out := make([][]schedule.ShardOp, len(p.Ranks))
	for d, ops := range p.Ranks {
		out[d] = make([]schedule.ShardOp, len(ops))
		for i, op := range ops {
			out[d][i] = schedule.ShardOp{Kind: string(op.Kind), Stage: op.Stage, Gap: op.Gap, Start: op.Start, End: op.End}
		}
	}
	return out
}

// PlanOf is the plan a schedule carries.
func PlanOf(sh [][]schedule.ShardOp) Plan {
	p := Plan{Ranks: make([][]Op, len(sh))}
	for d, ops := range sh {
		p.Ranks[d] = make([]Op, len(ops))
		for i, op := range ops {
			p.Ranks[d][i] = Op{Kind: Kind(op.Kind), Stage: op.Stage, Gap: op.Gap, Start: op.Start, End: op.End}
		}
	}
	return p
}

// Windows places the actions on s's computes by PyTorch's rule with a
// residency window and an issue distance per rank (PyTorch's own
// placement: window max_active_stages on every rank, issue its
// unshard_lookahead's Distance): before each compute of a rank, the next
// window distinct sharded stages it computes are the ones to hold; any
// other held stage is released (in the order gathered), then the first
// issue of them not held are gathered, in order of use; each stage
// reduces its gradients right after its last weight gradient; what is
// held at the end is released. The plan is untimed (TimeActions).
func Windows(s *schedule.Schedule, m Model, window, issue []int) (Plan, error) {
	r, err := resolve(m, s.Placement)
	if err != nil {
		return Plan{}, err
	}
	if len(window) != s.Placement.Devices || len(issue) != s.Placement.Devices {
		return Plan{}, fmt.Errorf("fsdp: windows for %d and %d ranks, the schedule has %d devices", len(window), len(issue), s.Placement.Devices)
	}
	for d := range window {
		if window[d] < 1 || window[d] > m.MaxActive || issue[d] < 1 || issue[d] > window[d] {
			return Plan{}, fmt.Errorf("fsdp: rank %d: window %d and issue distance %d out of 1 ≤ issue ≤ window ≤ max_active_stages %d", d, window[d], issue[d], m.MaxActive)
		}
	}
	return placeWindows(s, r, window, issue), nil
}

// PyTorchWindows are the residency window and issue distance of
// PyTorch's lowering on every rank of a placement with devices ranks:
// max_active_stages, and l's distance.
func PyTorchWindows(devices int, m Model, l Lookahead) (window, issue []int) {
	window, issue = make([]int, devices), make([]int, devices)
	for d := range window {
		window[d], issue[d] = m.MaxActive, l.Distance(d, m.MaxActive)
	}
	return window, issue
}

// TimeActions times plan's actions on cur's computes as the package's
// timing model says (a copy; plan is not changed), and says, for every
// compute of a sharded stage, when its gather ends: the earliest it may
// start (the rule's compaction step re-times the computes to it).
func TimeActions(cur *schedule.Schedule, m Model, plan Plan) (Plan, map[schedule.Ref]int, error) {
	r, err := resolve(m, cur.Placement)
	if err != nil {
		return Plan{}, nil, err
	}
	ord := orders(cur)
	if len(plan.Ranks) != len(ord) {
		return Plan{}, nil, fmt.Errorf("fsdp: plan has %d ranks, the schedule %d devices", len(plan.Ranks), len(ord))
	}
	timed := Plan{Ranks: cloneRanks(plan.Ranks)}
	rel, err := r.timeOps(cur, ord, timed)
	return timed, rel, err
}

// Peaks is every device's peak memory of s with plan's gathered
// parameters counted.
func Peaks(s *schedule.Schedule, m Model, plan Plan) ([]int, error) {
	r, err := resolve(m, s.Placement)
	if err != nil {
		return nil, err
	}
	return peaks(s, r, plan), nil
}

func cloneRanks(rs [][]Op) [][]Op {
	out := make([][]Op, len(rs))
	for i, ops := range rs {
		out[i] = slices.Clone(ops)
	}
	return out
}
