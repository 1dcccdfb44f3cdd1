package placement

import (
	"fmt"
	"math"
)

// Coarsen is p with every time divided by k and rounded to the nearest
// integer: block times, offload times and overlapped pairs' times at
// least 1, transfers (and their lanes and candidate costs) at least 0.
// Its Units say a step is k of p's, and it has no search step: it is the
// copy the search runs on. k = 1 gives p's copy.
func Coarsen(p *Placement, k int) (*Placement, error) {
	if k < 1 {
		return nil, fmt.Errorf("coarsen: step %d: want at least 1", k)
	}
	q := p.Clone()
	if k == 1 {
		return q, nil
	}
	div := func(t int, least int) int { return max(least, int(math.Round(float64(t)/float64(k)))) }
	for i := range q.Blocks {
		b := &q.Blocks[i]
		b.Time = div(b.Time, 1)
		if b.Offload > 0 {
			b.Offload = div(b.Offload, 1)
		}
	}
	for d, t := range q.Transfers {
		if q.Transfers[d] = div(t, 0); q.Transfers[d] == 0 {
			delete(q.Transfers, d)
		}
	}
	if len(q.Transfers) == 0 {
		q.Transfers = nil
	}
	for d, ts := range q.Lanes {
		for n := range ts {
			ts[n] = div(ts[n], 0)
		}
		if q.Transfer(d) == 0 {
			delete(q.Lanes, d)
		}
	}
	if c := q.Costs; c != nil {
		for i := range c.Times {
			for o := range c.Times[i] {
				c.Times[i][o] = div(c.Times[i][o], 1)
			}
		}
		for d, m := range c.Transfers {
			for a := range m {
				for b := range m[a] {
					m[a][b] = div(m[a][b], 0)
				}
			}
			c.Transfers[d] = m
		}
	}
	if o := q.Overlap; o != nil {
		if o.Time > 0 {
			o.Time = div(o.Time, 1)
		}
		for n := range o.Pairs {
			o.Pairs[n].Time = div(o.Pairs[n].Time, 1)
		}
	}
	if u := q.Units; u != nil {
		u.Step *= float64(k)
		u.Search = 0
	}
	if err := q.Validate(); err != nil {
		return nil, fmt.Errorf("coarsen: %w", err)
	}
	return q, nil
}
