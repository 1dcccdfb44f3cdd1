package schedule_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// block returns the index of id in p or fails the test.
func block(t testing.TB, p *placement.Placement, id string) int {
	t.Helper()
	i := p.Index(id)
	if i < 0 {
		t.Fatalf("placement %s has no block %q", p.Name, id)
	}
	return i
}

// oneF1BOrders are the per-device orders of the 1F1B schedule of a v-shape
// placement (Fig. 4b): device s runs min(D-s-1, N) forwards, then
// alternates one forward and one backward, then the remaining backwards.
func oneF1BOrders(t testing.TB, p *placement.Placement, n int) [][]schedule.Ref {
	t.Helper()
	orders := make([][]schedule.Ref, p.Devices)
	for s := range p.Devices {
		f, b := block(t, p, fmt.Sprintf("f%d", s)), block(t, p, fmt.Sprintf("b%d", s))
		w := min(p.Devices-s-1, n)
		var o []schedule.Ref
		for m := range w {
			o = append(o, schedule.Ref{f, m})
		}
		for m := range n {
			if w+m < n {
				o = append(o, schedule.Ref{f, w + m})
			}
			o = append(o, schedule.Ref{b, m})
		}
		orders[s] = o
	}
	return orders
}

// oneF1B is the 1F1B schedule of a v-shape placement, compacted.
func oneF1B(t testing.TB, p *placement.Placement, n, memory int) *schedule.Schedule {
	t.Helper()
	insC, err := compact.Compact(spec.New(p, n), compact.Keep{Orders: oneF1BOrders(t, p, n)})
	if err != nil {
		t.Fatal(err)
	}
	ins := insC.Instances
	return &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n, Memory: memory}, Instances: ins}
}

// oneF1BRepetend describes the steady phase of compacted 1F1B on a
// v-shape (N > D) as a repetend of period f+b: iteration k runs b_s^k on
// every device s, f_{D-1}^k, and f_s^{k+D-s} for s < D-1 (compaction runs
// the warmup forwards as early as possible, so the forward paired with
// b_s^k is the one D-s micro-batches later). N_R = D+1.
func oneF1BRepetend(t testing.TB, s *schedule.Schedule) *schedule.Repetend {
	t.Helper()
	p := s.Placement
	d := p.Devices
	rp := &schedule.Repetend{NR: d + 1, Period: p.Blocks[0].Time + p.Blocks[len(p.Blocks)-1].Time, Offsets: make([]int, len(p.Blocks)), Iterations: s.MicroBatches - d}
	for st := range d - 1 {
		rp.Offsets[block(t, p, fmt.Sprintf("f%d", st))] = d - st
	}
	rp.Start = 1 << 62
	for _, in := range s.Instances {
		if in.Micro == rp.Offsets[in.Block] {
			rp.Start = min(rp.Start, in.Start)
		}
	}
	return rp
}

// greedy is a deterministic list schedule: it repeatedly starts, as early
// as its dependencies and devices allow, the ready instance that can start
// first (ties: lower block index, then lower micro-batch). It is valid with
// unlimited memory.
func greedy(p *placement.Placement, n int) *schedule.Schedule {
	return listSchedule(p, n, nil, 0)
}

// randomValid is a random valid schedule with unlimited memory: a list
// schedule that picks a random ready instance and delays it by up to
// delay units.
func randomValid(rng *rand.Rand, p *placement.Placement, n, delay int) *schedule.Schedule {
	return listSchedule(p, n, rng, delay)
}

func listSchedule(p *placement.Placement, n int, rng *rand.Rand, delay int) *schedule.Schedule {
	k := len(p.Blocks)
	preds := p.Preds()
	end := make([]int, k*n)
	left := make([]int, k*n) // unscheduled predecessors
	for i := range k {
		for m := range n {
			left[i*n+m] = len(preds[i])
		}
	}
	free := make([]int, p.Devices)
	succs := p.Succs()
	var ready []schedule.Ref
	for i := range k {
		if len(preds[i]) == 0 {
			for m := range n {
				ready = append(ready, schedule.Ref{i, m})
			}
		}
	}
	earliest := func(r schedule.Ref) int {
		t := 0
		for _, j := range preds[r.Block] {
			t = max(t, end[j*n+r.Micro])
		}
		for _, d := range p.Blocks[r.Block].Devices {
			t = max(t, free[d])
		}
		return t
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n}}
	for len(ready) > 0 {
		pick := 0
		if rng != nil {
			pick = rng.IntN(len(ready))
		} else {
			for x := 1; x < len(ready); x++ {
				a, b := ready[x], ready[pick]
				ea, eb := earliest(a), earliest(b)
				if ea < eb || ea == eb && (a.Block < b.Block || a.Block == b.Block && a.Micro < b.Micro) {
					pick = x
				}
			}
		}
		r := ready[pick]
		ready = append(ready[:pick], ready[pick+1:]...)
		t := earliest(r)
		if rng != nil && delay > 0 {
			t += rng.IntN(delay + 1)
		}
		b := p.Blocks[r.Block]
		end[r.Block*n+r.Micro] = t + b.Time
		for _, d := range b.Devices {
			free[d] = t + b.Time
		}
		s.Instances = append(s.Instances, schedule.Instance{Block: r.Block, Micro: r.Micro, Start: t})
		for _, j := range succs[r.Block] {
			if left[j*n+r.Micro]--; left[j*n+r.Micro] == 0 {
				ready = append(ready, schedule.Ref{j, r.Micro})
			}
		}
	}
	return s
}
