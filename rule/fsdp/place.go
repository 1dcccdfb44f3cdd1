package fsdp

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/schedule"
)

// PyTorch is the compute schedule s with the FSDP actions where PyTorch's
// lowering puts them (_add_unshard_reshard with max_active_stages
// m.MaxActive and unshard_lookahead l, then _add_reduce_grad), timed and
// checked: before each compute of a rank, the next MaxActive distinct
// sharded stages it computes are the ones to hold; any other held stage is
// released, then the first Distance of them not held are gathered, in
// order of use; each stage reduces its gradients right after its last
// weight gradient; what is held at the end is released.
func PyTorch(s *schedule.Schedule, m Model, l Lookahead) (*Schedule, error) {
	r, err := prepare(s, m)
	if err != nil {
		return nil, err
	}
	window, issue := r.windows(len(r.p.Blocks), l)
	return r.time(s, placeWindows(s, r, window, issue))
}

func prepare(s *schedule.Schedule, m Model) (*rules, error) {
	if s == nil {
		return nil, errors.New("fsdp: no schedule")
	}
	if err := Excludes(s); err != nil {
		return nil, err
	}
	if err := schedule.Verify(s); err != nil {
		return nil, err
	}
	return resolve(m, s.Placement)
}

// windows is PyTorch's residency window and issue distance on every rank.
func (r *rules) windows(_ int, l Lookahead) (window, issue []int) {
	window, issue = make([]int, r.p.Devices), make([]int, r.p.Devices)
	for d := range window {
		window[d], issue[d] = r.m.MaxActive, l.Distance(d, r.m.MaxActive)
	}
	return window, issue
}

// Placed is one placement of the actions that Search compared.
type Placed struct {
	Name     string // "full", "auto" or "tessel"
	Makespan int
	Peak     int // the highest device peak
}

// Options are the effort of Search.
type Options struct {
	// Rounds bounds the passes over the ranks (0: 4).
	Rounds int
}

// Result is Search's answer: the best placement it saw and what PyTorch's
// own placements give on the same schedule and costs.
type Result struct {
	Best *Schedule
	// Window and Issue are the best placement's residency window and
	// issue distance per rank (each ≤ max_active_stages).
	Window, Issue []int
	// Compared are PyTorch's "full" and "auto" and tessel's placement.
	Compared []Placed
}

// better orders two timed placements: the shorter, then the lower
// highest peak, then the lower total of peaks.
func better(a, b *Schedule) bool {
	if a.Makespan != b.Makespan {
		return a.Makespan < b.Makespan
	}
	pa, pb, sa, sb := 0, 0, 0, 0
	for _, x := range a.Peak {
		pa, sa = max(pa, x), sa+x
	}
	for _, x := range b.Peak {
		pb, sb = max(pb, x), sb+x
	}
	return cmp.Or(cmp.Compare(pa, pb), cmp.Compare(sa, sb)) < 0
}

