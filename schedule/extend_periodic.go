package schedule

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
)

// # Extending a schedule periodically
//
// A schedule built for a window of micro-batches whose middle repeats —
// micro-batch m+K runs exactly as micro-batch m, P later, with the same
// decisions — is extended to any larger N by repeating that middle:
// the Tessel paper's argument (Lin et al., "Tessel: Boosting
// Distributed Execution of Large DNN Models via Flexible Schedule
// Search") that a schedule's cost is its repetend's, found once and
// repeated. The work of building a schedule then follows the window, and
// only the extension and its verification follow N.

// Periodicity is where a schedule repeats by micro-batch: for every
// micro-batch m in [From, From+Run), micro-batch m+PerPeriod starts every
// block exactly Period later than m does, and takes the same decisions
// (offload or recompute, their times Period later).
type Periodicity struct {
	PerPeriod, Period, From, Run int
}

// maxExtendPerPeriod caps the micro-batches of one period that
// FindPeriodicity tries.
const maxExtendPerPeriod = 64

// microTimes is a schedule's start of every instance and decision by
// micro-batch: start[m·K+i] (−1: missing), and the decision of B_i^m
// (action "": kept).
type microTimes struct {
	k     int
	start []int
	act   []placement.Action
	dec   [][2]int // Start, Reload
}

func newMicroTimes(s *Schedule) (*microTimes, bool) {
	k, n := len(s.Placement.Blocks), s.MicroBatches
	mt := &microTimes{k: k, start: make([]int, n*k), act: make([]placement.Action, n*k), dec: make([][2]int, n*k)}
	for x := range mt.start {
		mt.start[x] = -1
	}
	for _, in := range s.Instances {
		if in.Block < 0 || in.Block >= k || in.Micro < 0 || in.Micro >= n || mt.start[in.Micro*k+in.Block] >= 0 {
			return nil, false
		}
		mt.start[in.Micro*k+in.Block] = in.Start
	}
	for _, x := range mt.start {
		if x < 0 {
			return nil, false
		}
	}
	for _, d := range s.Decisions {
		if d.Block < 0 || d.Block >= k || d.Micro < 0 || d.Micro >= n || mt.act[d.Micro*k+d.Block] != "" {
			return nil, false
		}
		x := d.Micro*k + d.Block
		mt.act[x], mt.dec[x] = d.Action, [2]int{d.Start, d.Reload}
		if d.Action != placement.Offload {
			mt.dec[x][1] = 0 // a recompute has no reload
		}
	}
	return mt, true
}

// same reports whether micro-batch m+q runs as micro-batch m, p later.
func (mt *microTimes) same(m, q, p int) bool {
	k := mt.k
	a, b := m*k, (m+q)*k
	for i := range k {
		if mt.start[b+i] != mt.start[a+i]+p || mt.act[b+i] != mt.act[a+i] {
			return false
		}
		if mt.act[a+i] != "" {
			da, db := mt.dec[a+i], mt.dec[b+i]
			if db[0] != da[0]+p || (mt.act[a+i] == placement.Offload && db[1] != da[1]+p) {
				return false
			}
		}
	}
	return true
}

// FindPeriodicity finds the longest stretch of micro-batches over which
// s repeats by micro-batch (Periodicity), its period measured at the
// middle micro-batch; of equally long ones, the fewest micro-batches per
// period. ok is false where no stretch covers two periods (s has
// pairs, a link order, or missing or repeated instances, or does not
// repeat).
func FindPeriodicity(s *Schedule) (per Periodicity, ok bool) {
	if s == nil || s.Placement == nil || len(s.Pairs) > 0 || s.LinkOrder != nil || s.MicroBatches < 3 {
		return Periodicity{}, false
	}
	mt, valid := newMicroTimes(s)
	if !valid {
		return Periodicity{}, false
	}
	n := s.MicroBatches
	for q := 1; q <= maxExtendPerPeriod && 3*q <= n; q++ {
		mid := (n - q) / 2
		p := mt.start[(mid+q)*mt.k] - mt.start[mid*mt.k]
		if p <= 0 {
			continue
		}
		from, run := 0, 0
		for m := 0; m+q < n; {
			if !mt.same(m, q, p) {
				m++
				continue
			}
			a := m
			for m+q < n && mt.same(m, q, p) {
				m++
			}
			if m-a > run {
				from, run = a, m-a
			}
		}
		if run >= q && run > per.Run {
			per, ok = Periodicity{PerPeriod: q, Period: p, From: from, Run: run}, true
		}
	}
	return per, ok
}

