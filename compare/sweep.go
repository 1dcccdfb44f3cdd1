package compare

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/tessel-pp/tessel/internal/safego"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// SweepOptions configure Sweep.
type SweepOptions struct {
	NRs      []int // the N_R of Fig. 11, ascending
	Memories []int // the memory budgets of Fig. 12, ascending
	// Fig12NR is the N_R of Fig. 12; 0: per placement, the smallest at
	// which Fig. 11 reaches its least rate.
	Fig12NR int
	Jobs    int // points searched at once; 0: one per core
	Seed    int // random seed of the solver
	// TimeLimit stops each point's search (0: none): the point is then
	// not proven, and its rate an upper bound.
	TimeLimit time.Duration
	// Progress, when set, is told how many points are done.
	Progress func(done, total int)
	// Offload and Recompute improve each Fig. 12 point by the steady
	// state of the constructions that offload or recompute
	// (search.SteadyPeriod, under Latency where there is one) where
	// it is shorter; such a point is marked (Point.Decisions).
	Offload, Recompute bool
	// Latency is a latency budget (placement's "Latency"; 0: none): every
	// point is then the repetend of least period whose steady state meets
	// it (search.SteadyOptions.Latency).
	Latency int
}

// Point is one searched point; it is also the JSON and CSV form.
type Point struct {
	Placement string `json:"placement"`
	X         int    `json:"x"` // N_R (Fig. 11) or memory budget (Fig. 12)
	// BubbleRate is the repetend bubble rate; nil when no repetend fits.
	BubbleRate *float64 `json:"bubble_rate"`
	Period     int      `json:"period,omitempty"`
	NR         int      `json:"nr,omitempty"` // N_R of the repetend found
	Proven     bool     `json:"proven"`
	// Decisions: the point is a construction's steady state that
	// offloads or recomputes (SweepOptions.Offload, Recompute).
	Decisions bool `json:"decisions,omitempty"`
}

// Figure is the grid behind one figure.
type Figure struct {
	Figure string         `json:"figure"` // "11" or "12"
	X      string         `json:"x"`      // "nr" or "memory"
	Memory int            `json:"memory"` // Fig. 11: 0 (unlimited)
	NR     map[string]int `json:"nr,omitempty"`
	Xs     []int          `json:"xs"`
	Points []Point        `json:"points"` // by placement, then x
	// LatencyBudget is SweepOptions.Latency (omitted without one).
	LatencyBudget int `json:"latency_budget,omitempty"`
	// placements in the order asked, for tables and charts.
	placements []string
	devices    int
}

// SweepResult is both figures.
type SweepResult struct {
	Devices int    `json:"devices"`
	Fig11   Figure `json:"fig11"`
	Fig12   Figure `json:"fig12"`
}

// Placements are the figure's placements in the order asked (its rows).
func (f *Figure) Placements() []string { return f.placements }

// Devices is the placements' device count.
func (f *Figure) Devices() int { return f.devices }

// Sweep measures the paper's ablation figures (§VI-C) on placements of
// the same device count: Fig. 11, for every N_R in opt.NRs, the repetend
// bubble rate of the best repetend with at most N_R micro-batches, memory
// unlimited; Fig. 12, for every budget in opt.Memories, the same with
// N_R fixed. Every point is the repetend of least period whose warmup and
// cooldown exist under the budget (search.SteadyRepetend), searched on
// opt.Jobs workers; the result does not depend on their number, except
// through opt.TimeLimit. A point stopped by the time limit takes the rate
// of the point before it where that is better (carryForward).
func Sweep(ctx context.Context, ps []*placement.Placement, opt SweepOptions) (*SweepResult, error) {
	if len(ps) == 0 {
		return nil, fmt.Errorf("sweep: no placement")
	}
	if opt.Latency != 0 {
		for _, p := range ps {
			if err := (spec.Spec{Placement: p, Latency: opt.Latency}).CheckLatency(); err != nil {
				return nil, fmt.Errorf("sweep: %w", err)
			}
		}
	}
	jobs := opt.Jobs
	if jobs == 0 {
		jobs = runtime.NumCPU()
	}
	names := make([]string, len(ps))
	for k, p := range ps {
		names[k] = p.Name
	}
	devices := ps[0].Devices
	total := len(ps) * (len(opt.NRs) + len(opt.Memories))
	var mu sync.Mutex
	done := 0
	point := func(ctx context.Context, p *placement.Placement, memory, nr int) (Point, error) {
		pt, err := steadyPoint(ctx, spec.Spec{Placement: p, Memory: memory, Latency: opt.Latency}, search.SteadyOptions{MaxNR: nr, Seed: opt.Seed, Jobs: 1}, opt.TimeLimit)
		mu.Lock()
		done++
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
		mu.Unlock()
		return pt, err
	}
	var err error
	fig11 := Figure{Figure: "11", X: "nr", Xs: opt.NRs, LatencyBudget: opt.Latency, placements: names, devices: devices}
	fig11.Points, err = grid(ctx, ps, opt.NRs, jobs, func(ctx context.Context, p *placement.Placement, nr int) (Point, error) {
		return point(ctx, p, 0, nr)
	})
	if err != nil {
		return nil, err
	}
	fig12 := Figure{Figure: "12", X: "memory", Xs: opt.Memories, NR: map[string]int{}, LatencyBudget: opt.Latency, placements: names, devices: devices}
	for k, p := range ps {
		nr := opt.Fig12NR
		if nr == 0 {
			nr = leastRateNR(fig11.Points[k*len(opt.NRs) : (k+1)*len(opt.NRs)])
		}
		fig12.NR[p.Name] = nr
	}
	fig12.Points, err = grid(ctx, ps, opt.Memories, jobs, func(ctx context.Context, p *placement.Placement, m int) (Point, error) {
		pt, err := point(ctx, p, m, fig12.NR[p.Name])
		if err != nil || !opt.Offload && !opt.Recompute {
			return pt, err
		}
		return withDecisions(ctx, pt, spec.Spec{Placement: p, Memory: m, Latency: opt.Latency, Allowed: spec.Decisions{Offload: opt.Offload, Recompute: opt.Recompute}})
	})
	if err != nil {
		return nil, err
	}
	return &SweepResult{Devices: devices, Fig11: fig11, Fig12: fig12}, nil
}

