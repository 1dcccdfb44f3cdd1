package placement

// LinkQueue applies the one dependency rule to transfers that share links
// (Channels): it books each transfer on the links its tensor crosses, in
// the order it is asked, and says when the tensor arrives.
//
// The rule: every link carries one transfer at a time; the transfers of a
// link run in the order their producers start (then producer block,
// micro-batch, the dependency's position in Deps and the destination
// device: the order the runtime issues them), and each starts as soon as
// its producer has ended and the link is free. Callers ask Arrival in that
// order; since the producers of one link all run on its first device, any
// order that follows each device's order of instances will do. Without
// Channels a transfer never waits and Arrival is start + Delay.
type LinkQueue struct {
	p    *Placement
	free map[Link]int // when each link's last booked transfer ends
}

// NewLinkQueue is a queue with every link free from time 0.
func (p *Placement) NewLinkQueue() *LinkQueue {
	return &LinkQueue{p: p, free: map[Link]int{}}
}

// Arrival books the transfers of dependency d for an instance of B_i that
// starts at start and returns when B_j may start: the latest end of those
// transfers (start + Delay without channels or links). Waited is the
// longest time one of them waited for its link, and Busy that link (the
// zero Link when none waited).
func (q *LinkQueue) Arrival(d Dep, start int) (at, waited int, busy Link) {
	end := start + q.p.Blocks[d.From].Time
	c := q.p.Transfer(d)
	at = end + c
	if !q.p.Channels {
		return at, 0, Link{}
	}
	for _, l := range q.p.Links(d) {
		x := max(end, q.free[l])
		if w := x - end; w > waited {
			waited, busy = w, l
		}
		q.free[l] = x + c
		at = max(at, x+c)
	}
	return at, waited, busy
}

// Free is when link l is next free.
func (q *LinkQueue) Free(l Link) int { return q.free[l] }
