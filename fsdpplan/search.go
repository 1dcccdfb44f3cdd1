package fsdpplan

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/rule/fsdp"
	"github.com/tessel-pp/tessel/schedule"
)

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
func Search(ctx context.Context, s *schedule.Schedule, m fsdp.Model, opt Options) (*Result, error) {
	if err := prepare(s); err != nil {
		return nil, err
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("fsdp: %w", err)
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
	budgetless := *s
	budgetless.Memory = 0
	if budgetless.Placement.Limited(0) {
		return nil, errors.New("fsdp: devices with capacities: give the budget as --memory")
	}
	timeWindows := func(window, issue []int) (*Schedule, error) {
		plan, err := fsdp.Windows(s, m, window, issue)
		if err != nil {
			return nil, err
		}
		fs, err := Time(&budgetless, m, plan)
		if err != nil {
			return nil, err
		}
		fs.Compute.Memory = s.Memory
		return fs, nil
	}
	try := func(window, issue []int) (*Schedule, error) {
		fs, err := timeWindows(window, issue)
		if err != nil || !fits(fs) {
			return nil, err
		}
		return fs, nil
	}
	res := &Result{}
	var best *Schedule
	for _, name := range []string{"full", "auto"} {
		w, is := fsdp.PyTorchWindows(s.Placement.Devices, m, fsdp.Lookahead{Policy: name})
		fs, err := timeWindows(w, is)
		if err != nil {
			return nil, fmt.Errorf("fsdp: PyTorch's %q placement: %w", name, err)
		}
		res.Compared = append(res.Compared, Placed{Name: name, Makespan: fs.Makespan, Peak: highest(fs.Peak)})
		if fits(fs) && (best == nil || better(fs, best)) {
			best, res.Window, res.Issue = fs, w, is
		}
	}
	if best == nil {
		w, is := fsdp.PyTorchWindows(s.Placement.Devices, m, fsdp.Lookahead{Policy: "full"})
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
			for w := 1; w <= m.MaxActive; w++ {
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
	if err := Verify(best); err != nil {
		return nil, err
	}
	res.Best = best
	res.Compared = append(res.Compared, Placed{Name: "tessel", Makespan: best.Makespan, Peak: highest(best.Peak)})
	return res, nil
}
