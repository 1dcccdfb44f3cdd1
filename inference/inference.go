// Package inference holds the baselines an inference placement (every
// block a forward) is compared with under a latency budget, after the
// Tessel paper's Fig. 15 (Lin et al., §VI-D: Flava on 4 GPUs against
// tensor parallelism and 1F1B):
//
//   - tensor parallelism across all devices ("tp"): every block on one
//     group of all D devices, micro-batches one after another; the time of
//     a block on D devices follows from its time on its own g devices by
//     the efficiency model below;
//   - a 1F1B-style pipeline ("1f1b"): the blocks in a topological order
//     (parallel branches one after another, as 1F1B must run them), each
//     on one device, cut into at most D contiguous stages of least largest
//     time; every stage runs the micro-batches in order as they arrive,
//     which is 1F1B without backward blocks;
//   - a GPipe-style pipeline ("gpipe"): baseline.GPipe on the inference
//     placement itself, every device running all micro-batches of its
//     first block before its next.
//
// # Efficiency of tensor parallelism
//
// Efficiency e (0 < e ≤ 1) is the share of the ideal speed-up a block
// keeps each time its devices double: a block of time t₁ on one device
// takes t₁ / (g · e^log₂g) on g devices. A block of time t on g devices
// thus takes ⌈t · (g/h) · e^(log₂g − log₂h)⌉ on h devices (at least 1):
// on all D devices for tensor parallelism, on one device for the 1F1B
// pipeline. With e = 1 the speed-up is ideal. A cluster's device speeds
// are already in the block times of the placement on it (cluster.Apply).
package inference

