package timeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/exact"
	"github.com/tessel-pp/tessel/hetero"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// WarmBoundaries is the warm start of a step with a model where devices
// left or joined (Step.Warm): the last split's stage boundaries.
const WarmBoundaries = "the old stage boundaries"

// WarmBettered says that the speed-aware split from scratch had a
// smaller largest load than the split from the old boundaries, and was
// taken.
const WarmBettered = "the old stage boundaries, bettered by the speed-aware split"

// WarmRetimed is the warm start of a step with a model where only links
// and speeds changed: the split kept, the last schedule's orders re-timed.
const WarmRetimed = "the old orders, re-timed"

// ErrNotModelSplit says that the old schedule is not of the model's split
// on the cluster (the placement tessel partition --cluster writes).
var ErrNotModelSplit = errors.New("the schedule's placement is not the model's split on the cluster (tessel partition --model M --cluster C)")

// modelRun is the state of a timeline with a model: the model, its time
// unit (the first cluster's, kept), the cluster now and its split.
type modelRun struct {
	m     *hetero.Model
	unit  float64
	c     *cluster.Cluster
	split *hetero.Split
}

// place is split's placement on cost's cluster (with the devices'
// budgets), the cluster as it runs there (speed 1, the devices' times in
// the blocks) and the placement as given to it.
func place(cost *hetero.Cost, split *hetero.Split) (*placement.Placement, *cluster.Cluster, *placement.Placement, error) {
	conv, vcl, sp, err := cost.Placement(split, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	given := conv.Placement
	mem, err := conv.Memory(sp, vcl.DeviceMemoryBytes())
	if err != nil {
		return nil, nil, nil, err
	}
	if mem != nil {
		given.Capacities = partition.Budgets(mem)
	}
	p, err := vcl.Apply(given)
	if err != nil {
		return nil, nil, nil, err
	}
	return p, vcl, given, nil
}

// runModel is Run with a model (Options.Model): c is the cluster the
// model was split onto, devices numbered as the timeline numbers them.
func runModel(ctx context.Context, old *schedule.Schedule, t *Timeline, c *cluster.Cluster, opt Options) (*Report, error) {
	if c == nil {
		return nil, errors.New("timeline: a model needs the cluster it was split onto")
	}
	first, err := hetero.Run(ctx, opt.Model, c, hetero.Options{TimeUnit: opt.TimeUnit})
	if err != nil {
		return nil, err
	}
	p0, err := first.Cluster.Apply(first.Converted.Placement)
	if err != nil {
		return nil, err
	}
	if !old.Placement.Equal(p0) {
		return nil, ErrNotModelSplit
	}
	run := &modelRun{m: first.Cost.Model, unit: first.TimeUnit, c: c, split: first.Split}
	rep := &Report{Placement: p0.Name, Devices: p0.Devices, MicroBatches: old.MicroBatches, Memory: old.Memory, Old: schedule.Makespan(old), Units: p0.Units}
	return runSteps(ctx, t, rep, old, func(last *schedule.Schedule, step []Change) (*Step, *schedule.Schedule, error) {
		return run.step(ctx, last, step, opt)
	})
}

// sameBlocks reports whether a and b have the same devices and blocks
// (by ID, in order).
func sameBlocks(a, b *placement.Placement) bool {
	if a.Devices != b.Devices || len(a.Blocks) != len(b.Blocks) {
		return false
	}
	for i := range a.Blocks {
		if a.Blocks[i].ID != b.Blocks[i].ID || !slices.Equal(a.Blocks[i].Devices, b.Blocks[i].Devices) {
			return false
		}
	}
	return true
}

// WarmSplit is the model cut for the devices of cost's cluster with the
// last split's stage boundaries as the starting point: the stages of the
// devices that stay keep their order along the pipeline (joined devices
// last; dev maps each device now to its number in the last split's
// cluster, −1 for one that joined), and the cut points are the least
// largest load (hetero.Cost.Cut) among those that keep the old
// boundaries — a subset of them where there are fewer stages than before
// (stages merge), all of them where there are more (stages split). nil
// where no such cut exists.
func WarmSplit(cost *hetero.Cost, last *hetero.Split, dev []int) *hetero.Split {
	now := map[int]int{}
	var order []int
	for d, x := range dev {
		if x >= 0 {
			now[x] = d
		}
	}
	for _, st := range last.Stages {
		if d, ok := now[st.Device]; ok {
			order = append(order, d)
		}
	}
	for d, x := range dev {
		if x < 0 {
			order = append(order, d)
		}
	}
	cuts := last.Cuts()
	old := map[int]bool{}
	for _, x := range cuts {
		old[x] = true
	}
	var ok func(a, b int) bool
	if len(order) <= len(last.Stages) {
		ok = func(a, b int) bool { return old[a] && old[b] }
	} else {
		ok = func(a, b int) bool {
			for _, x := range cuts {
				if a < x && x < b {
					return false
				}
			}
			return true
		}
	}
	return cost.Cut("old boundaries", order, ok)
}

func (r *modelRun) step(ctx context.Context, last *schedule.Schedule, changes []Change, opt Options) (*Step, *schedule.Schedule, error) {
	st := &Step{Iteration: changes[0].At}
	was := make([]int, len(r.c.Devices))
	for d := range was {
		was[d] = d
	}
	q := r.c
	for _, ch := range changes {
		next, w, err := Apply(q, ch)
		if err != nil {
			return nil, nil, &ChangeError{Err: fmt.Errorf("%s: %w", ch, err)}
		}
		for d, x := range w {
			if x >= 0 {
				w[d] = was[x]
			}
		}
		q, was = next, w
		st.Changes = append(st.Changes, ch.String())
	}
	moved := len(was) != len(r.c.Devices)
	for d, x := range was {
		moved = moved || x != d
	}
	cost := hetero.NewCost(r.m, q, r.unit)
	// The split from the old boundaries (on the same devices: the same
	// split, its times on them now) and the speed-aware split from
	// scratch; the first unless the second has a smaller largest load.
	warm := WarmSplit(cost, r.split, was)
	best, _, err := cost.Best(ctx)
	if err != nil && warm == nil {
		return nil, nil, &ChangeError{Err: fmt.Errorf("no split of %s onto %d devices: %w", r.m.Graph.Name, len(q.Devices), err)}
	}
	fresh, split := best, warm
	switch {
	case warm == nil || !warm.Fits:
		split = best
	case best != nil && best.Fits && best.MaxLoad < warm.MaxLoad*(1-1e-9):
		split = best
	}
	if split == nil || !split.Fits {
		return nil, nil, &ChangeError{Err: fmt.Errorf("no split of %s fits the %d devices' memories", r.m.Graph.Name, len(q.Devices))}
	}
	if moved || split != warm {
		st.Repartition = describeSplit(split, warm, best)
	}
	p, vc, given, err := place(cost, split)
	if err != nil {
		return nil, nil, err
	}
	st.Devices = p.Devices
	sctx, cancel := limit(ctx, opt.TimeLimit)
	t0 := time.Now()
	var res *search.Result
	var start []search.Start
	st.Warm = WarmBoundaries
	if split != warm {
		st.Warm = WarmBettered
	}
	if !moved && split == warm && sameBlocks(last.Placement, p) {
		// The same split, its blocks' times on the devices now: the old
		// orders, re-timed (MovedOrders keeps every block where it was).
		st.Warm = WarmNone
		if s := MovedOrders(last, p, last.Memory); s != nil {
			st.Warm = WarmRetimed
			start = append(start, search.Start{Name: WarmRetimed, Schedule: s})
		}
	}
	// On a placement in real units, the search runs on its coarse copy
	// and its schedule is timed at the placement's own steps (exact).
	er, err := exact.ReplanStarts(sctx, spec.Spec{Placement: p, MicroBatches: last.MicroBatches, Memory: last.Memory}, start, opt.Replan)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	res = er.Search
	took := time.Since(t0)
	cancel()
	s := er.Schedule
	if err := s.SetCluster(vc, given); err != nil {
		return nil, nil, err
	}
	if err := verify.Schedule(s); err != nil {
		return nil, nil, fmt.Errorf("the replanned schedule fails verification (a bug): %w", err)
	}
	lb := res.Bounds.Makespan
	if er.Coarse() {
		lb = rules.LowerBounds(spec.Spec{Placement: s.Placement, MicroBatches: s.MicroBatches, Memory: s.Memory}).Makespan // the copy's is in its steps
	}
	st.Makespan, st.LowerBound, st.Seconds, st.Source, st.Valid = schedule.Makespan(s), lb, seconds(took), res.Source.String(), true
	if opt.Fresh {
		// A fresh plan: the speed-aware split from scratch, and a fresh
		// search on its placement.
		t1 := time.Now()
		if fresh == nil || !fresh.Fits {
			fresh = split
		}
		fp, _, _, err := place(cost, fresh)
		if err != nil {
			return nil, nil, fmt.Errorf("fresh plan: %w", err)
		}
		fs, err := exact.Fresh(ctx, fp, last, opt.Replan, opt.TimeLimit)
		if err != nil {
			return nil, nil, fmt.Errorf("fresh search: %w", err)
		}
		if err := verify.Schedule(fs.Schedule); err != nil {
			return nil, nil, fmt.Errorf("the fresh schedule fails verification (a bug): %w", err)
		}
		m, sec := schedule.Makespan(fs.Schedule), seconds(time.Since(t1))
		st.Fresh, st.FreshSeconds = &m, &sec
	}
	r.c, r.split = q, split
	return st, s, nil
}

// describeSplit says which split a step took and why: the old boundaries
// kept, or the speed-aware split where it has a smaller largest load.
func describeSplit(split, warm, best *hetero.Split) string {
	var cuts []string
	for _, x := range split.Cuts()[1:len(split.Stages)] {
		cuts = append(cuts, fmt.Sprint(x))
	}
	where := "layers cut at " + strings.Join(cuts, ", ")
	if len(cuts) == 0 {
		where = "one stage"
	}
	switch {
	case split == warm && best != nil:
		return fmt.Sprintf("%s: the old boundaries kept, largest load %.4g (speed-aware split: %.4g)", where, warm.MaxLoad, best.MaxLoad)
	case split == warm:
		return fmt.Sprintf("%s: the old boundaries kept, largest load %.4g", where, warm.MaxLoad)
	case warm != nil && warm.Fits:
		return fmt.Sprintf("%s: speed-aware split, largest load %.4g (the old boundaries: %.4g)", where, split.MaxLoad, warm.MaxLoad)
	}
	return fmt.Sprintf("%s: speed-aware split, largest load %.4g (the old boundaries do not fit)", where, split.MaxLoad)
}
