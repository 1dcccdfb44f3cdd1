package encode

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
	"github.com/tessel-pp/tessel/z3"
)

// Window parts of WindowDecisions: an instance of the schedule is kept
// where it is (Fixed), freed (Free), or kept in its devices' orders after
// the freed ones (Later).
const (
	Fixed = iota
	Free
	Later
)

// WindowDecisions re-solves a window of a schedule with the decisions of
// its instances free: part[x] says what becomes of s.Instances[x] (Fixed,
// Free or Later). It is OptimalDecisions' encoding of the whole schedule
// with everything outside the window held: a Fixed instance keeps its
// start; a Later one keeps its place in each of its devices' orders, after
// every Free instance there, its start free; a Free one may run anywhere
// after the Fixed instances of its devices. The decision of a forward
// instance is free when the forward or its consumer is freed; otherwise it
// keeps its action (keep, offload or recompute), and where both are Fixed,
// its times as well. Host channels and memory are counted exactly, as
// verify.Schedule counts them. It asks for a makespan below s's, then
// below each answer's, until a check fails or runs out of opt.Effort, and
// returns the best verified schedule found (nil when none ends earlier)
// and the number of checks.
func WindowDecisions(ctx context.Context, s *schedule.Schedule, part []int, d spec.Decisions, opt smt.Options) (*schedule.Schedule, int, error) {
	p := s.Placement
	n := len(s.Instances)
	if len(part) != n {
		return nil, 0, fmt.Errorf("smt: %d window parts for %d instances", len(part), n)
	}
	refs, prob := windowProblem(s, part)
	x, sv, err := z3.NewSolving(z3.SolverOptions{Seed: opt.Seed, Effort: opt.Effort})
	if err != nil {
		return nil, 0, err
	}
	defer x.Close()
	e, err := smt.Encode(x, sv, prob, nil)
	if err != nil {
		return nil, 0, err
	}
	// Fixed starts become constants, so that the terms over them fold.
	for k, in := range s.Instances {
		if part[k] == Fixed {
			sv.Assert(x.Eq(e.Start[k], x.IntVal(in.Start)))
			e.Start[k] = x.IntVal(in.Start)
		}
	}
	decided := map[schedule.Ref]schedule.Decision{}
	for _, dc := range s.Decisions {
		decided[schedule.Ref{Block: dc.Block, Micro: dc.Micro}] = dc
	}
	held := func(v *save) (schedule.Decision, bool, bool) { // decision, decided at all, times held
		dc, ok := decided[v.ref]
		return dc, ok, part[v.task] == Fixed && part[v.use] == Fixed
	}
	// A save outside the window that keeps its activation has no terms;
	// one whose forward and consumer are both Fixed keeps its times as
	// constants. Such a save's moves and recompute end before its
	// consumer, hence before every freed instance on its devices, and its
	// host channel's exclusivity is still encoded with every other save.
	pin := func(v *save) bool {
		if part[v.task] == Free || part[v.use] == Free {
			return false
		}
		dc, ok, times := held(v)
		switch {
		case !ok:
			return true // kept: off and rec stay false
		case !times:
			return false
		case dc.Action == placement.Offload && v.move > 0:
			v.off, v.hasO = x.True(), true
			v.o, v.r = x.IntVal(dc.Start), x.IntVal(dc.Reload)
			return true
		case dc.Action == placement.Recompute && v.recompute:
			v.rec, v.hasR = x.True(), true
			v.g = x.IntVal(dc.Start)
			return true
		}
		return false
	}
	saves := encodeSaves(e, spec.Spec{Placement: p, Memory: s.Memory, Allowed: d}, refs, pin)
	for _, v := range saves {
		if part[v.task] == Free || part[v.use] == Free {
			continue
		}
		dc, ok, _ := held(v)
		switch {
		case ok && dc.Action == placement.Offload:
			if !v.hasO {
				return nil, 0, fmt.Errorf("smt: %s^%d is offloaded, which its block does not allow here", p.Blocks[v.ref.Block].ID, v.ref.Micro)
			}
			sv.Assert(v.off)
		case ok && dc.Action == placement.Recompute:
			if !v.hasR {
				return nil, 0, fmt.Errorf("smt: %s^%d is recomputed, which its block does not allow here", p.Blocks[v.ref.Block].ID, v.ref.Micro)
			}
			sv.Assert(v.rec)
		default:
			sv.Assert(x.Not(v.off), x.Not(v.rec))
		}
	}
	if err := x.Err(); err != nil {
		return nil, 0, err
	}
	var best *schedule.Schedule
	checks := 0
	limit := schedule.Makespan(s) - 1
	lb := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: s.MicroBatches, Memory: s.Memory}).Makespan
	for limit >= lb {
		got, err := func() (*schedule.Schedule, error) {
			sv.Push()
			defer sv.Pop()
			e.BoundMakespan(limit)
			st, err := sv.Check(ctx)
			checks++
			if st != z3.Sat {
				return nil, err
			}
			m, err := sv.Model()
			if err != nil {
				return nil, err
			}
			defer m.Close()
			return decodeSaves(e, m, spec.Spec{Placement: p, MicroBatches: s.MicroBatches, Memory: s.Memory}, refs, saves)
		}()
		if errors.Is(err, z3.ErrEffort) || (err == nil && got == nil) {
			break
		}
		if err != nil {
			return best, checks, err
		}
		if err := verify.Schedule(got); err != nil {
			return nil, checks, fmt.Errorf("smt: window with decisions fails verification (encoder bug): %w", err)
		}
		best = got
		limit = schedule.Makespan(got) - 1
	}
	return best, checks, nil
}

// windowProblem is WindowDecisions' problem of s's instances (refs, in
// s's order) before the decisions: the device orders outside the window
// as precedences (so that the encoder knows them: no order Boolean for
// those pairs), the Fixed instances released at their starts.
func windowProblem(s *schedule.Schedule, part []int) ([]schedule.Ref, *smt.Problem) {
	p := s.Placement
	n := len(s.Instances)
	refs := make([]schedule.Ref, n)
	for k, in := range s.Instances {
		refs[k] = in.Ref()
	}
	prob := InstanceProblem(spec.New(p, 0), refs, nil)
	prob.Before, prob.Memory, prob.Entry = nil, 0, nil
	// Device orders outside the window as precedences, so that the
	// encoder knows them (no order Boolean for those pairs).
	for dev := 0; dev < p.Devices; dev++ {
		var on []int
		for k, in := range s.Instances {
			if slices.Contains(p.Blocks[in.Block].Devices, dev) {
				on = append(on, k)
			}
		}
		sort.SliceStable(on, func(a, b int) bool { return s.Instances[on[a]].Start < s.Instances[on[b]].Start })
		prev, lastFixed, firstLater := -1, -1, -1
		for _, k := range on {
			switch part[k] {
			case Fixed:
				lastFixed = k
			case Later:
				if firstLater < 0 {
					firstLater = k
				}
			}
			if part[k] == Free {
				continue
			}
			if prev >= 0 {
				prob.Precs = append(prob.Precs, smt.Prec{From: prev, To: k})
			}
			prev = k
		}
		for _, k := range on {
			if part[k] != Free {
				continue
			}
			if lastFixed >= 0 {
				prob.Precs = append(prob.Precs, smt.Prec{From: lastFixed, To: k})
			}
			if firstLater >= 0 {
				prob.Precs = append(prob.Precs, smt.Prec{From: k, To: firstLater})
			}
		}
	}
	for k, in := range s.Instances {
		if part[k] == Fixed {
			prob.Tasks[k].Release = in.Start
		}
	}
	return refs, prob
}
