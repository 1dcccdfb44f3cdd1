// Package realcost generates the cases of the real-costs benchmark: split
// pipelines whose stages cost what a transformer's do — forward, input
// gradient and weight gradient in a fixed ratio, the embedding stage's
// backward cheaper, the head stage's forward and weight gradient heavier,
// every time off by up to ±10 % from a fixed seed — with transfers between
// devices, a memory budget and a micro-batch count. The cases are the
// table of docs/never-lose.md ("real costs"): the search must never lose to
// a baseline that fits the budget on any of them.
//
// Its second family (AutoSpecs, BuildAuto) is the zero-bubble
// auto-scheduler's setting: one stage per device at a transformer's
// per-stage costs, each device's budget the scheduler's own peak, and
// the scheduler's schedule with it, which the search must never lose to
// (docs/never-lose.md, "Against the zero-bubble auto-scheduler").
//
// It builds placements, and runs that scheduler for the second family's
// budgets; it does not search.
package realcost

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tessel-pp/tessel/placement"
)

// Layout is how the stages of the chain sit on the devices.
type Layout string

const (
	// One is one stage per device (the split v-shape).
	One Layout = "one"
	// Loop is two stages per device, stage s on device s mod D (PyTorch's
	// interleaved schedules).
	Loop Layout = "loop"
	// V is two stages per device, down the devices and back up (ZB-V).
	V Layout = "v"
)

// Layouts lists every layout (a new slice each call).
func Layouts() []Layout { return []Layout{One, Loop, V} }

// Ratio is F:I:W, the times of a stage's forward, input gradient and
// weight gradient before the stage's own factors and noise.
type Ratio struct{ F, I, W int }

func (r Ratio) String() string { return fmt.Sprintf("%d:%d:%d", r.F, r.I, r.W) }

// Ratios are the benchmark's F:I:W (a new slice each call).
func Ratios() []Ratio { return []Ratio{{1, 1, 1}, {2, 2, 1}, {1, 2, 1}, {3, 4, 2}} }

// Unit is the time of one part of a ratio: 1:1:1 is 4, 4, 4 before the
// stage factors and noise, so that ±10 % moves a time.
const Unit = 4

// Spec is one case before it is built.
type Spec struct {
	Layout   Layout
	Devices  int
	Ratio    Ratio
	Transfer int // time of every tensor between two devices
	// BudgetFactor k sets the memory budget to k × the number of stages
	// (one unit per forward activation).
	BudgetFactor int
	// MicroFactor k sets N to k × the devices.
	MicroFactor int
	// Seed of the ±10 % noise.
	Seed uint64
}

// Case is one row: a placement, its budget and N.
type Case struct {
	Name         string
	Spec         Spec
	Placement    *placement.Placement
	Memory       int
	MicroBatches int
}

// Stages is the number of pipeline stages of the layout on d devices.
func (l Layout) Stages(d int) int {
	if l == One {
		return d
	}
	return 2 * d
}

// Build builds the case of s.
func Build(s Spec) (Case, error) {
	opt := placement.Options{Devices: s.Devices, SplitBackward: true, ForwardTime: 1, InputTime: 1, WeightTime: 1}
	switch s.Layout {
	case One:
	case Loop:
		opt.Chunks, opt.Order = 2, placement.Loop
	case V:
		opt.Chunks, opt.Order = 2, placement.V
	default:
		return Case{}, fmt.Errorf("realcost: unknown layout %q", s.Layout)
	}
	p, err := placement.Builtin("v-shape", opt)
	if err != nil {
		return Case{}, fmt.Errorf("realcost: %w", err)
	}
	S := s.Layout.Stages(s.Devices)
	rng := rand.New(rand.NewPCG(s.Seed, 0x7e55e1))
	noisy := func(base float64) int {
		return max(1, int(math.Round(base*(0.9+0.2*rng.Float64()))))
	}
	for st := range S {
		f, i, w := float64(s.Ratio.F*Unit), float64(s.Ratio.I*Unit), float64(s.Ratio.W*Unit)
		switch st {
		case 0: // the embedding: a lookup forward, a cheap backward
			i, w = i/2, w/2
		case S - 1: // the head: the vocabulary projection and the loss
			f, w = f*1.5, w*1.5
		}
		for _, c := range []struct {
			id   string
			base float64
		}{{"f", f}, {"i", i}, {"w", w}} {
			p.Blocks[p.Index(fmt.Sprintf("%s%d", c.id, st))].Time = noisy(c.base)
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
	p.Name = fmt.Sprintf("real-%s-%dd-%s", s.Layout, s.Devices, s.Ratio)
	c := Case{Spec: s, Placement: p, Memory: s.BudgetFactor * S, MicroBatches: s.MicroFactor * s.Devices}
	c.Name = fmt.Sprintf("%s-%dd-%s-c%d-m%d-n%d", s.Layout, s.Devices, s.Ratio, s.Transfer, c.Memory, c.MicroBatches)
	return c, nil
}

// Specs is the whole table: every layout, device count (4, 8, 16) and
// ratio, each with two settings of transfer (0 to 4), budget (1× to 4×
// the stages) and N (2× to 4× the devices) that walk through their ranges
// with the row, so that every value meets every layout and size.
func Specs() []Spec {
	transfers := []int{0, 1, 2, 3, 4}
	budgets := []int{1, 2, 3, 4}
	micros := []int{2, 3, 4}
	var out []Spec
	k := 0
	for _, l := range Layouts() {
		for _, d := range []int{4, 8, 16} {
			for _, r := range Ratios() {
				for range 2 {
					out = append(out, Spec{Layout: l, Devices: d, Ratio: r,
						Transfer: transfers[k%len(transfers)], BudgetFactor: budgets[k%len(budgets)], MicroFactor: micros[k%len(micros)],
						Seed: uint64(k + 1)})
					k++
				}
			}
		}
	}
	return out
}

// Subset is a representative part of Specs for a quick test: the rows on
// 4 devices and the first of each pair on 8, every layout and ratio, with
// every transfer, budget and N factor among them.
func Subset() []Spec {
	var out []Spec
	for _, s := range Specs() {
		if s.Devices == 4 || (s.Devices == 8 && s.Seed%2 == 1) {
			out = append(out, s)
		}
	}
	return out
}

// AsBackward is p with every gradient block's kind written `backward`:
// the same graph, times and memory under other names (the roles, read
// from the graph, stay the same).
func AsBackward(p *placement.Placement) *placement.Placement {
	q := p.Clone()
	for i := range q.Blocks {
		if q.Blocks[i].Kind != placement.Forward {
			q.Blocks[i].Kind = placement.Backward
		}
	}
	return q
}
