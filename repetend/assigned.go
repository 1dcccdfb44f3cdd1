package repetend

import (
	"context"
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/z3"
)

// The repetend with the devices as decisions (She et al., "Automatic
// Operator-level Parallelism Planning for Distributed Deep Learning – A
// Mixed-Integer Programming Approach", §III eqs 6–10, on the Tessel
// paper's repetend; encode.AssignedAt encodes it): for a placement whose
// blocks give candidates, one Boolean per block and option, exactly one
// true, the same option in every iteration; the offsets are variables,
// and every constraint is conditioned on the options it depends on.
//
// Feasibility is monotone in P (a repetend at P is one at P + 1 with the
// same starts), so SearchAssigned finds the least period by binary
// search, one solver per period. Links as resources (channels), latency
// budgets and memory decisions are not in this encoding.

// AssignedOptions are SearchAssigned's effort and what the caller
// knows; the problem (the placement with candidates, the budget, the
// micro-batches, 0 if unknown: see Search) is its spec.
type AssignedOptions struct {
	// MaxNR is the largest N_R tried; 0: DefaultNRLimit.
	MaxNR int
	// Upper, when > 0, asks for a period below Upper (an incumbent's):
	// when none exists the answer is proven with no repetend.
	Upper int
	// Exclude lists choices (placement.Choose) the answer must differ
	// from: those whose repetend the caller found no warmup and cooldown
	// for. The bound then holds for the other choices.
	Exclude [][]int
	Seed    int
	// Effort caps each solver call (Options.Effort): 0 means
	// DefaultEffort, a negative value no cap.
	Effort int
}

// AssignedResult is SearchAssigned's answer.
type AssignedResult struct {
	// Choice is each block's option (placement.Choose) and Repetend the
	// repetend of the chosen placement; both nil when no period below
	// Upper was found.
	Choice   []int
	Repetend *Repetend
	// LowerBound is proven: no choice has a repetend of a shorter period
	// (with at most MaxNR micro-batches in flight). Proven is set when it
	// meets the period found, or when nothing below Upper exists.
	LowerBound int
	Proven     bool
	Checks     int
}

// SearchAssigned finds a choice of devices for every block of sp's
// placement and a repetend of the chosen placement of least period under
// sp's memory budget (see the encoding above). When ctx ends or a call runs out of
// effort the best repetend so far is returned, not proven.
func SearchAssigned(ctx context.Context, sp spec.Spec, opt AssignedOptions) (*AssignedResult, error) {
	p := sp.Placement
	if links.Queued(p) {
		return nil, errors.New("repetend: links as resources (channels) are not in the encoding with assignment literals")
	}
	if _, ok := p.Topo(); !ok {
		return nil, fmt.Errorf("repetend: placement %q has a cycle", p.Name)
	}
	if opt.MaxNR <= 0 {
		opt.MaxNR = DefaultNRLimit(p)
	}
	effort := opt.Effort
	if effort == 0 {
		effort = DefaultEffort
	}
	effort = max(effort, 0)
	lo, hi := assignedPeriodBounds(p)
	out := &AssignedResult{LowerBound: lo}
	if opt.Upper > 0 {
		hi = min(hi, opt.Upper-1)
	}
	if lo > hi {
		out.LowerBound, out.Proven = opt.Upper, true
		return out, nil
	}
	capped := false
	first := true
	for lo <= hi {
		P := hi // the first probe: is anything below Upper at all?
		if !first {
			P = lo + (hi-lo)/2
		}
		out.Checks++
		r, choice, err := assignedAt(ctx, sp, P, opt, effort)
		switch {
		case errors.Is(err, z3.ErrEffort):
			capped = true
			if first {
				out.LowerBound = lo
				return out, nil
			}
			lo = P + 1
		case err != nil && interrupted(err):
			return out, nil
		case err != nil:
			return nil, err
		case r != nil:
			out.Repetend, out.Choice = r, choice
			hi = P - 1
		case first:
			// Nothing up to hi: proven, with no repetend.
			if opt.Upper > 0 && hi == opt.Upper-1 {
				out.LowerBound, out.Proven = opt.Upper, true
			} else {
				out.LowerBound, out.Proven = hi+1, true
			}
			return out, nil
		default:
			lo = P + 1
		}
		first = false
	}
	if out.Repetend != nil && !capped {
		out.LowerBound, out.Proven = out.Repetend.Period, true
	}
	return out, nil
}

// assignedPeriodBounds are a lower bound of the period over every choice
// (the least work of every block, its least time times its group's size,
// spread over all devices, and the least time of every block) and a
// period every choice reaches with one micro-batch at a time: all blocks
// in sequence at their longest times, each waiting for the longest
// transfer of each dependency.
func assignedPeriodBounds(p *placement.Placement) (lo, hi int) {
	work := 0
	for i := range p.Blocks {
		w, t, long := 0, 0, 0
		for o, g := range p.DeviceOptions(i) {
			ti := p.OptionTime(i, o)
			if o == 0 || ti*len(g) < w {
				w = ti * len(g)
			}
			if o == 0 || ti < t {
				t = ti
			}
			long = max(long, ti)
		}
		work += w
		lo = max(lo, t)
		hi += long
	}
	lo = max(lo, (work+p.Devices-1)/p.Devices)
	for _, d := range p.Deps {
		c := 0
		for a := range p.DeviceOptions(d.From) {
			for b := range p.DeviceOptions(d.To) {
				c = max(c, p.OptionTransfer(d, a, b))
			}
		}
		hi += c
	}
	return max(lo, 1), max(hi, lo, 1)
}

// assignedAt looks for a choice and a repetend of period P
// (encode.AssignedAt): nil, nil when none exists.
func assignedAt(ctx context.Context, sp spec.Spec, P int, opt AssignedOptions, effort int) (*Repetend, []int, error) {
	choice, it, err := encode.AssignedAt(ctx, sp, P, encode.RepetendOptions{MaxNR: opt.MaxNR, Exclude: opt.Exclude, Seed: opt.Seed, Effort: effort})
	if it == nil || err != nil {
		return nil, nil, err
	}
	return repetend(maxOffset(it.Offsets)+1, it), choice, nil
}