// decisionMicroBatches is how many micro-batches the constructions that
// decide are run on to find their steady state.
const decisionMicroBatches = 128

// withDecisions improves a Fig. 12 point by the steady state of the
// constructions that offload or recompute (search.SteadyPeriod), when
// theirs is shorter than the repetend's; such a point is marked with the
// decisions and is not proven. Under a latency budget (0: none) the
// constructions are re-timed under it.
func withDecisions(ctx context.Context, pt Point, sp spec.Spec) (Point, error) {
	p, memory := sp.Placement, sp.Memory
	period, ok, err := search.SteadyPeriod(ctx, sp.WithMicroBatches(decisionMicroBatches))
	if err != nil {
		return pt, fmt.Errorf("sweep: %s, memory %s: %w", p.Name, textfmt.Budget(memory), err)
	}
	if ok && (pt.BubbleRate == nil || period < pt.Period) {
		pt.BubbleRate = textfmt.Ptr(textfmt.Round6(schedule.RepetendBubbleRate(p, period)))
		pt.Period, pt.NR, pt.Proven, pt.Decisions = period, 0, false, true
	}
	return pt, nil
}

// steadyPoint is the repetend of least period with N_R ≤ so.MaxNR under
// sp's budget whose warmup and cooldown exist (so.Jobs: one worker);
// with a latency budget (0: none), whose steady state meets it.
func steadyPoint(ctx context.Context, sp spec.Spec, so search.SteadyOptions, limit time.Duration) (Point, error) {
	p, memory, nr := sp.Placement, sp.Memory, so.MaxNR
	ctx, cancel := withLimit(ctx, limit)
	defer cancel()
	res, err := search.SteadyRepetend(ctx, sp, so)
	pt := Point{Placement: p.Name}
	if err != nil {
		return pt, fmt.Errorf("sweep: %s, memory %s, N_R ≤ %d: %w", p.Name, textfmt.Budget(memory), nr, err)
	}
	pt.Proven = res.Proven
	if r := res.Best; r != nil {
		pt.BubbleRate = textfmt.Ptr(textfmt.Round6(schedule.RepetendBubbleRate(p, r.Period)))
		pt.Period, pt.NR = r.Period, r.NR
	}
	return pt, nil
}

// grid searches every (placement, x) on jobs workers and returns the
// points by placement, then x, whatever order they finished in.
func grid(ctx context.Context, ps []*placement.Placement, xs []int, jobs int,
	point func(context.Context, *placement.Placement, int) (Point, error)) ([]Point, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]Point, len(ps)*len(xs))
	errs := make([]error, len(out))
	next := make(chan int)
	var wg sync.WaitGroup
	var pan safego.Panic
	for range min(jobs, len(out)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				pan.Do(func() {
					pt, err := point(ctx, ps[k/len(xs)], xs[k%len(xs)])
					pt.X = xs[k%len(xs)]
					out[k], errs[k] = pt, err
					if err != nil {
						cancel()
					}
				})
			}
		}()
	}
feed:
	for k := range out {
		select {
		case next <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	pan.Repanic()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	for k := range ps {
		carryForward(out[k*len(xs) : (k+1)*len(xs)])
	}
	return out, nil
}

// carryForward improves points stopped by the time limit with the point
// before them: x grows along one placement's points and every repetend
// found for a smaller N_R or budget also fits a larger one (with its
// warmup and cooldown), so its rate bounds the larger point's from above.
// The point stays marked as not proven.
func carryForward(pts []Point) {
	for k := 1; k < len(pts); k++ {
		prev, pt := pts[k-1], &pts[k]
		if pt.Proven || prev.BubbleRate == nil || (pt.BubbleRate != nil && *pt.BubbleRate <= *prev.BubbleRate) {
			continue
		}
		pt.BubbleRate, pt.Period, pt.NR, pt.Decisions = prev.BubbleRate, prev.Period, prev.NR, prev.Decisions
	}
}

// leastRateNR is the smallest N_R of one placement's Fig. 11 points at
// which the bubble rate reaches its least value (the last point if none
// has a repetend).
func leastRateNR(pts []Point) int {
	best := -1
	for k, pt := range pts {
		if pt.BubbleRate != nil && (best < 0 || *pt.BubbleRate < *pts[best].BubbleRate) {
			best = k
		}
	}
	if best < 0 {
		return pts[len(pts)-1].X
	}
	return pts[best].X
}
