package recompute

import (
	"context"
	"fmt"
	"time"

	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/plan"
	"github.com/tessel-pp/tessel/schedule"
)

// Comparison is the per-instance decisions beside the per-stage policy,
// each searched by plan.Run on the same split, cluster, budgets and
// micro-batches, and the faster chosen.
type Comparison struct {
	// PerInstance is the plan with recompute decided per instance (the
	// plan's options as given).
	PerInstance *plan.Result
	// Policy is the least per-stage policy that fits (Fit), and Staged
	// the plan of the split under it (Apply), with no recompute decided
	// per instance; both zero where NoPolicy says why there is none.
	Policy   Policy
	Staged   *plan.Result
	NoPolicy error
	// Uniform is the policy as Megatron-Core runs it, one number of
	// layers for every stage (Policy.Uniform), and UniformPlan its plan;
	// both zero where Policy already is uniform.
	Uniform     Policy
	UniformPlan *plan.Result
	// PerInstanceTime and PolicyTime are the two schedules' makespans in
	// the model's time (placement steps × the split's time unit).
	PerInstanceTime, PolicyTime, UniformTime float64
	// PolicyChosen: the policy's schedule ends no later than the
	// per-instance one (a tie goes to the policy, which frameworks can
	// apply).
	PolicyChosen bool
}

// Chosen is the plan chosen.
func (c *Comparison) Chosen() *plan.Result {
	if c.PolicyChosen {
		return c.Staged
	}
	return c.PerInstance
}

// Compare plans pr's split twice under opt, which must allow recompute:
// with recompute decided per instance (plan.Run as asked), and under the
// least per-stage policy that fits (Of, Fit, Apply), the per-instance
// recompute left out and each device's capacity lowered by its stage's
// Reserve, so that the schedule's verified peak under its budgets is the
// device's real peak; where the policy differs between stages, a third
// time under its Uniform form. opt.TimeLimit bounds them all, shared
// equally. A split the policy cannot describe gives the per-instance plan
// alone, NoPolicy saying why.
func Compare(ctx context.Context, pr *partition.Report, opt plan.Options) (*Comparison, error) {
	if !opt.Decisions.Recompute {
		return nil, fmt.Errorf("recompute: the comparison needs recompute allowed")
	}
	c := &Comparison{}
	pol, err := Of(pr)
	var mem []partition.DeviceMemory
	if err == nil {
		mem, err = pr.Converted.Memory(pr.Split, opt.Capacities)
	}
	if err == nil {
		pol, err = Fit(pr.Converted, pol, budgets(pr, mem, opt.Budget), opt.MicroBatches)
	}
	searches := 1
	if c.NoPolicy = err; err == nil {
		c.Policy, searches = pol, 2
		if !pol.IsUniform() {
			c.Uniform, searches = pol.Uniform(), 3
		}
	}
	opt.TimeLimit /= time.Duration(searches)
	per, err := plan.Run(ctx, pr, opt)
	if err != nil {
		return nil, err
	}
	unit := pr.Converted.TimeUnit
	c.PerInstance, c.PerInstanceTime = per, float64(schedule.Makespan(per.Search.Schedule))*unit
	if c.NoPolicy != nil {
		return c, nil
	}
	c.Staged, err = staged(ctx, pr, pol, mem, opt)
	if err == nil && searches == 3 {
		c.UniformPlan, err = staged(ctx, pr, c.Uniform, mem, opt)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c.NoPolicy, c.Staged, c.UniformPlan = err, nil, nil
		return c, nil
	}
	c.PolicyTime = float64(schedule.Makespan(c.Staged.Search.Schedule)) * unit
	if c.UniformPlan != nil {
		c.UniformTime = float64(schedule.Makespan(c.UniformPlan.Search.Schedule)) * unit
	}
	c.PolicyChosen = schedule.Makespan(c.Staged.Search.Schedule) <= schedule.Makespan(per.Search.Schedule)
	return c, nil
}

// budgets are every device's budget in placement units: what the model's
// memory leaves it (mem; nil: none), and at most budget where that is set.
func budgets(pr *partition.Report, mem []partition.DeviceMemory, budget int) []int {
	out := make([]int, pr.Converted.Placement.Devices)
	for d := range out {
		if mem != nil {
			out[d] = mem[d].Budget
		}
		if budget > 0 && (out[d] == 0 || budget < out[d]) {
			out[d] = budget
		}
	}
	return out
}

// staged plans the split under pol (mem: the devices' memory under the
// model, nil for none).
func staged(ctx context.Context, pr *partition.Report, pol Policy, mem []partition.DeviceMemory, opt plan.Options) (*plan.Result, error) {
	cv, err := Apply(pr.Converted, pol)
	if err != nil {
		return nil, err
	}
	q := *pr
	q.Converted = cv
	o := opt
	o.Decisions.Recompute = false
	if mem != nil {
		o.Capacities = make([]float64, len(mem))
		for d, m := range mem {
			o.Capacities[d] = m.Capacity
		}
		for st, s := range pol.Stages {
			sb, err := blocksOf(cv, st)
			if err != nil {
				return nil, err
			}
			o.Capacities[cv.Placement.Blocks[sb.forward].Devices[0]] -= s.Reserve()
		}
	}
	res, err := plan.Run(ctx, &q, o)
	if err != nil {
		return nil, fmt.Errorf("the per-stage policy (%v): %w", pol, err)
	}
	return res, nil
}

// Summary is the comparison in tessel plan --json ("recompute"): which was
// chosen, both makespans in the model's time, the policy as recomputed
// layers and layers per stage, or why there is none.
type Summary struct {
	Chosen          string  `json:"chosen"` // "per-stage policy" or "per-instance decisions"
	PerInstanceTime float64 `json:"per_instance_time"`
	PolicyTime      float64 `json:"policy_time,omitempty"`
	Policy          string  `json:"policy,omitempty"`
	Recomputed      []int   `json:"recomputed_layers,omitempty"`
	Layers          []int   `json:"layers,omitempty"`
	NoPolicy        string  `json:"no_policy,omitempty"`
	// UniformTime is the makespan of the policy with one number of layers
	// on every stage (Megatron-Core's), where the policy is not uniform.
	UniformTime float64 `json:"uniform_time,omitempty"`
}

// Summary is c's Summary.
func (c *Comparison) Summary() *Summary {
	s := &Summary{Chosen: "per-instance decisions", PerInstanceTime: c.PerInstanceTime}
	if c.NoPolicy != nil {
		s.NoPolicy = c.NoPolicy.Error()
		return s
	}
	if c.PolicyChosen {
		s.Chosen = "per-stage policy"
	}
	s.PolicyTime, s.Policy, s.Recomputed, s.UniformTime = c.PolicyTime, c.Policy.String(), c.Policy.Counts(), c.UniformTime
	for _, st := range c.Policy.Stages {
		s.Layers = append(s.Layers, len(st.Layers))
	}
	return s
}