// Extended is the makespan ExtendPeriodic gives s at n micro-batches,
// without building it: s's, plus one Period for every PerPeriod
// micro-batches added (the last micro-batches are moved by all of them).
// It is only a prediction where n − s.MicroBatches is not a multiple of
// PerPeriod.
func (per Periodicity) Extended(s *Schedule, n int) int {
	return Makespan(s) + (n-s.MicroBatches)/per.PerPeriod*per.Period
}

// ExtendPeriodic is s with n ≥ s.MicroBatches micro-batches: the
// micro-batches of its periodic stretch (per, FindPeriodicity's) repeated
// in its middle, each copy PerPeriod micro-batches and Period later
// than the one before, with its decisions; every micro-batch after them
// moved by all the copies. n − s.MicroBatches must be a multiple of
// PerPeriod. The result is not verified here (package verify imports
// schedule): callers verify it; it names no repetend.
func ExtendPeriodic(s *Schedule, per Periodicity, n int) (*Schedule, error) {
	c := n - s.MicroBatches
	q := per.PerPeriod
	switch {
	case q < 1 || per.Period < 1 || per.Run < q:
		return nil, fmt.Errorf("schedule: extend: no periodic stretch")
	case c < 0 || c%q != 0:
		return nil, fmt.Errorf("schedule: extend %d micro-batches to %d: not %d more per period", s.MicroBatches, n, q)
	case len(s.Pairs) > 0 || s.LinkOrder != nil:
		return nil, fmt.Errorf("schedule: extend: pairs and link orders are not carried")
	}
	// The copies go in after micro-batch cut−1 and repeat cut−q .. cut−1,
	// in the middle of the stretch, far from the schedule's ends.
	cut := per.From + q + (per.Run-q)/2
	shift := c / q * per.Period
	out := &Schedule{Spec: s.Spec.WithMicroBatches(n)}
	out.Instances = make([]Instance, 0, len(s.Instances)/s.MicroBatches*n)
	for _, in := range s.Instances {
		switch {
		case in.Micro < cut-q:
			out.Instances = append(out.Instances, in)
		case in.Micro < cut:
			out.Instances = append(out.Instances, in)
			for j := 1; j <= c/q; j++ {
				out.Instances = append(out.Instances, Instance{Block: in.Block, Micro: in.Micro + j*q, Start: in.Start + j*per.Period})
			}
		default:
			out.Instances = append(out.Instances, Instance{Block: in.Block, Micro: in.Micro + c, Start: in.Start + shift})
		}
	}
	for _, d := range s.Decisions {
		switch {
		case d.Micro < cut-q:
			out.Decisions = append(out.Decisions, d)
		case d.Micro < cut:
			out.Decisions = append(out.Decisions, d)
			for j := 1; j <= c/q; j++ {
				out.Decisions = append(out.Decisions, moved(d, j*q, j*per.Period))
			}
		default:
			out.Decisions = append(out.Decisions, moved(d, c, shift))
		}
	}
	out.Sort()
	slices.SortFunc(out.Decisions, func(a, b Decision) int {
		return cmp.Or(cmp.Compare(a.Micro, b.Micro), cmp.Compare(a.Block, b.Block))
	})
	return out, nil
}

// moved is d for the micro-batch dm later, its times dt later (a
// recompute's unused Reload stays 0).
func moved(d Decision, dm, dt int) Decision {
	d.Micro += dm
	d.Start += dt
	if d.Action == placement.Offload {
		d.Reload += dt
	}
	return d
}
