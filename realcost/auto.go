package realcost

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// AutoSpec is one case of the zero-bubble auto-scheduler's family: the
// setting in which users run that scheduler's greedy (Qi et al., "Zero
// Bubble Pipeline Parallelism", §3.3; baseline.ZBAuto). One stage per
// device, the backward split into input and weight gradients, the
// repository's memory accounting (forward +2, input gradient −1, weight
// gradient −1: the input gradient frees part of the activation), and the
// costs of a transformer's stages:
//
//   - forward 9 to 11; input gradient from the forward to 4 more; weight
//     gradient from half the forward to one less than it;
//   - the embedding stage (the first): input gradient 3 to 5, weight
//     gradient 2 to 4 (a lookup's backward);
//   - the head stage (the last): forward and weight gradient a quarter
//     heavier (the vocabulary projection and the loss), the weight
//     gradient still shorter than the forward;
//   - one transfer time on every stage boundary, as the repository's
//     scheduler takes it.
//
// Each device's budget is the greedy's own peak there when it runs under
// the repository's memory limit of Stages pending backwards (its
// --zero-bubble-max-pending-backward set to the stage count: ZB-1p,
// 1F1B's activation memory).
type AutoSpec struct {
	Stages      int // 2 or more: the devices
	MicroFactor int // N = MicroFactor × Stages
	Transfer    int // every tensor between two devices
	Seed        uint64
}

// AutoCase is one row of the family: the placement (its capacities are
// the budgets), N, and the greedy's schedule at those costs and budgets
// (the schedule the search must never lose to).
type AutoCase struct {
	Name         string
	Spec         AutoSpec
	Placement    *placement.Placement
	MicroBatches int
	Heuristic    *schedule.Schedule
}

// autoHead is the head stage's factor on its forward and weight gradient.
const autoHead = 1.25

// BuildAuto builds the case of s.
func BuildAuto(s AutoSpec) (AutoCase, error) {
	if s.Stages < 2 || s.MicroFactor < 1 || s.Transfer < 0 {
		return AutoCase{}, fmt.Errorf("realcost: auto case %+v: want 2 or more stages, a micro-batch factor of 1 or more and a transfer of 0 or more", s)
	}
	S := s.Stages
	p, err := placement.Builtin("v-shape", placement.Options{Devices: S, SplitBackward: true})
	if err != nil {
		return AutoCase{}, fmt.Errorf("realcost: %w", err)
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x2b0b1e))
	in := func(lo, hi int) int { return lo + rng.IntN(hi-lo+1) }
	for st := range S {
		f := in(9, 11)
		i := in(f, f+4)
		w := in((f+1)/2, f-1)
		switch st {
		case 0:
			i, w = in(3, 5), in(2, 4)
		case S - 1:
			f = int(math.Round(float64(f) * autoHead))
			w = min(f-1, int(math.Round(float64(w)*autoHead)))
		}
		for _, c := range []struct {
			id        string
			time, mem int
		}{{"f", f, 2}, {"i", i, -1}, {"w", w, -1}} {
			b := &p.Blocks[p.Index(fmt.Sprintf("%s%d", c.id, st))]
			b.Time, b.Memory = c.time, c.mem
		}
	}
	if s.Transfer > 0 {
		p.Transfers = map[placement.Dep]int{}
		for _, d := range p.Deps {
			if !p.Shares(d.From, d.To) {
				p.Transfers[d] = s.Transfer
			}
		}
	}
	p.Name = fmt.Sprintf("auto-%ds", S)
	n := s.MicroFactor * S
	// The budgets: the greedy's peak under ZB-1p's limit (S pending
	// backwards of 2 units each).
	sp := spec.New(p, n)
	sp.Memory = 2 * S
	limited, err := baseline.ZBAuto(sp)
	if err != nil && !errors.Is(err, baseline.ErrOverBudget) {
		return AutoCase{}, fmt.Errorf("realcost: %w", err)
	}
	p.Capacities = slices.Clone(schedule.Measure(limited).PeakMemory)
	h, err := baseline.ZBAuto(spec.New(p, n))
	if err != nil {
		return AutoCase{}, fmt.Errorf("realcost: the greedy at its own peak: %w", err)
	}
	c := AutoCase{Spec: s, Placement: p, MicroBatches: n, Heuristic: h}
	c.Name = fmt.Sprintf("auto-%ds-c%d-n%d-s%d", S, s.Transfer, n, s.Seed)
	return c, nil
}

// AutoSpecs is the family's table: 4, 6, 8, 12 and 16 stages, each with
// N = 2, 3 and 4 × the stages and a transfer that walks through 0 to 4
// with the row, one seed per row (15 cases).
func AutoSpecs() []AutoSpec {
	var out []AutoSpec
	k := 0
	for _, S := range []int{4, 6, 8, 12, 16} {
		for _, m := range []int{2, 3, 4} {
			out = append(out, AutoSpec{Stages: S, MicroFactor: m, Transfer: k % 5, Seed: uint64(k + 1)})
			k++
		}
	}
	return out
}
