package exact_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/exact"
	"github.com/tessel-pp/tessel/hetero"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/quantity"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// plan is tessel plan's path without the memory model: the Llama-7B-like
// profile split on a cluster (the search's step unit, 0 for the default),
// its placement on the cluster, the search on the coarse copy and its
// answer at the placement's own steps.
func plan(t *testing.T, clusterFile string, unit float64, n int) (*hetero.Report, *placement.Placement, *exact.Result) {
	t.Helper()
	g, err := partition.Load("../testdata/models/llama7b.json")
	if err != nil {
		t.Fatal(err)
	}
	c, err := cluster.Load("../testdata/clusters/" + clusterFile)
	if err != nil {
		t.Fatal(err)
	}
	g.Accelerators = len(c.Devices)
	r, err := hetero.Run(context.Background(), g, c, hetero.Options{TimeUnit: unit})
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Cluster.Apply(r.Converted.Placement)
	if err != nil {
		t.Fatal(err)
	}
	res, err := exact.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: n}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(res.Schedule); err != nil {
		t.Fatalf("the answer at the placement's own times: %v", err)
	}
	return r, p, res
}

func makespanMs(s *schedule.Schedule) float64 {
	return s.Placement.Units.InUnit(float64(schedule.Makespan(s)))
}

// The time unit may coarsen the search; it never coarsens the answer: on
// the Llama-7B-like profile, the default search step and one ten times
// finer give the same split and makespans within 1 %.
func TestTimeUnitMovesLittle(t *testing.T) {
	testskip.Short(t, "four searches")
	for _, c := range []string{"llama-8x80.json", "llama-mixed.json"} {
		r, _, res := plan(t, c, 0, 32)
		unit := r.Converted.SearchUnit
		r10, _, res10 := plan(t, c, unit/10, 32)
		if !slices.Equal(r.Split.Cuts(), r10.Split.Cuts()) || !slices.Equal(r.Split.Order(), r10.Split.Order()) {
			t.Errorf("%s: the split at a search step of %g ms is %v on %v, at %g ms %v on %v", c, unit, r.Split.Cuts(), r.Split.Order(),
				unit/10, r10.Split.Cuts(), r10.Split.Order())
		}
		a, b := makespanMs(res.Schedule), makespanMs(res10.Schedule)
		if math.Abs(a-b) > 0.01*math.Min(a, b) {
			t.Errorf("%s: makespan %.2f ms at a search step of %g ms, %.2f ms at %g ms: more than 1 %% apart", c, a, unit, b, unit/10)
		}
		if res.Step < 2 || r.Converted.TimeUnit >= unit {
			t.Errorf("%s: the placement's step %g is no finer than the search's %g", c, r.Converted.TimeUnit, unit)
		}
	}
}

// A link of 0.17 ms (an activation of 33.5 MB over NVLink at 200 GB/s) is
// charged 0.17 ms on the placement, though the search's step is 3 ms.
func TestLinkChargedItsTime(t *testing.T) {
	r, p, res := plan(t, "llama-8x80.json", 0, 8)
	want := 0.002 + 2*4096*4096*5e-9 // ms
	n := 0
	for _, d := range p.Deps {
		if x := p.Transfer(d); x > 0 {
			n++
			if got := p.Units.InUnit(float64(x)); math.Abs(got-want) > 0.005*want {
				t.Errorf("transfer %s -> %s charged %.4f ms, want %.4f ms", p.Blocks[d.From].ID, p.Blocks[d.To].ID, got, want)
			}
		}
	}
	if n == 0 {
		t.Fatal("no transfers")
	}
	if r.Converted.SearchUnit < 1 {
		t.Errorf("search step %g ms: the test wants one far above the link", r.Converted.SearchUnit)
	}
	if res.Listed {
		t.Error("the search's orders did not carry over")
	}
}

// The answer keeps the search's orders, and its rounding moves the
// makespan by less than 0.5 %: the same orders timed at a step ten times
// finer end within 0.5 % of it.
func TestRetimeKeepsOrders(t *testing.T) {
	r, p, res := plan(t, "llama-mixed.json", 0, 16)
	if !slices.EqualFunc(schedule.Orders(res.Schedule), schedule.Orders(res.Search.Schedule), slices.Equal) {
		t.Fatal("the answer's device orders are not the search's")
	}
	conv, _, _, err := r.Cost.Placement(r.Split, 0)
	if err != nil {
		t.Fatal(err)
	}
	if conv.Placement.Units.Step != p.Units.Step {
		t.Fatalf("placement step %g, want %g", conv.Placement.Units.Step, p.Units.Step)
	}
	finer := *r.Cost
	finer.Step = p.Units.Step / 10
	fc, fcl, _, err := finer.Placement(r.Split, 0)
	if err != nil {
		t.Fatal(err)
	}
	fp, err := fcl.Apply(fc.Placement)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := compact.Retime(res.Schedule, fp)
	if err != nil {
		t.Fatal(err)
	}
	a, b := makespanMs(res.Schedule), makespanMs(fs)
	if math.Abs(a-b) > 0.005*b {
		t.Errorf("makespan %.3f ms at a step of %g ms, %.3f ms at %g ms", a, p.Units.Step, b, fp.Units.Step)
	}
}

// Coarsen divides every time by the search step and rounds it: blocks
// and offloads at least 1, transfers to 0 where they vanish; memory
// stays; the copy's step is k of the placement's.
func TestCoarsen(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Blocks {
		p.Blocks[i].Time *= 1000
	}
	p.Blocks[0].Time = 7 // 0.007 of a step of the copy: 1
	p.Transfers = map[placement.Dep]int{p.Deps[0]: 400, p.Deps[1]: 1600}
	p.Units = &quantity.Scale{Time: "ms", Step: 0.002, Search: 1000}
	q, err := placement.Coarsen(p, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if q.Blocks[0].Time != 1 || q.Blocks[1].Time != p.Blocks[1].Time/1000 || q.Blocks[1].Memory != p.Blocks[1].Memory {
		t.Errorf("blocks %+v %+v", q.Blocks[0], q.Blocks[1])
	}
	if q.Transfer(p.Deps[0]) != 0 || q.Transfer(p.Deps[1]) != 2 {
		t.Errorf("transfers %v", q.Transfers)
	}
	if q.Units.Step != 2 || q.Units.Search != 0 || p.Units.Step != 0.002 {
		t.Errorf("units %+v (placement %+v)", q.Units, p.Units)
	}
	if _, err := placement.Coarsen(p, 0); err == nil {
		t.Error("a step of 0")
	}
}
