package plan

import (
	"context"
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
)

// VersusBaselines are the schedules a user would otherwise run, in
// baseline.All's order: 1F1B (interleaved 1F1B on chunks), ZB-H1 and
// ZB-H2 (a split backward on one stage per device), ZB-V and DualPipeV (a
// split backward on V chunks), 1F1B with full recompute and PipeOffload
// (where the model declares checkpoints and a host link). A new slice each
// call: no caller can change what Versus runs.
func VersusBaselines() []string {
	return []string{"1f1b", "1f1b-interleaved", "zb-h1", "zb-h2", "zb-v", "dualpipe-v", "pipeoffload", "1f1b-recompute"}
}

// Versus runs VersusBaselines on the placement res searched: the same
// stages, devices, times and links, under each device's budget (what its
// stages leave of its memory) and res's budget. One row for each that
// applies to the placement (compare.Baselines; on chunks 1F1B is
// interleaved 1F1B): one that does not fit says what one micro-batch
// needs; every schedule shown passed the verifier. Only a cancelled ctx
// ends it.
func Versus(ctx context.Context, res *Result) ([]compare.Row, error) {
	all, err := compare.Baselines(ctx, res.Placement, compare.Options{MicroBatches: res.Search.Schedule.MicroBatches, Memory: res.Budget}, VersusBaselines())
	if err != nil {
		return nil, err
	}
	var rows []compare.Row
	for _, r := range all {
		if r.Status != compare.StatusNotApplicable {
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// Winner is the fastest row of rows whose schedule fits its budget: the
// schedule a user would run instead of the plan's; nil where none fits.
// Ties go to the first.
func Winner(rows []compare.Row) *compare.Row {
	var best *compare.Row
	for i, r := range rows {
		if r.Status != compare.StatusOK || r.Makespan == nil || r.BudgetRespected == nil || !*r.BudgetRespected {
			continue
		}
		if best == nil || *r.Makespan < *best.Makespan {
			best = &rows[i]
		}
	}
	return best
}

// Binds reports whether the memory budget may hold the plan's schedule
// back: its makespan is above the lower bound, and on some device with a
// budget one more micro-batch's largest activation there would not fit
// beside the schedule's peak. Where it binds, the levers (Levers) can
// help; elsewhere only time can.
func (r *Result) Binds() bool {
	s := r.Search.Schedule
	m := schedule.Measure(s)
	if m.Makespan <= rules.LowerBounds(s.Spec).Makespan {
		return false
	}
	p := r.Placement
	for d := range p.Devices {
		budget := p.Budget(d, r.Budget)
		if budget <= 0 {
			continue
		}
		largest := 0
		for _, b := range p.Blocks {
			if b.Kind == placement.Forward && b.Memory > largest && onDevice(b, d) {
				largest = b.Memory
			}
		}
		if m.PeakMemory[d]+largest > budget {
			return true
		}
	}
	return false
}

func onDevice(b placement.Block, d int) bool {
	for _, x := range b.Devices {
		if x == d {
			return true
		}
	}
	return false
}

// Lever is the plan again with one more decision allowed: what
// --recompute or --offload gives where the budget binds.
type Lever struct {
	Flag string // "--recompute" or "--offload"
	// Result is the plan with the decision allowed; nil where Err says why
	// there is none.
	Result *Result
	Err    error
}

// Levers runs the plan of pr again with each decision the plan did not
// allow (recompute, then offload), under the same options: the levers a
// user has where the budget binds (res.Binds). It returns none where the
// budget does not bind. A lever the model cannot pull (no checkpoints, no
// host link) or that finds nothing has Err; a cancelled ctx ends them.
func Levers(ctx context.Context, pr *partition.Report, opt Options, res *Result) ([]Lever, error) {
	if !res.Binds() {
		return nil, nil
	}
	var out []Lever
	for _, lv := range []struct {
		flag    string
		allowed bool
		with    func(d placement.Decisions) placement.Decisions
	}{
		{"--recompute", opt.Decisions.Recompute, func(d placement.Decisions) placement.Decisions { d.Recompute = true; return d }},
		{"--offload", opt.Decisions.Offload, func(d placement.Decisions) placement.Decisions { d.Offload = true; return d }},
	} {
		if lv.allowed {
			continue
		}
		o := opt
		o.Decisions = lv.with(opt.Decisions)
		r, err := Run(ctx, pr, o)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ie *InputError
		if errors.As(err, &ie) {
			err = ie.Err
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", lv.flag, err)
		}
		out = append(out, Lever{Flag: lv.flag, Result: r, Err: err})
	}
	return out, nil
}
