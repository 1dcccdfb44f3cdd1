// Package baseline holds the predefined pipeline schedules that Tessel is
// compared against (the paper's §VI-A and Table II): GPipe, 1F1B, interleaved
// 1F1B with virtual stages, Chimera-direct and 1F1B+; the zero-bubble
// family for a backward split into input and weight blocks: ZB-H1, ZB-H2,
// ZB-V, DualPipe and DualPipeV; and the schedules PyTorch and the
// zero-bubble authors ship: ScheduleLoopedBFS and ScheduleInterleavedZeroBubble
// (ZB1P) on the loop placement, V-Half and V-Min on the V placement, and
// the zero-bubble auto-scheduler's cost-aware greedy on a split chain.
//
// Each baseline works on the same placement model as the search: it
// recognises the shape of a placement from its block structure (never from
// block ids), writes a per-device order of block instances, lets
// compact.Compact give every instance its earliest start under those orders,
// and checks the result with verify.Schedule before returning it. A baseline
// that does not apply to a placement returns an error wrapping
// ErrNotApplicable (the paper's ×); it never guesses.
//
// Baselines do not adapt to a memory budget: their order is fixed by their
// rule. When a schedule's peak memory exceeds the budget, Build still returns
// it (verified without a budget, Memory 0) together with an error wrapping
// ErrOverBudget, so that a caller can report both its bubble rate and that
// the budget was not respected. The baselines that trade time for memory
// decide as they go; where their rule gets stuck under the budget they
// return no schedule and an error wrapping ErrNoSchedule.
//
// The package does not search: for searched schedules see packages repetend
// and search.
package baseline

