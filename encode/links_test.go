package encode

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// The link rule these tests pin (docs/design.md, "Links": with --channels
// the transfers of one link run one at a time as a resource of their own),
// as placement.LinkQueue states it and verify.Schedule and
// compact.Compact apply it.

// channelPlacement is randomPlacement with a transfer time of 1..3 on
// every dependency between blocks that share no device, and channels on.
func channelPlacement(r *rand.Rand) *placement.Placement {
	p := randomPlacement(r)
	// More dependencies than randomPlacement draws, so that links are
	// shared more often.
	for i := range p.Blocks {
		for j := i + 1; j < len(p.Blocks); j++ {
			if d := (placement.Dep{From: i, To: j}); !slices.Contains(p.Deps, d) && r.IntN(2) == 0 {
				p.Deps = append(p.Deps, d)
			}
		}
	}
	p.Transfers = map[placement.Dep]int{}
	for _, d := range p.Deps {
		if !p.Shares(d.From, d.To) {
			p.Transfers[d] = 1 + r.IntN(3)
		}
	}
	p.QueuedLinks = true
	if err := p.Validate(); err != nil {
		panic(err)
	}
	return p
}

// permutations calls f with every permutation of xs (in place).
func permutations(xs []schedule.Ref, k int, f func()) {
	if k == len(xs) {
		f()
		return
	}
	for i := k; i < len(xs); i++ {
		xs[k], xs[i] = xs[i], xs[k]
		permutations(xs, k+1, f)
		xs[k], xs[i] = xs[i], xs[k]
	}
}

// eachOrder calls f with every combination of device orders of the n
// micro-batches of p (inconsistent ones included: Compact refuses them).
func eachOrder(p *placement.Placement, n int, f func(orders [][]schedule.Ref)) {
	orders := make([][]schedule.Ref, p.Devices)
	for _, r := range AllInstances(spec.New(p, n)) {
		for _, d := range p.Blocks[r.Block].Devices {
			orders[d] = append(orders[d], r)
		}
	}
	var rec func(d int)
	rec = func(d int) {
		if d == p.Devices {
			f(orders)
			return
		}
		permutations(orders[d], 0, func() { rec(d + 1) })
	}
	rec(0)
}

// orderCount is the number of combinations eachOrder tries.
func orderCount(p *placement.Placement, n int) int {
	c := 1
	for d := 0; d < p.Devices; d++ {
		k := 0
		for _, b := range p.Blocks {
			for _, x := range b.Devices {
				if x == d {
					k += n
				}
			}
		}
		for i := 2; i <= k; i++ {
			c *= i
		}
	}
	return c
}

// bruteOptimal is the least makespan of a schedule that verify.Schedule
// accepts, over every combination of device orders, each compacted with
// compact.Compact (the earliest starts that keep the orders, the link
// rule applied; a valid schedule compacts to a valid one no longer, so the
// optimum is among these). -1 when none is valid.
func bruteOptimal(p *placement.Placement, n, memory int) int {
	best := -1
	eachOrder(p, n, func(orders [][]schedule.Ref) {
		cs, err := compact.Compact(spec.New(p, n), compact.Keep{Orders: orders})
		if err != nil {
			return
		}
		ins := cs.Instances
		s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: memory}, Instances: ins}
		if verify.Schedule(s) != nil {
			return
		}
		if m := schedule.Makespan(s); best < 0 || m < best {
			best = m
		}
	})
	return best
}

