package timeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/quantity"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// ChangeError is a step whose changes do not fit the cluster or the
// placement there (a device that does not exist, a device joining a
// placement that is not a built-in shape): bad input, not a failed
// search.
type ChangeError struct {
	Step, Iteration int
	Err             error
}

func (e *ChangeError) Error() string {
	return fmt.Sprintf("timeline: step %d (iteration %d): %v", e.Step, e.Iteration, e.Err)
}

func (e *ChangeError) Unwrap() error { return e.Err }

// Options configure Run.
type Options struct {
	// Replan configures each step's replan (search.Replan's options).
	Replan search.ReplanOptions
	// Fresh runs a fresh search (tessel search's) beside every step's
	// replan, to compare with.
	Fresh bool
	// TimeLimit, when > 0, stops each search after this long (it keeps
	// the best schedule found).
	TimeLimit time.Duration
	// Model, when not nil, is the layer profile the old schedule's
	// placement was split from (tessel partition --model --cluster, on
	// the cluster Run is given): where devices leave or join, the model
	// is cut again onto the devices there, speed-aware, with the last
	// split's stage boundaries as the starting point (WarmSplit), and
	// where only links and speeds change, the same split is timed on the
	// devices now. TimeUnit is the split's time unit (0: as tessel
	// partition chooses it).
	Model    *partition.Graph
	TimeUnit float64
}

// Step is one step of a timeline's replan: the changes of one iteration
// and the schedule after them.
type Step struct {
	Iteration int      `json:"iteration"`
	Changes   []string `json:"changes"`
	Devices   int      `json:"devices"`
	// Repartition says how the placement changed where devices did ("" where
	// they did not).
	Repartition string `json:"repartition,omitempty"`
	// Warm says what the step's search started from: "the old orders and
	// repetend" (search.Replan), "the old orders, moved" (MovedOrders), or
	// "none" (a shape rebuilt on other devices: a search with the
	// replan's effort, without a start).
	Warm         string   `json:"warm_start"`
	Makespan     int      `json:"makespan"`
	LowerBound   int      `json:"lower_bound"`
	Seconds      float64  `json:"seconds"`
	Source       string   `json:"source"`
	Fresh        *int     `json:"fresh_makespan,omitempty"`
	FreshSeconds *float64 `json:"fresh_seconds,omitempty"`
	Valid        bool     `json:"valid"`
}

// Report is a timeline's replan, step by step.
type Report struct {
	Placement    string `json:"placement"`
	Devices      int    `json:"devices"`
	MicroBatches int    `json:"micro_batches"`
	Memory       int    `json:"memory"`
	Old          int    `json:"old_makespan"`
	Steps        []Step `json:"steps"`
	// Final is the last step's schedule, with its cluster recorded.
	Final *schedule.Schedule `json:"-"`
	// Stopped says where the replan stopped when its ctx ended (Ctrl-C, a
	// deadline) before its last step: Steps are the steps done, Final the
	// schedule of the last of them. "" when every step ran.
	Stopped string `json:"stopped,omitempty"`
	// Units are the placement's units (its time step and unit, from a
	// model file); the text writes every makespan in them. nil: the
	// placement's own integers, as written.
	Units *quantity.Scale `json:"-"`
}

// Warm starts of a step (Step.Warm).
const (
	WarmReplan = "the old orders and repetend"
	WarmMoved  = "the old orders, moved"
	WarmNone   = "none"
)

// Run replans old, step by step, through t's changes applied to cluster c
// (the cluster old ran on: its own, or another given; nil: old's own, or,
// where it has none, every device of speed 1 and every link free). Each
// step starts from the schedule of the step before: where only links and
// speeds changed, search.Replan; where devices left or joined, the
// placement is repartitioned (Repartition) and searched with a replan's
// effort, from the old orders moved onto the devices left where the
// blocks stayed whole (MovedOrders). Every step's schedule is verified;
// an error names the step.
func Run(ctx context.Context, old *schedule.Schedule, t *Timeline, c *cluster.Cluster, opt Options) (*Report, error) {
	if opt.Model != nil {
		return runModel(ctx, old, t, c, opt)
	}
	given := old.Placement
	if old.Cluster != nil {
		given = old.Given
	}
	if c == nil {
		c = old.Cluster
	}
	if c == nil {
		c = cluster.Uniform(given.Devices)
	}
	last, err := compact.OnCluster(old, c)
	if err != nil {
		// Not on c's budgets: keep the old schedule, recording c.
		last = old
	}
	first := given
	rep := &Report{Placement: given.Name, Devices: given.Devices, MicroBatches: old.MicroBatches, Memory: old.Memory, Old: schedule.Makespan(old), Units: given.Units}
	return runSteps(ctx, t, rep, last, func(last *schedule.Schedule, step []Change) (*Step, *schedule.Schedule, error) {
		st, s, q, qc, err := runStep(ctx, last, first, given, c, step, opt)
		if err == nil {
			given, c = q, qc
		}
		return st, s, err
	})
}