func highest(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// Search decides where the gathers and releases go on the verified
// compute schedule s: it times PyTorch's "full" and "auto" placements,
// then, rank by rank, every residency window w ≤ max_active_stages and
// issue distance ≤ w with the other ranks fixed, keeping a change only
// when it is better (shorter, then less memory), until a round changes
// nothing or the rounds run out. What it returns is checked (Check) and
// no worse than either of PyTorch's placements: they are the first two
// it keeps the better of. Placements over a device's memory budget are
// skipped; where every one is over, the error says so.
func Search(ctx context.Context, s *schedule.Schedule, m Model, opt Options) (*Result, error) {
	r, err := prepare(s, m)
	if err != nil {
		return nil, err
	}
	budgets := s.Budgets()
	fits := func(fs *Schedule) bool {
		for d, pk := range fs.Peak {
			if d < len(budgets) && budgets[d] > 0 && pk > budgets[d] {
				return false
			}
		}
		return true
	}
	try := func(window, issue []int) (*Schedule, error) {
		fs, err := r.time(s, placeWindows(s, r, window, issue))
		var ve *VerifyError
		if errors.As(err, &ve) && ve.Violations[0].Stage < 0 {
			return nil, nil // over a budget
		}
		return fs, err
	}
	res := &Result{}
	var best *Schedule
	for _, name := range []string{"full", "auto"} {
		w, is := r.windows(0, Lookahead{Policy: name})
		fs, err := r.time(s, placeWindows(s, r, w, is))
		if err != nil {
			return nil, fmt.Errorf("fsdp: PyTorch's %q placement: %w", name, err)
		}
		res.Compared = append(res.Compared, Placed{Name: name, Makespan: fs.Makespan, Peak: highest(fs.Peak)})
		if fits(fs) && (best == nil || better(fs, best)) {
			best, res.Window, res.Issue = fs, w, is
		}
	}
	if best == nil {
		w, is := r.windows(0, Lookahead{Policy: "full"})
		for d := range w {
			w[d], is[d] = 1, 1
		}
		fs, err := try(w, is)
		if err != nil {
			return nil, err
		}
		if fs == nil {
			return nil, fmt.Errorf("fsdp: even one gathered stage at a time exceeds a device's memory budget")
		}
		best, res.Window, res.Issue = fs, w, is
	}
	rounds := opt.Rounds
	if rounds <= 0 {
		rounds = 4
	}
	for range rounds {
		changed := false
		for d := range res.Window {
			for w := 1; w <= r.m.MaxActive; w++ {
				for is := 1; is <= w; is++ {
					if err := ctx.Err(); err != nil {
						return nil, err
					}
					if w == res.Window[d] && is == res.Issue[d] {
						continue
					}
					win, iss := append([]int(nil), res.Window...), append([]int(nil), res.Issue...)
					win[d], iss[d] = w, is
					fs, err := try(win, iss)
					if err != nil {
						return nil, err
					}
					if fs != nil && better(fs, best) {
						best, res.Window, res.Issue, changed = fs, win, iss, true
					}
				}
			}
		}
		if !changed {
			break
		}
	}
	res.Best = best
	res.Compared = append(res.Compared, Placed{Name: "tessel", Makespan: best.Makespan, Peak: highest(best.Peak)})
	return res, nil
}

// Bounds are what the rule adds to the lower bounds.
type Bounds struct {
	// Makespan: the spec's own bound, and on every rank with sharded
	// stages, every gather and reduction once on its collective stream,
	// and, where every compute of the rank is of a sharded stage, the
	// least gather before its first compute, its whole load, and the
	// least reduction after its last.
	Makespan int
	// Peak per device: the largest gathered parameters of its stages.
	Peak []int
}

// Bound is the rule's lower bounds on schedule s's problem.
func Bound(s *schedule.Schedule, m Model) (Bounds, error) {
	r, err := resolve(m, s.Placement)
	if err != nil {
		return Bounds{}, err
	}
	p := s.Placement
	b := Bounds{Makespan: bound.LowerBounds(s.Spec).Makespan, Peak: make([]int, p.Devices)}
	comm := make([]int, p.Devices)
	minG, minR := make([]int, p.Devices), make([]int, p.Devices)
	for d := range minG {
		minG[d], minR[d] = -1, -1
	}
	for i, st := range r.m.Stages {
		d := r.rank[i]
		comm[d] += st.Gather + st.Reduce
		b.Peak[d] = max(b.Peak[d], st.Params)
		if minG[d] < 0 || st.Gather < minG[d] {
			minG[d] = st.Gather
		}
		if minR[d] < 0 || st.Reduce < minR[d] {
			minR[d] = st.Reduce
		}
	}
	load := make([]int, p.Devices)
	allSharded := make([]bool, p.Devices)
	for d := range allSharded {
		allSharded[d] = true
	}
	for i, blk := range p.Blocks {
		for _, d := range blk.Devices {
			load[d] += blk.Time * s.MicroBatches
			if r.stageOf[i] < 0 {
				allSharded[d] = false
			}
		}
	}
	for d := range comm {
		b.Makespan = max(b.Makespan, comm[d])
		if allSharded[d] && minG[d] >= 0 && len(s.Pairs) == 0 { // a pair runs in less than its blocks' times
			b.Makespan = max(b.Makespan, minG[d]+load[d]+minR[d])
		}
	}
	return b, nil
}
