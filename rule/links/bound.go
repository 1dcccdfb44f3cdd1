package links

import (
	"math"

	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/placement"
)

// linkBounds raises b by the links' loads (see Bound).
func linkBounds(p *placement.Placement, n int, b *bound.Bounds) {
	heads, tails := p.Heads(), p.Tails()
	type link struct{ load, head, tail, lanes int }
	links := map[placement.Link]*link{}
	var order []placement.Link // first seen, for a deterministic walk
	for _, d := range p.Deps {
		c := p.Transfer(d)
		for _, l := range p.Links(d) {
			x := links[l]
			if x == nil {
				x = &link{head: math.MaxInt, tail: math.MaxInt, lanes: 1}
				links[l] = x
				order = append(order, l)
			}
			x.load += c
			x.head = min(x.head, heads[d.From]+p.Blocks[d.From].Time)
			x.tail = min(x.tail, p.Blocks[d.To].Time+tails[d.To])
			x.lanes = max(x.lanes, len(p.Lanes[d]))
		}
	}
	for _, l := range order {
		// A pair of several links (Lanes) shares the load among them:
		// one of them carries at least its share, each transfer taking at
		// least its least time.
		x := links[l]
		b.Period = max(b.Period, ceilDiv(x.load, x.lanes))
		b.Raise(x.head+ceilDiv(n*x.load, x.lanes)+x.tail, By)
	}
}

// ceilDiv is ⌈a / b⌉ for a ≥ 0, b ≥ 1.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