// runSteps runs t's steps one after another from the schedule last, each
// through do from the schedule of the step before, and gathers their
// reports into rep, its Final the last step's schedule. A step's error
// names the step and its iteration (a ChangeError learns them). Where
// ctx ends after a step at least, the steps done are the report
// (Report.Stopped says so).
func runSteps(ctx context.Context, t *Timeline, rep *Report, last *schedule.Schedule, do func(last *schedule.Schedule, step []Change) (*Step, *schedule.Schedule, error)) (*Report, error) {
	steps := t.Steps()
	for k, step := range steps {
		var st *Step
		var s *schedule.Schedule
		err := ctx.Err()
		if err == nil {
			st, s, err = do(last, step)
		}
		if err != nil && ctx.Err() != nil && k > 0 {
			rep.Stopped = fmt.Sprintf("before step %d of %d (%v): the steps above are those done", k+1, len(steps), context.Cause(ctx))
			break
		}
		if err != nil {
			var ce *ChangeError
			if errors.As(err, &ce) {
				ce.Step, ce.Iteration = k+1, step[0].At
				return nil, ce
			}
			return nil, fmt.Errorf("timeline: step %d (iteration %d): %w", k+1, step[0].At, err)
		}
		rep.Steps = append(rep.Steps, *st)
		last = s
	}
	rep.Final = last
	return rep, nil
}

func runStep(ctx context.Context, last *schedule.Schedule, first, given *placement.Placement, c *cluster.Cluster, changes []Change, opt Options) (*Step, *schedule.Schedule, *placement.Placement, *cluster.Cluster, error) {
	st := &Step{Iteration: changes[0].At}
	// The changes one after another; a device's old number is followed
	// through all of them.
	was := make([]int, len(c.Devices))
	for d := range was {
		was[d] = d
	}
	q := c
	for _, ch := range changes {
		next, w, err := Apply(q, ch)
		if err != nil {
			return nil, nil, nil, nil, &ChangeError{Err: fmt.Errorf("%s: %w", ch, err)}
		}
		for d, x := range w {
			if x >= 0 {
				w[d] = was[x]
			}
		}
		q, was = next, w
		st.Changes = append(st.Changes, ch.String())
	}
	moved := len(was) != len(c.Devices)
	for d, x := range was {
		moved = moved || x != d
	}
	newGiven := given
	if moved {
		var err error
		newGiven, st.Repartition, err = Repartition(first, q, len(was))
		if err != nil {
			return nil, nil, nil, nil, &ChangeError{Err: err}
		}
	}
	p, err := q.Apply(newGiven)
	if err != nil {
		return nil, nil, nil, nil, &ChangeError{Err: err}
	}
	st.Devices = p.Devices
	sctx, cancel := limit(ctx, opt.TimeLimit)
	t0 := time.Now()
	var res *search.Result
	if !moved {
		st.Warm = WarmReplan
		r, err := search.Replan(sctx, last, p, q, opt.Replan)
		if err != nil {
			cancel()
			return nil, nil, nil, nil, err
		}
		res = r.Result
	} else {
		var start []search.Start
		st.Warm = WarmNone
		if onOld := MovedOrders(last, p, last.Memory); onOld != nil {
			st.Warm = WarmMoved
			start = append(start, search.Start{Name: WarmMoved, Schedule: onOld})
		}
		res, err = search.ReplanStarts(sctx, spec.Spec{Placement: p, MicroBatches: last.MicroBatches, Memory: last.Memory}, start, opt.Replan)
		if err != nil {
			cancel()
			return nil, nil, nil, nil, err
		}
	}
	took := time.Since(t0)
	cancel()
	s := res.Schedule
	if err := s.SetCluster(q, newGiven); err != nil {
		return nil, nil, nil, nil, err
	}
	if err := verify.Schedule(s); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("the replanned schedule fails verification (a bug): %w", err)
	}
	st.Makespan, st.LowerBound, st.Seconds, st.Source, st.Valid = schedule.Makespan(s), res.Bounds.Makespan, seconds(took), res.Source.String(), true
	if opt.Fresh {
		t1 := time.Now()
		fresh, err := choose.Fresh(ctx, p, last, opt.Replan, opt.TimeLimit)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("fresh search: %w", err)
		}
		if err := verify.Schedule(fresh.Schedule); err != nil {
			return nil, nil, nil, nil, fmt.Errorf("the fresh schedule fails verification (a bug): %w", err)
		}
		m, sec := schedule.Makespan(fresh.Schedule), seconds(time.Since(t1))
		st.Fresh, st.FreshSeconds = &m, &sec
	}
	return st, s, newGiven, q, nil
}

func limit(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

func seconds(d time.Duration) float64 { return d.Round(time.Millisecond).Seconds() }