import (
	"fmt"
	"math"
	"strings"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Options configure the baselines.
type Options struct {
	// Efficiency is tensor parallelism's efficiency e (see the package
	// comment); 0 means 1, ideal.
	Efficiency float64
}

func (o Options) efficiency() float64 {
	if o.Efficiency == 0 {
		return 1
	}
	return o.Efficiency
}

// Check rejects an efficiency outside (0, 1].
func (o Options) Check() error {
	if e := o.Efficiency; e != 0 && !(e > 0 && e <= 1) {
		return fmt.Errorf("tensor-parallel efficiency must be in (0, 1], got %g", e)
	}
	return nil
}

// Baseline is one inference baseline.
type Baseline struct {
	Name    string // "tp", "1f1b", "gpipe"
	Title   string // as reports name it
	Summary string
	Build   func(p *placement.Placement, n int, opt Options) (*schedule.Schedule, error)
}

// Baselines lists the baselines: tp, 1f1b, gpipe.
func Baselines() []Baseline {
	return []Baseline{
		{Name: "tp", Title: "TP", Summary: "tensor parallelism: every block on all devices, one micro-batch after another", Build: TensorParallel},
		{Name: "1f1b", Title: "1F1B (chain)", Summary: "the blocks as a chain of stages, one device each, micro-batches in order (1F1B without backward)", Build: OneFOneB},
		{Name: "gpipe", Title: "GPipe", Summary: "GPipe on the inference placement: every device runs all micro-batches of a block before its next", Build: GPipe},
	}
}

// onDevices is the time of block b on h devices (package comment).
func onDevices(b placement.Block, h int, e float64) int {
	g := float64(len(b.Devices))
	x := float64(b.Time) * g / float64(h) * math.Pow(e, math.Log2(g)-math.Log2(float64(h)))
	return max(1, int(math.Ceil(x-1e-9)))
}

func check(p *placement.Placement, n int, opt Options) error {
	if err := opt.Check(); err != nil {
		return err
	}
	if p == nil {
		return fmt.Errorf("inference: no placement")
	}
	if err := p.Validate(); err != nil {
		return fmt.Errorf("inference: %w", err)
	}
	if !p.Inference() {
		return fmt.Errorf("inference: placement %q has blocks other than forwards: %w", p.Name, baseline.ErrNotApplicable)
	}
	if n < 1 || n > schedule.MaxMicroBatches {
		return fmt.Errorf("inference: %d micro-batches out of range 1..%d", n, schedule.MaxMicroBatches)
	}
	return nil
}

// TPPlacement is p with every block on all devices, at its time there
// (name "<p>-tp"). The dependencies stay; transfers vanish (one group).
func TPPlacement(p *placement.Placement, opt Options) *placement.Placement {
	all := make([]int, p.Devices)
	for d := range all {
		all[d] = d
	}
	q := &placement.Placement{Name: p.Name + "-tp", Devices: p.Devices, Deps: append([]placement.Dep(nil), p.Deps...)}
	for _, b := range p.Blocks {
		b.Time = onDevices(b, p.Devices, opt.efficiency())
		b.Devices = append([]int(nil), all...)
		q.Blocks = append(q.Blocks, b)
	}
	return q
}

// TensorParallel runs n micro-batches on TPPlacement(p): one after
// another, each block in a topological order.
func TensorParallel(p *placement.Placement, n int, opt Options) (*schedule.Schedule, error) {
	if err := check(p, n, opt); err != nil {
		return nil, err
	}
	q := TPPlacement(p, opt)
	topo, _ := q.Topo()
	orders := make([][]schedule.Ref, q.Devices)
	for m := range n {
		for _, i := range topo {
			for d := range orders {
				orders[d] = append(orders[d], schedule.Ref{Block: i, Micro: m})
			}
		}
	}
	return finish(q, n, orders)
}

// ChainPlacement is p's blocks as a chain on single devices: a
// topological order (ties by block index), each block at its time on one
// device, cut into at most D contiguous stages of least largest total
// time, stage s on device s (name "<p>-chain"). Consecutive blocks of the
// order depend on one another: parallel branches run one after another.
func ChainPlacement(p *placement.Placement, opt Options) *placement.Placement {
	topo, _ := p.Topo()
	times := make([]int, len(topo))
	for k, i := range topo {
		times[k] = onDevices(p.Blocks[i], 1, opt.efficiency())
	}
	stage := splitChain(times, p.Devices)
	q := &placement.Placement{Name: p.Name + "-chain", Devices: p.Devices}
	for k, i := range topo {
		b := p.Blocks[i]
		b.Time, b.Devices = times[k], []int{stage[k]}
		q.Blocks = append(q.Blocks, b)
		if k > 0 {
			q.Deps = append(q.Deps, placement.Dep{From: k - 1, To: k})
		}
	}
	return q
}

// splitChain cuts times into at most d contiguous parts minimising the
// largest sum (a DP over cut points) and returns each item's part; on a
// tie, the earliest cuts.
func splitChain(times []int, d int) []int {
	k := len(times)
	pre := make([]int, k+1)
	for i, t := range times {
		pre[i+1] = pre[i] + t
	}
	const inf = math.MaxInt
	// best[s][i]: least largest sum of the first i items in s parts.
	best := make([][]int, d+1)
	cut := make([][]int, d+1)
	for s := range best {
		best[s] = make([]int, k+1)
		cut[s] = make([]int, k+1)
		for i := range best[s] {
			best[s][i] = inf
		}
	}
	best[0][0] = 0
	for s := 1; s <= d; s++ {
		for i := 0; i <= k; i++ {
			for j := 0; j <= i; j++ {
				if best[s-1][j] == inf {
					continue
				}
				if v := max(best[s-1][j], pre[i]-pre[j]); v < best[s][i] {
					best[s][i], cut[s][i] = v, j
				}
			}
		}
	}
	s := 1
	for t := 1; t <= d; t++ {
		if best[t][k] < best[s][k] {
			s = t
		}
	}
	part := make([]int, k)
	for i := k; s > 0; s-- {
		j := cut[s][i]
		for x := j; x < i; x++ {
			part[x] = s - 1
		}
		i = j
	}
	// Empty parts leave their device idle; number the used ones 0, 1, ...
	next, seen := 0, map[int]int{}
	for x, v := range part {
		if _, ok := seen[v]; !ok {
			seen[v] = next
			next++
		}
		part[x] = seen[v]
	}
	return part
}

// OneFOneB runs n micro-batches on ChainPlacement(p): every device runs
// its blocks micro-batch after micro-batch in chain order, as they
// arrive.
func OneFOneB(p *placement.Placement, n int, opt Options) (*schedule.Schedule, error) {
	if err := check(p, n, opt); err != nil {
		return nil, err
	}
	q := ChainPlacement(p, opt)
	orders := make([][]schedule.Ref, q.Devices)
	for m := range n {
		for i, b := range q.Blocks {
			d := b.Devices[0]
			orders[d] = append(orders[d], schedule.Ref{Block: i, Micro: m})
		}
	}
	return finish(q, n, orders)
}

// GPipe is baseline.GPipe on p itself.
func GPipe(p *placement.Placement, n int, opt Options) (*schedule.Schedule, error) {
	if err := check(p, n, opt); err != nil {
		return nil, err
	}
	return baseline.GPipe(spec.New(p, n))
}

func finish(q *placement.Placement, n int, orders [][]schedule.Ref) (*schedule.Schedule, error) {
	cs, err := compact.Compact(spec.New(q, n), compact.Keep{Orders: orders})
	if err != nil {
		return nil, fmt.Errorf("inference: %w", err)
	}
	ins := cs.Instances
	s := &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: n}, Instances: ins}
	if err := verify.Schedule(s); err != nil {
		return nil, fmt.Errorf("inference: placement %q: %w", q.Name, err)
	}
	return s, nil
}

// Lookup is the method of the given name.
func Lookup(name string) (Baseline, bool) {
	for _, m := range Baselines() {
		if m.Name == name {
			return m, true
		}
	}
	return Baseline{}, false
}

// Names lists the methods' names, comma-separated.
func Names() string {
	var out []string
	for _, m := range Baselines() {
		out = append(out, m.Name)
	}
	return strings.Join(out, ", ")
}
