package partition

import (
	"context"
	"math"
	"sort"
)

// walker enumerates, for one ideal I, every ideal J ⊊ I once: the stages
// S = I \ J of a contiguous split that ends with I. It adds units to S
// from the top down, each time a unit all of whose successors in I are
// already in S, in decreasing unit order (a topological order), so that
// every S is reached by exactly one path; J follows along the lattice's
// steps down. Its cost is a few operations per pair (I, J) plus the
// units' degrees, where testing every ideal against I cost a pass over
// all of them.
type walker struct {
	u    *units
	lat  *lattice
	need []int32   // per unit of I \ S: its successors in I not yet in S
	bufs [][]int32 // candidates per depth
	// visit is called with the index of each J; false prunes every J
	// below it (every larger stage).
	visit func(j int) bool
}

// walk visits the ideals under ideal i.
func (w *walker) walk(i int) {
	I := w.lat.sets[i]
	for x := range w.u.n {
		if !has(I, x) {
			continue
		}
		c := int32(0)
		for _, y := range w.u.succ[x] {
			if has(I, y) {
				c++
			}
		}
		w.need[x] = c
	}
	cand := w.bufs[0][:0]
	for _, s := range w.lat.down[i] {
		cand = append(cand, s.unit)
	}
	w.bufs[0] = cand
	w.rec(0, i, cand)
}

func (w *walker) rec(depth, j int, cand []int32) {
	for _, x := range cand {
		jx := w.lat.under(j, x)
		if !w.visit(jx) {
			continue
		}
		buf := w.bufs[depth+1][:0]
		for _, y := range cand {
			if y < x {
				buf = append(buf, y)
			}
		}
		for _, p := range w.u.pred[x] {
			w.need[p]--
			if w.need[p] == 0 {
				buf = append(buf, int32(p))
			}
		}
		w.bufs[depth+1] = buf
		if len(buf) > 0 {
			w.rec(depth+1, jx, buf)
		}
		for _, p := range w.u.pred[x] {
			w.need[p]++
		}
	}
}

// chainBound is the least max load over the contiguous splits whose
// stages are intervals of one topological order of the units (a DP over
// its prefixes, which are ideals): a split the full DP also considers,
// so an upper bound of its answer. +Inf where none fits. Its time is
// quadratic in the units: it checks ctx between prefixes.
func (r *dpRun) chainBound(ctx context.Context, final func(int) bool) (float64, error) {
	t, lat, u, K, L, M := r.t, r.lat, r.u, r.K, r.L, r.M
	n := u.n
	order := topo(n, u.succ)
	prefix := make([]int, n+1)
	prefix[n] = len(lat.sets) - 1
	for p := n; p > 0; p-- {
		prefix[p-1] = lat.under(prefix[p], int32(order[p-1]))
	}
	inf := math.Inf(1)
	cells := (K + 1) * (L + 1)
	d := make([]float64, (n+1)*cells)
	for i := range d {
		d[i] = inf
	}
	d[0] = 0
	for p := 1; p <= n; p++ {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		row := d[p*cells : (p+1)*cells]
		for q := 0; q < p; q++ {
			i, j := prefix[p], prefix[q]
			accLoad, cpuLoad := t.acc(i, j, M), t.pc[i]-t.pc[j]
			prev := d[q*cells : (q+1)*cells]
			for k := 0; k <= K; k++ {
				for l := 0; l <= L; l++ {
					c := k*(L+1) + l
					if k > 0 {
						row[c] = math.Min(row[c], math.Max(prev[c-(L+1)], accLoad))
					}
					if l > 0 {
						row[c] = math.Min(row[c], math.Max(prev[c-1], cpuLoad))
					}
				}
			}
		}
	}
	best := inf
	for c := range cells {
		if final(c) {
			best = math.Min(best, d[n*cells+c])
		}
	}
	return best, nil
}

// usefulCells marks the cells (ideal I, k accelerators, l CPUs) that can
// lie on a split of max load ≤ ub: I's accelerator time must fit on k
// accelerators and l CPUs, and the rest of the graph's on the devices
// left, each device taking at most ub. A CPU can take at most cpuShare of
// accelerator time within ub (a fractional knapsack over the units).
// Every other cell's value exceeds ub or leads only to splits that do, so
// the DP may leave it at +Inf without changing any cell that matters.
func (t *tables) usefulCells(u *units, K, L int, ub float64) []bool {
	nI := len(t.ideals)
	cells := (K + 1) * (L + 1)
	ok := make([]bool, nI*cells)
	if math.IsInf(ub, 1) {
		for i := range ok {
			ok[i] = true
		}
		return ok
	}
	cpuShare := 0.0
	if L > 0 {
		type item struct{ acc, cpu float64 }
		var items []item
		for x := range u.n {
			switch {
			case u.acc[x] == 0:
			case u.cpu[x] == 0:
				cpuShare += u.acc[x] // free on a CPU
			default:
				items = append(items, item{u.acc[x], u.cpu[x]})
			}
		}
		sort.SliceStable(items, func(a, b int) bool {
			return items[a].acc/items[a].cpu > items[b].acc/items[b].cpu
		})
		room := ub
		for _, it := range items {
			if it.cpu <= room {
				cpuShare += it.acc
				room -= it.cpu
				continue
			}
			cpuShare += it.acc * room / it.cpu
			break
		}
	}
	total := t.pa[nI-1]
	slack := 1e-9 * math.Max(1, total)
	for i := range nI {
		in, out := t.pa[i], total-t.pa[i]
		for k := 0; k <= K; k++ {
			for l := 0; l <= L; l++ {
				ok[i*cells+k*(L+1)+l] = in <= float64(k)*ub+float64(l)*cpuShare+slack &&
					out <= float64(K-k)*ub+float64(L-l)*cpuShare+slack
			}
		}
	}
	return ok
}