// TestOptimalChannelsMatchesBruteForce: on tiny random placements with
// channels (2-3 devices, transfers 1..3, 2-3 micro-batches, with and
// without a memory budget), Optimal's schedule passes verify.Schedule as
// it is, without compaction, and its proven makespan is the brute-force
// optimum over all device orders. The test also asks that some cases have
// a link that lengthens the optimum and that some need the solver, so
// that it cannot pass without exercising the encoding of links.
func TestOptimalChannelsMatchesBruteForce(t *testing.T) {
	want := 40
	if testing.Short() {
		want = 15
	}
	r := rand.New(rand.NewPCG(11, 1))
	var solved, longer, solverUsed int
	for tries := 0; solved < want; tries++ {
		if tries > 5000 {
			t.Fatalf("only %d cases in %d tries", solved, tries)
		}
		p := channelPlacement(r)
		n := 2 + r.IntN(2)
		if orderCount(p, n) > 20000 {
			continue
		}
		memory := 0
		if r.IntN(2) == 0 {
			memory = 1 + r.IntN(3)
		}
		// Most problems the list schedules and the lower bound settle
		// alone; keep one in four of those, all of the others.
		if pr := InstanceProblem(spec.Spec{Placement: p, Memory: memory}, AllInstances(spec.New(p, n)), nil); bestGreedy(pr) == pr.LowerBound() && r.IntN(4) != 0 {
			continue
		}
		what := fmt.Sprintf("case %d: %d devices, blocks %v, deps %v, transfers %v, n %d, memory %d",
			tries, p.Devices, p.Blocks, p.Deps, p.Transfers, n, memory)
		opt := bruteOptimal(p, n, memory)
		s, sol, err := Optimal(context.Background(), p, n, memory, smt.Options{})
		if opt < 0 {
			if err == nil {
				t.Fatalf("%s: brute force finds no schedule, the solver one of %d", what, sol.Makespan)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v (brute force %d)", what, err, opt)
		}
		if err := verify.Schedule(s); err != nil {
			t.Fatalf("%s: the solver's schedule fails verification: %v", what, err)
		}
		if mk := schedule.Makespan(s); mk != sol.Makespan || mk != opt || !sol.Proven {
			t.Fatalf("%s: makespan %d (claimed %d, proven %v), brute force %d", what, mk, sol.Makespan, sol.Proven, opt)
		}
		free := p.Clone()
		free.QueuedLinks = false
		if bruteOptimal(free, n, memory) < opt {
			longer++
		}
		if sol.Checks > 0 {
			solverUsed++
		}
		solved++
	}
	t.Logf("%d cases, %d where links lengthen the optimum, %d that needed the solver", solved, longer, solverUsed)
	if longer == 0 || solverUsed == 0 {
		t.Fatalf("%d cases where links lengthen the optimum and %d that needed the solver: the test exercises too little", longer, solverUsed)
	}
}

// TestFeasibleAgreesWithVerifyOnLinks: for every combination of device
// orders of small random placements, the schedule compacted without the
// link rule (each consumer at its producer's end plus the transfer) is
// accepted by Problem.Feasible exactly when verify.Schedule accepts it
// with channels. Property 4.1's orders (Before) are dropped from the
// Problem, since the verifier does not ask for them.
func TestFeasibleAgreesWithVerifyOnLinks(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 2))
	var valid, invalid int
	for cases := 0; cases < 30; {
		p := channelPlacement(r)
		n := 2
		if orderCount(p, n) > 5000 {
			continue
		}
		cases++
		free := p.Clone()
		free.QueuedLinks = false
		refs := AllInstances(spec.New(p, n))
		pr := InstanceProblem(spec.Spec{Placement: p}, refs, nil)
		pr.Before = nil
		eachOrder(p, n, func(orders [][]schedule.Ref) {
			cs, err := compact.Compact(spec.New(free, n), compact.Keep{Orders: orders})
			if err != nil {
				return
			}
			ins := cs.Instances
			s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n}, Instances: ins}
			starts := make([]int, len(refs))
			at := map[schedule.Ref]int{}
			for _, in := range ins {
				at[in.Ref()] = in.Start
			}
			for k, ref := range refs {
				starts[k] = at[ref]
			}
			verr := verify.Schedule(s)
			if ok := pr.Feasible(starts); ok != (verr == nil) {
				t.Fatalf("blocks %v, deps %v, transfers %v, orders %v: Feasible %v, Verify %v", p.Blocks, p.Deps, p.Transfers, orders, ok, verr)
			}
			if verr == nil {
				valid++
			} else {
				invalid++
			}
		})
	}
	if valid == 0 || invalid == 0 {
		t.Fatalf("%d valid and %d invalid schedules: the test exercises too little", valid, invalid)
	}
}

// TestGreedyMeetsLinks: the list schedules of random placements with
// channels pass verify.Schedule, and the lower bound (with its link
// loads) stays at or below the brute-force optimum.
func TestGreedyMeetsLinks(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 3))
	for cases := 0; cases < 30; {
		p := channelPlacement(r)
		n := 2 + r.IntN(2)
		if orderCount(p, n) > 20000 {
			continue
		}
		cases++
		refs := AllInstances(spec.New(p, n))
		pr := InstanceProblem(spec.Spec{Placement: p}, refs, nil)
		opt := bruteOptimal(p, n, 0)
		if lb := pr.LowerBound(); lb > opt {
			t.Fatalf("blocks %v, deps %v, transfers %v, n %d: lower bound %d above the optimum %d", p.Blocks, p.Deps, p.Transfers, n, lb, opt)
		}
		for rule, starts := range smt.GreedyAll(pr) {
			s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n}}
			for k, ref := range refs {
				s.Instances = append(s.Instances, schedule.Instance{Block: ref.Block, Micro: ref.Micro, Start: starts[k]})
			}
			if err := verify.Schedule(s); err != nil {
				t.Fatalf("blocks %v, deps %v, transfers %v, n %d, rule %d: %v", p.Blocks, p.Deps, p.Transfers, n, rule, err)
			}
		}
	}
}