import (
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// ErrNotApplicable is wrapped by every error that says a baseline has no
// straightforward adaptation to a placement (the paper's × in Table II).
var ErrNotApplicable = errors.New("not applicable")

// ErrOverBudget is wrapped by the error Build returns, beside a valid
// schedule, when the baseline's peak memory exceeds the budget.
var ErrOverBudget = errors.New("memory budget not respected")

// ErrNoSchedule is wrapped by the error of a baseline whose rule finds no
// schedule under the budget: the time-for-memory baselines, which decide
// as they go (PipeOffload, AdaOffload, 1F1B with recompute). It comes
// without a schedule.
var ErrNoSchedule = errors.New("no schedule under the budget")

// Baseline is one baseline schedule.
type Baseline struct {
	Name    string // stable, lower-case: the name the CLI accepts
	Summary string // one line for people
	// Split says the method needs a backward split into input and weight
	// blocks (the zero-bubble family): callers may leave it out for
	// placements without one rather than list it as not applicable.
	Split bool
	// Memory says the method trades time for memory: it needs forward
	// blocks that may be offloaded or recomputed (placement's Offload,
	// Recompute); callers may leave it out for placements without them.
	Memory bool
	// Quiet says a listing (tessel compare) shows the method only where
	// it applies, not as × elsewhere: the methods added after the paper's
	// and the zero-bubble papers' own, which apply to one placement each.
	Quiet bool
	// Build schedules n ≥ 1 micro-batches of p under a per-device memory
	// budget (0: unlimited). See the package comment for ErrNotApplicable
	// and ErrOverBudget.
	Build func(sp spec.Spec) (*schedule.Schedule, error)
}

// All returns every baseline in a stable order: gpipe, 1f1b,
// 1f1b-interleaved, chimera-direct, 1f1b-plus, then the zero-bubble
// family: zb-h1, zb-h2, zb-v, dualpipe, dualpipe-v, dualpipe-v-overlap; then the schedules
// users already have from PyTorch and the zero-bubble authors: looped-bfs,
// zb1p, v-half, v-min, zb-auto; then the baselines that trade time for
// memory: pipeoffload, adaoffload, 1f1b-recompute.
func All() []Baseline {
	return []Baseline{
		{Name: "gpipe", Summary: "all forwards of all micro-batches, then all backwards (any placement)", Build: GPipe},
		{Name: "1f1b", Summary: "one forward one backward on a v-shape pipeline: stage s warms up with S−s forwards", Build: OneFOneB},
		{Name: "1f1b-interleaved", Summary: "1F1B with virtual stages: several stages of one chain on every device (Megatron-LM)", Build: Interleaved},
		{Name: "chimera-direct", Summary: "the two pipelines of an x-shape scheduled together in units of S/2 micro-batches, units concatenated directly", Build: ChimeraDirect},
		{Name: "1f1b-plus", Summary: "1F1B with every block on all devices inserted next to its neighbour in the 1F1B order (m- and nn-shape)", Build: OneFOneBPlus},
		{Name: "zb-h1", Summary: "ZB-H1: 1F1B's order of forwards and input blocks, weight blocks delayed into the bubbles, 1F1B's memory (split v-shape)", Build: ZBH1, Split: true},
		{Name: "zb-h2", Summary: "ZB-H2: longer warmup and weight blocks delayed further, about twice 1F1B's memory, no steady bubble (split v-shape)", Build: ZBH2, Split: true},
		{Name: "zb-v", Summary: "ZB-V: zero bubble on the V placement, two stages per device (v-shape --chunks 2 --order v, split)", Build: ZBV, Split: true},
		{Name: "dualpipe", Summary: "DeepSeek's DualPipe: two pipelines in opposite directions, forward and backward of the two paired (dualpipe)", Build: DualPipe, Split: true},
		{Name: "dualpipe-v", Summary: "DualPipeV: DualPipe cut in half on the V placement (v-shape --chunks 2 --order v, split)", Build: DualPipeV, Split: true},
		{Name: "dualpipe-v-overlap", Summary: "DualPipeV as DeepSeek runs it: its steady phase's forward-backward pairs overlapped, each for the overlap time (V placement, split, --overlap-time)", Build: DualPipeVOverlap, Split: true, Quiet: true},
		{Name: "looped-bfs", Summary: "PyTorch's ScheduleLoopedBFS: every micro-batch of a device's first stage, then of its next, backwards in reverse (loop placement, --chunks C --order loop)", Build: LoopedBFS, Quiet: true},
		{Name: "zb1p", Summary: "PyTorch's ScheduleInterleavedZeroBubble (ZB1P): interleaved 1F1B of forwards and input blocks, weight blocks delayed by the rank (loop placement, split)", Build: ZB1P, Split: true, Quiet: true},
		{Name: "v-half", Summary: "V-Half (Qi et al., controllable memory): about half of 1F1B's activations on the V placement (--chunks 2 --order v, split)", Build: VHalf, Split: true, Quiet: true},
		{Name: "v-min", Summary: "V-Min (Qi et al., controllable memory): about a third of 1F1B's activations on the V placement (--chunks 2 --order v, split)", Build: VMin, Split: true, Quiet: true},
		{Name: "zb-auto", Summary: "the zero-bubble auto-scheduler's greedy: per-stage F/I/W times, transfers and budgets (split v-shape)", Build: ZBAuto, Split: true, Quiet: true},
		{Name: "pipeoffload", Summary: "PipeOffload (Wan et al. 2025): every forward's activation offloaded to host memory and reloaded just before its backward, 1F1B's fill (--offload-time)", Build: PipeOffload, Memory: true},
		{Name: "adaoffload", Summary: "AdaOffload (OptPipe, App. D): PipeOffload with a fill phase as dense as the budget allows (--offload-time)", Build: AdaOffload, Memory: true},
		{Name: "1f1b-recompute", Summary: "1F1B with full activation recomputation (Megatron-LM's checkpointing): every forward runs again before its backward (--recompute)", Build: OneFOneBRecompute, Memory: true},
	}
}

// Lookup returns the baseline with the given name.
func Lookup(name string) (Baseline, bool) {
	for _, m := range All() {
		if m.Name == name {
			return m, true
		}
	}
	return Baseline{}, false
}

// notApplicable builds the error of a baseline that does not fit p.
func notApplicable(method string, p *placement.Placement, format string, args ...any) error {
	return fmt.Errorf("%s: placement %q: %s: %w", method, p.Name, fmt.Sprintf(format, args...), ErrNotApplicable)
}

// checkArgs rejects inputs no baseline can schedule.
func checkArgs(method string, p *placement.Placement, n, memory int) error {
	switch {
	case p == nil:
		return fmt.Errorf("%s: no placement", method)
	case n < 1:
		return fmt.Errorf("%s: placement %q: %d micro-batches, need at least 1", method, p.Name, n)
	case memory < 0:
		return fmt.Errorf("%s: placement %q: negative memory budget %d", method, p.Name, memory)
	}
	if _, ok := p.Topo(); !ok {
		return fmt.Errorf("%s: placement %q: dependencies have a cycle", method, p.Name)
	}
	return nil
}

// finish compacts the per-device orders into a schedule, verifies it and
// checks the budget.
func finish(method string, p *placement.Placement, n, memory int, orders [][]schedule.Ref) (*schedule.Schedule, error) {
	return finishPairs(method, spec.Spec{Placement: p, MicroBatches: n, Memory: memory}, compact.Keep{Orders: orders})
}

// finishPairs is finish with overlapped pairs (keep's Pairs): the
// orders and pairs compacted (compact.Compact) without the budget, which
// is checked on the orders' peak memory instead.
func finishPairs(method string, sp spec.Spec, keep compact.Keep) (*schedule.Schedule, error) {
	p, n, memory, orders, pairs := sp.Placement, sp.MicroBatches, sp.Memory, keep.Orders, keep.Pairs
	cs, err := compact.Compact(spec.New(p, n), compact.Keep{Orders: orders, Pairs: pairs})
	if err != nil {
		return nil, fmt.Errorf("%s: placement %q: %w", method, p.Name, err)
	}
	ins := cs.Instances
	peak := peakMemory(p, orders)
	over := false
	for d, m := range peak {
		b := p.Budget(d, memory)
		over = over || (b > 0 && m > b)
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: memory}, Instances: ins, Pairs: pairs}
	if over {
		// Shown anyway, as over the budget: verified without one.
		s.Memory = 0
		if p.Capacities != nil {
			s.Placement = p.Clone()
			s.Placement.Capacities = nil
		}
	}
	if err := verify.Schedule(s); err != nil {
		return nil, fmt.Errorf("%s: placement %q: schedule fails verification: %w", method, p.Name, err)
	}
	if over {
		return s, fmt.Errorf("%s: placement %q: peak memory %v exceeds the budget %s: %w", method, p.Name, peak, BudgetText(p, memory), ErrOverBudget)
	}
	return s, nil
}

