package search

import (
	"context"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// neverLoseCase is one row of the README's "never lose" table (docs/never-lose.md):
// a placement, a budget and N, searched with the default options.
type neverLoseCase struct {
	name   string
	p      func() (*placement.Placement, error)
	memory int
	n      int
}

func builtinCase(name string, devices, memory, n int) neverLoseCase {
	return neverLoseCase{
		name: fmt.Sprintf("%s-%dd-m%d-n%d", name, devices, memory, n),
		p: func() (*placement.Placement, error) {
			return placement.Builtin(name, placement.Options{Devices: devices})
		},
		memory: memory, n: n,
	}
}

func neverLoseCases() []neverLoseCase {
	var cs []neverLoseCase
	for _, d := range []int{16, 32, 64} {
		cs = append(cs, builtinCase("v-shape", d, d, 4*d))
	}
	for _, name := range []string{"x-shape", "m-shape", "nn-shape", "k-shape"} {
		for _, d := range []int{8, 16} {
			for _, m := range []int{d, 2 * d} {
				for _, n := range []int{2 * d, 128} {
					cs = append(cs, builtinCase(name, d, m, n))
				}
			}
		}
	}
	cs = append(cs, neverLoseCase{name: "chain-64x8-m16-n8", p: func() (*placement.Placement, error) { return layerChain(64, 8, 1, 2), nil }, memory: 16, n: 8})
	for _, order := range []string{"one", "loop", "v"} {
		for _, d := range []int{2, 4, 8} {
			for _, n := range []int{8, 16, 32} {
				if n < 2*d {
					continue
				}
				cs = append(cs, neverLoseCase{
					name: fmt.Sprintf("zb-%s-%dd-m%d-n%d", order, d, 2*d, n),
					p: func() (*placement.Placement, error) {
						opt := placement.Options{Devices: d, SplitBackward: true}
						if order != "one" {
							opt.Chunks, opt.Order = 2, placement.Order(order)
						}
						return placement.Builtin("v-shape", opt)
					},
					memory: 2 * d, n: n,
				})
			}
		}
	}
	return cs
}

// BenchmarkNeverLose runs the whole search with the default options on
// every case of the never-lose list (docs/never-lose.md) and reports, beside its time, the
// makespan, the lower bound, the best baseline that fits the budget
// (0 when none applies), the repetend's bubble rate and the best
// baseline's steady-state one.
func BenchmarkNeverLose(b *testing.B) {
	for _, c := range neverLoseCases() {
		b.Run(c.name, func(b *testing.B) {
			p, err := c.p()
			if err != nil {
				b.Fatal(err)
			}
			best, bestRate := 0, -1.0
			for _, m := range baseline.All() {
				s, err := m.Build(spec.Spec{Placement: p, MicroBatches: c.n, Memory: c.memory})
				if err != nil {
					continue
				}
				if ms := schedule.Makespan(s); best == 0 || ms < best {
					best = ms
				}
				if rate, _, err := baseline.SteadyBubbleRate(m, p); err == nil && (bestRate < 0 || rate < bestRate) {
					bestRate = rate
				}
			}
			for b.Loop() {
				res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: c.n, Memory: c.memory}, Options{})
				if err != nil {
					b.Fatal(err)
				}
				ms := res.Makespan()
				if best > 0 && ms > best {
					b.Errorf("makespan %d, worse than a baseline's %d", ms, best)
				}
				b.ReportMetric(float64(ms), "makespan")
				b.ReportMetric(float64(res.Bounds.Makespan), "lower-bound")
				b.ReportMetric(float64(best), "best-baseline")
				if res.Repetend != nil {
					b.ReportMetric(schedule.RepetendBubbleRate(p, res.Repetend.Period), "repetend-bubbles")
				}
				b.ReportMetric(bestRate, "baseline-bubbles")
			}
		})
	}
}

// layerChain is a model of stages × layers on stages devices: every
// layer's forward (time f, memory +1) down the devices, then every
// layer's backward (time bw, memory −1) back up, one chain.
func layerChain(stages, layers, f, bw int) *placement.Placement {
	p := &placement.Placement{Name: fmt.Sprintf("chain-%dx%d", stages, layers), Devices: stages}
	var chain []int
	for s := range stages {
		for l := range layers {
			p.Blocks = append(p.Blocks, placement.Block{ID: fmt.Sprintf("f%d.%d", s, l), Kind: placement.Forward, Devices: []int{s}, Time: f, Memory: 1})
			chain = append(chain, len(p.Blocks)-1)
		}
	}
	for s := stages - 1; s >= 0; s-- {
		for l := layers - 1; l >= 0; l-- {
			p.Blocks = append(p.Blocks, placement.Block{ID: fmt.Sprintf("b%d.%d", s, l), Kind: placement.Backward, Devices: []int{s}, Time: bw, Memory: -1})
			chain = append(chain, len(p.Blocks)-1)
		}
	}
	for k := 1; k < len(chain); k++ {
		p.Deps = append(p.Deps, placement.Dep{From: chain[k-1], To: chain[k]})
	}
	return p
}