// TestChannelsLengthenOptimum: with channels the link 0→1 of twoSenders
// carries 2 transfers of 2 per micro-batch, more than device 0's load of
// 2, so it sets the optimum: the first transfer leaves at 1 at the
// earliest and 2n of them follow one another, then c takes 1: 4n + 2.
// Without channels the transfers overlap: device 0 ends at 2n, its last
// tensor arrives 2 later and c takes 1: 2n + 3. Both optima are proven,
// and the schedules pass the verifier under their own rule only.
func TestChannelsLengthenOptimum(t *testing.T) {
	for _, n := range []int{1, 3, 5} {
		with, sol, err := Optimal(context.Background(), placementtest.TwoSenders(true), n, 0, smt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := verify.Schedule(with); err != nil {
			t.Fatalf("n %d, channels: %v", n, err)
		}
		if mk := schedule.Makespan(with); mk != 4*n+2 || !sol.Proven {
			t.Errorf("n %d, channels: makespan %d (proven %v), want %d", n, mk, sol.Proven, 4*n+2)
		}
		without, sol, err := Optimal(context.Background(), placementtest.TwoSenders(false), n, 0, smt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if mk := schedule.Makespan(without); mk != 2*n+3 || !sol.Proven {
			t.Errorf("n %d, no channels: makespan %d (proven %v), want %d", n, mk, sol.Proven, 2*n+3)
		}
		// The schedule without channels breaks the link rule.
		without.Placement = placementtest.TwoSenders(true)
		if err := verify.Schedule(without); err == nil {
			t.Errorf("n %d: the schedule without channels passes the verifier with them", n)
		}
	}
}

// TestInstanceProblemLinks: with channels, InstanceProblem lists one
// transfer per link a dependency crosses, in the order of Deps then of
// the consumer's devices, and none for dependencies inside a device;
// without channels, none at all.
func TestInstanceProblemLinks(t *testing.T) {
	p := &placement.Placement{
		Name: "fan", Devices: 3,
		Blocks: []placement.Block{
			{ID: "a", Kind: placement.Forward, Devices: []int{0}, Time: 1},
			{ID: "g", Kind: placement.Forward, Devices: []int{1, 2}, Time: 1},
			{ID: "h", Kind: placement.Forward, Devices: []int{0}, Time: 1},
		},
		Deps:   []placement.Dep{{From: 0, To: 1}, {From: 0, To: 2}, {From: 1, To: 2}},
		Timing: placement.Timing{Transfers: map[placement.Dep]int{{From: 0, To: 1}: 2, {From: 0, To: 2}: 3, {From: 1, To: 2}: 1}},
	}
	if pr := InstanceProblem(spec.Spec{Placement: p}, AllInstances(spec.New(p, 1)), nil); pr.Transfers != nil {
		t.Errorf("without channels: transfers %v", pr.Transfers)
	}
	p.QueuedLinks = true
	pr := InstanceProblem(spec.Spec{Placement: p}, AllInstances(spec.New(p, 1)), nil)
	// a → g crosses 0→1 and 0→2; a → h stays on device 0; g → h goes
	// from g's first device, 1, to 0.
	want := []smt.Transfer{{From: 0, To: 1, Link: 1, Time: 2}, {From: 0, To: 1, Link: 2, Time: 2}, {From: 1, To: 2, Link: 3, Time: 1}}
	if fmt.Sprint(pr.Transfers) != fmt.Sprint(want) {
		t.Errorf("transfers %v, want %v", pr.Transfers, want)
	}
}

// TestOptimalChannelsBuiltin: on the 4-device v- and m-shapes with a
// transfer time of 5, longer than any block, consecutive micro-batches'
// tensors queue on each link. Optimal's schedule with channels passes
// verify.Schedule as it is, is proven, is a fixed point of
// compact.Compact (compaction, which applies the link rule, cannot
// shorten an optimum), and ends later than the optimum without channels.
func TestOptimalChannelsBuiltin(t *testing.T) {
	for _, shape := range []string{"v-shape", "m-shape"} {
		p := placementtest.WithTransfers(placementtest.Builtin(t, shape, placement.Options{Devices: 4}), 5, false)
		free, _, err := Optimal(context.Background(), p, 4, 6, smt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p.QueuedLinks = true
		s, sol, err := Optimal(context.Background(), p, 4, 6, smt.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := verify.Schedule(s); err != nil {
			t.Fatalf("%s: %v", shape, err)
		}
		mk := schedule.Makespan(s)
		if !sol.Proven || mk != sol.Makespan {
			t.Errorf("%s: makespan %d, claimed %d, proven %v", shape, mk, sol.Makespan, sol.Proven)
		}
		cs, err := compact.Compact(spec.New(p, 4), compact.Keep{Orders: schedule.Orders(s)})
		if err != nil {
			t.Fatal(err)
		}
		ins := cs.Instances
		if c := schedule.Makespan(&schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 4}, Instances: ins}); c != mk {
			t.Errorf("%s: compaction takes the optimum %d to %d", shape, mk, c)
		}
		if fm := schedule.Makespan(free); mk <= fm {
			t.Errorf("%s: makespan %d with channels, %d without: the links should cost time", shape, mk, fm)
		}
		t.Logf("%s: makespan %d with channels, %d without, %d solver calls", shape, mk, schedule.Makespan(free), sol.Checks)
	}
}
