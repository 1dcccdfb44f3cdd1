package repetend

import (
	"context"
	"errors"

	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/z3"
)

// Decided is a repetend whose forward blocks may offload or recompute
// their activation (placement's "Memory as a decision"; Qi et al.,
// "OptPipe: Memory- and Scheduling-Optimized Pipeline Parallelism for
// LLM Training", Appendix C), the same decision in every iteration.
// Times are in the iteration's frame, as Starts: iteration k offloads
// block i's activation (of micro-batch Offsets[i] + k) at Offload[i] +
// k·Period; its reload and recompute are in the frame of the consumer's
// iteration (the one that runs the consumer of that micro-batch), at
// Reload[i] + k'·Period, where k' = k + Offsets[i] − Offsets[consumer].
type Decided struct {
	Repetend
	Actions   []placement.Action // per block: Keep (or ""), Offload or Recompute
	Offload   []int              // per block: offload start, when offloaded
	Reload    []int              // per block: reload start, when offloaded
	Recompute []int              // per block: recompute start, when recomputed
}

// DecideOptions are SearchDecided's effort; the problem (the placement,
// the memory budget, the decisions allowed) is its spec.
type DecideOptions struct {
	MaxNR int // largest N_R; 0: DefaultNRLimit
	Seed  int
	// Effort caps each solver call (z3.SolverOptions.Effort); 0:
	// DefaultEffort, negative: no cap. A call that runs out moves on to
	// the next period.
	Effort int
	// MaxPeriod is the largest period tried (0: the placement's
	// sequential bound): a caller with a repetend that keeps every
	// activation passes its period less one.
	MaxPeriod int
}

// ErrDecisionsUnsupported means the placement has something the encoding
// of decided repetends does not model (channels between devices, or a
// micro-batch that leaves memory behind).
var ErrDecisionsUnsupported = errors.New("repetend: decisions on this placement are not encoded (links with channels, or memory left behind)")

// SearchDecided finds a repetend of sp's placement of short period whose
// per-block decisions (keep, offload, recompute, as sp allows) fit sp's
// memory budget in the
// steady state: P = MaxPeriod, − 1, … down to the lower bound, each with
// the offsets and the decisions as variables (the joint method's
// encoding) and, per device, memory counted across iterations with every
// offload and recompute (encode.DecidedAt), until a period has none or a
// check runs out of effort (top-down: the checks that find one are the
// cheap ones). It returns the last found, nil when none was: the least
// period among decided repetends only where the check below it proved
// none exists, which the result does not claim.
func SearchDecided(ctx context.Context, sp spec.Spec, opt DecideOptions) (*Decided, error) {
	p := sp.Placement
	if links.Queued(p) {
		return nil, ErrDecisionsUnsupported
	}
	for _, net := range NetMemory(p) {
		if net != 0 {
			return nil, ErrDecisionsUnsupported
		}
	}
	if opt.MaxNR <= 0 {
		opt.MaxNR = DefaultNRLimit(p)
	}
	hi := opt.MaxPeriod
	if hi <= 0 {
		hi = upperPeriod(p)
	}
	effort := Options{Effort: opt.Effort}.effort()
	var best *Decided
	for P := hi; P >= periodLowerBound(p); P-- {
		if ctx.Err() != nil {
			break
		}
		r, err := decidedAt(ctx, sp, P, opt, effort)
		switch {
		case errors.Is(err, z3.ErrEffort) || (err != nil && interrupted(err)):
			return best, nil
		case err != nil:
			return nil, err
		case r == nil:
			return best, nil
		}
		best = r
	}
	return best, nil
}

// decidedAt is one check of SearchDecided at period P (encode.DecidedAt).
func decidedAt(ctx context.Context, sp spec.Spec, P int, opt DecideOptions, effort int) (*Decided, error) {
	it, err := encode.DecidedAt(ctx, sp, P, encode.RepetendOptions{MaxNR: opt.MaxNR, Seed: opt.Seed, Effort: effort})
	if it == nil || err != nil {
		return nil, err
	}
	return &Decided{Repetend: Repetend{NR: maxOffset(it.Offsets) + 1, Offsets: it.Offsets, Period: it.Period, Starts: it.Starts},
		Actions: it.Actions, Offload: it.Offload, Reload: it.Reload, Recompute: it.Recompute}, nil
}

// Unroll is the schedule of n micro-batches that repeats the decided
// repetend exactly: B_i^m at Starts[i] + (m − n_i)·P, its offload at
// Offload[i] + (m − n_i)·P, its reload and recompute at Reload[i] or
// Recompute[i] + (m − n_c)·P (the consumer's frame), every time shifted
// so that the first is 0. Where the steady state fits the budget, so does
// every partial iteration of the warmup and cooldown (each micro-batch
// holds memory only between its forward and its free), so the schedule
// verifies when the encoding is right: the test of the encoding against
// the verifier. It is long (the warmup and cooldown are whole
// iterations); the caller compacts it.
func (r *Decided) Unroll(sp spec.Spec) *schedule.Schedule {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	P := r.Period
	consumers := p.Consumers()
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: memory}}
	lo := 0
	first := true
	note := func(t int) {
		if first || t < lo {
			lo, first = t, false
		}
	}
	for m := range n {
		for i := range p.Blocks {
			t := r.Starts[i] + (m-r.Offsets[i])*P
			note(t)
			s.Instances = append(s.Instances, schedule.Instance{Block: i, Micro: m, Start: t})
			shift := (m - r.Offsets[i]) * P
			c := consumers[i]
			switch r.Actions[i] {
			case placement.Offload:
				back := (m - r.Offsets[c]) * P
				s.Decisions = append(s.Decisions, schedule.Decision{Block: i, Micro: m, Action: placement.Offload,
					Start: r.Offload[i] + shift, Reload: r.Reload[i] + back})
				note(r.Offload[i] + shift)
			case placement.Recompute:
				back := (m - r.Offsets[c]) * P
				s.Decisions = append(s.Decisions, schedule.Decision{Block: i, Micro: m, Action: placement.Recompute, Start: r.Recompute[i] + back})
			}
		}
	}
	for k := range s.Instances {
		s.Instances[k].Start -= lo
	}
	for k := range s.Decisions {
		s.Decisions[k].Start -= lo
		if s.Decisions[k].Action == placement.Offload {
			s.Decisions[k].Reload -= lo
		}
	}
	s.Sort()
	return s
}