// peakMemory is the highest running memory sum on every device when it runs
// its order (the order alone fixes memory).
func peakMemory(p *placement.Placement, orders [][]schedule.Ref) []int {
	peak := make([]int, p.Devices)
	for d, order := range orders {
		cur := 0
		for _, r := range order {
			cur += p.Blocks[r.Block].Memory
			peak[d] = max(peak[d], cur)
		}
	}
	return peak
}

// project splits one global sequence of instances, which must list every
// instance once in an order that respects the dependencies, into per-device
// orders. Blocks on a group of devices then appear in the same relative
// order on all of them, so compaction cannot deadlock.
func project(p *placement.Placement, seq []schedule.Ref) [][]schedule.Ref {
	orders := make([][]schedule.Ref, p.Devices)
	for _, r := range seq {
		for _, d := range p.Blocks[r.Block].Devices {
			orders[d] = append(orders[d], r)
		}
	}
	return orders
}

// SteadyBubbleRate measures the bubble rate of a baseline as the number of
// micro-batches grows (what Table II reports), with unlimited memory. The
// baselines are periodic once warm, so the extra makespan per extra
// micro-batch between N1 = 8·D and N2 = 16·D micro-batches is the steady
// period P (time per micro-batch, a multiple of every baseline's unit of
// micro-batches), and the rate is (D·P − Σ_d load_d)/(D·P).
func SteadyBubbleRate(m Baseline, p *placement.Placement) (rate, period float64, err error) {
	if p == nil || p.Devices < 1 {
		return 0, 0, fmt.Errorf("%s: no placement", m.Name)
	}
	if p.Capacities != nil {
		p = p.Clone() // unlimited memory: the devices' capacities too
		p.Capacities = nil
	}
	n1, n2 := 8*p.Devices, 16*p.Devices
	s1, err := m.Build(spec.New(p, n1))
	if err != nil {
		return 0, 0, err
	}
	s2, err := m.Build(spec.New(p, n2))
	if err != nil {
		return 0, 0, err
	}
	period = float64(schedule.Makespan(s2)-schedule.Makespan(s1)) / float64(n2-n1)
	load := 0
	for _, l := range p.Loads() {
		load += l
	}
	busy := float64(p.Devices) * period
	if len(s1.Pairs) > 0 || len(s2.Pairs) > 0 {
		// Overlapped pairs save device time: the busy time one more
		// micro-batch adds, measured.
		sum := func(s *schedule.Schedule) (b int) {
			for _, l := range schedule.Measure(s).Loads {
				b += l
			}
			return b
		}
		more := float64(sum(s2)-sum(s1)) / float64(n2-n1)
		return (busy - more) / busy, period, nil
	}
	return (busy - float64(load)) / busy, period, nil
}

// BudgetText is the memory budget of p under memory as one number when
// every device has the same, else the list of every device's
// (placement's Budget).
func BudgetText(p *placement.Placement, memory int) string {
	if p.Uniform(memory) {
		return fmt.Sprint(p.Budget(0, memory))
	}
	return fmt.Sprint(p.Budgets(memory))
}
