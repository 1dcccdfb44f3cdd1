// Package repetend builds the repetend of the Tessel paper (§IV-B): every
// block of a placement exactly once, block i taken from micro-batch offset
// n_i in 0..N_R-1, scheduled so that repeating it every P time units, with
// all micro-batch indices raised by one, is a valid schedule. It finds the
// repetend of least period P under a memory budget, either by enumerating
// the offsets (the paper's Algorithm 1, pruned by properties 4.1 and 4.2
// and by solver-free bounds) or by one joint problem per period in which
// the offsets are solver variables.
//
// It returns data only; package search turns a repetend into a full
// schedule and package schedule verifies it.
package repetend

import (
	"context"
	"fmt"
	"strings"

	"github.com/tessel-pp/tessel/encode"
	"github.com/tessel-pp/tessel/placement"
)

// Assignment is an assignment of micro-batch offsets to blocks (eq. 3).
type Assignment struct {
	NR      int
	Offsets []int // by block index, in 0..NR-1
}

func (c Assignment) String() string {
	parts := make([]string, len(c.Offsets))
	for i, o := range c.Offsets {
		parts[i] = fmt.Sprint(o)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// Enumerate streams the candidates of exactly nr micro-batches: offsets
// non-increasing along every dependency (property 4.2), the smallest
// offset 0 (a shift of all offsets is the same repetend) and the largest
// nr-1 (smaller nr are enumerated on their own). Blocks are assigned in a
// stable topological order, high offsets first. yield returns false to
// stop; Enumerate returns false when it was stopped.
func Enumerate(ctx context.Context, p *placement.Placement, nr int, yield func(Assignment) bool) bool {
	order, ok := p.Topo()
	if !ok || nr < 1 {
		return true
	}
	preds := p.Preds()
	offs := make([]int, len(p.Blocks))
	var rec func(k int, lo, hi bool) bool
	count := 0
	rec = func(k int, usedLo, usedHi bool) bool {
		if k == len(order) {
			if !usedLo || !usedHi {
				return true
			}
			count++
			if count%1024 == 0 && ctx.Err() != nil {
				return false
			}
			return yield(Assignment{NR: nr, Offsets: append([]int(nil), offs...)})
		}
		i := order[k]
		top := nr - 1
		for _, j := range preds[i] {
			top = min(top, offs[j])
		}
		for v := top; v >= 0; v-- {
			offs[i] = v
			if !rec(k+1, usedLo || v == 0, usedHi || v == nr-1) {
				return false
			}
		}
		return true
	}
	return rec(0, false, false)
}

// EntryMemory is the memory of every device when the repetend starts: the
// warmup has run B_i^n for every n < n_i (encode.EntryMemory, which the
// encodings count).
func EntryMemory(p *placement.Placement, offsets []int) []int { return encode.EntryMemory(p, offsets) }

// NetMemory is the memory one micro-batch leaves on every device (0 for
// every device in training placements whose backward frees what the
// forward took; encode.NetMemory).
func NetMemory(p *placement.Placement) []int { return encode.NetMemory(p) }

// PeriodBound is a lower bound on the period of a candidate without the
// solver: at least max_d load_d (with channels, and the busiest link's
// load: periodLowerBound), and at least the least P for which the
// difference constraints of the repetend have no positive cycle —
// dependencies s_i + Delay_ij ≤ s_j + δ_ij·P (Delay_ij = t_i + c_ij, the
// placement's rule) and each device's window
// s_i + t_i ≤ s_j + P (eq. 4) — the recurrence through dependencies that
// cross iterations. With channels it bounds the repetends the search
// encodes (see encode.Steady): dependencies take the steady delay, and each
// link's window adds s_a + end_a ≤ s_b + start_b + P for every two spans
// a, b of one link.
func PeriodBound(p *placement.Placement, offsets []int) int {
	lo := periodLowerBound(p)
	hi := upperPeriod(p)
	type edge struct{ from, to, w, periods int }
	var edges []edge
	st := encode.SteadyLinks(p)
	for _, d := range p.Deps {
		edges = append(edges, edge{d.From, d.To, st.Delay[d], offsets[d.From] - offsets[d.To]})
	}
	for _, a := range st.Spans {
		for _, b := range st.Spans {
			if a != b && a.Link == b.Link {
				edges = append(edges, edge{a.Block, b.Block, a.To - b.From, 1})
			}
		}
	}
	for _, on := range p.DeviceBlocks() {
		for _, i := range on {
			for _, j := range on {
				if i != j {
					edges = append(edges, edge{i, j, p.Blocks[i].Time, 1})
				}
			}
		}
	}
	k := len(p.Blocks)
	dist := make([]int, k)
	feasible := func(P int) bool {
		for i := range dist {
			dist[i] = 0
		}
		for round := 0; round <= k; round++ {
			changed := false
			for _, e := range edges {
				if v := dist[e.from] + e.w - e.periods*P; v > dist[e.to] {
					dist[e.to] = v
					changed = true
				}
			}
			if !changed {
				return true
			}
		}
		return false
	}
	if feasible(lo) {
		return lo
	}
	if !feasible(hi) {
		// Only a δ = 0 cycle through a device can do this; no period works.
		return hi + 1
	}
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if feasible(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// withinBudget reports whether mem, per device, is within every device's
// budget under memory (placement's Budget).
func withinBudget(p *placement.Placement, mem []int, memory int) bool {
	for d, m := range mem {
		if b := p.Budget(d, memory); b > 0 && m > b {
			return false
		}
	}
	return true
}
