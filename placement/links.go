package placement

// LinkQueue applies the one dependency rule to transfers that share links
// (QueuedLinks): it books each transfer on the links its tensor crosses, in
// the order it is asked, and says when the tensor arrives.
//
// The rule: every link carries one transfer at a time; the transfers of a
// link run in the order their producers start (then producer block,
// micro-batch, the dependency's position in Deps and the destination
// device: the order the runtime issues them), and each starts as soon as
// its producer has ended and the link is free. Callers ask Arrival in that
// order; since the producers of one link all run on its first device, any
// order that follows each device's order of instances will do. Without
// QueuedLinks a transfer never waits and Arrival is start + Delay.
//
// Where the pair has several links (Lanes), each is a queue of its own and
// the transfer takes the one where it would end first, taking its time
// on that link (the first such link on ties); the verifier applies the
// same rule, so the link chosen is always one of the pair's. Every
// encoding that sees one queue per pair with the transfer's least time
// (Transfer) stays valid: by induction over the transfers in order, no
// link of the pair is ever free later than that one queue would be, so
// no transfer arrives later.
type LinkQueue struct {
	p     *Placement
	free  map[Link]int // when each link's last booked transfer ends
	lane  map[lane]int // the same for the pairs' links past the first (Lanes)
	lanes map[Link]int // how many links the pair has, where more than 1
}

// lane is link k of a pair's several in one direction (k ≥ 1; the first
// is the Link's own queue).
type lane struct {
	Link
	k int
}

func (q *LinkQueue) at(l Link, k int) int {
	if k == 0 {
		return q.free[l]
	}
	return q.lane[lane{l, k}]
}

func (q *LinkQueue) book(l Link, k, t int) {
	if k == 0 {
		q.free[l] = t
	} else {
		q.lane[lane{l, k}] = t
	}
}

// NewLinkQueue is a queue with every link free from time 0.
func (p *Placement) NewLinkQueue() *LinkQueue {
	return &LinkQueue{p: p, free: map[Link]int{}, lane: map[lane]int{}, lanes: map[Link]int{}}
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
	if !q.p.QueuedLinks {
		return at, 0, Link{}
	}
	if ls := q.p.Links(d); q.p.Lanes[d] != nil && len(ls) == 1 {
		a, w := q.ArrivalOn(ls[0], d, start)
		if w > 0 {
			waited, busy = w, ls[0]
		}
		return a, waited, busy
	}
	for _, l := range q.p.Links(d) {
		a, w := q.ArrivalOn(l, d, start)
		if w > waited {
			waited, busy = w, l
		}
		at = max(at, a)
	}
	return at, waited, busy
}

// ArrivalOn books the transfer of dependency d, for an instance of B_i
// that starts at start, on link l alone (one of d's Links) and returns
// when it ends there and how long it waited for l. It is the rule of
// Arrival for one link: Arrival is ArrivalOn on each of d's links, the
// tensor arriving when the last of them ends. Since links are independent
// queues, a caller holding a recorded order per link (Order) books each
// link's transfers in that order instead of by producer start; a transfer
// still starts as soon as its producer has ended and the link is free.
func (q *LinkQueue) ArrivalOn(l Link, d Dep, start int) (at, waited int) {
	end := start + q.p.Blocks[d.From].Time
	if ts := q.p.Lanes[d]; ts != nil && len(q.p.Links(d)) == 1 {
		best, bestX := -1, 0
		for k, t := range ts {
			x := max(end, q.at(l, k))
			if best < 0 || x+t < bestX+ts[best] {
				best, bestX = k, x
			}
		}
		q.book(l, best, bestX+ts[best])
		q.lanes[l] = max(q.lanes[l], len(ts))
		return bestX + ts[best], bestX - end
	}
	x := max(end, q.free[l])
	q.free[l] = x + q.p.Transfer(d)
	return x + q.p.Transfer(d), x - end
}

// LinkTransfer is one transfer on a link: dependency Dep's tensor of
// micro-batch Micro.
type LinkTransfer struct {
	Dep   Dep
	Micro int
}

// LinkOrder is the recorded order of the transfers on one link (She et
// al., operator-level MIP, §III eqs 14–15: the order of two transfers
// sharing a link is a decision). A schedule may record one per link;
// links it does not name keep the producer-start order of LinkQueue.
type LinkOrder struct {
	Link      Link
	Transfers []LinkTransfer
}

// Free is when link l is next free; where the pair has several links,
// when the last of them is (what one queue per pair would say, at most).
func (q *LinkQueue) Free(l Link) int {
	f := q.free[l]
	for k := 1; k < q.lanes[l]; k++ {
		f = max(f, q.lane[lane{l, k}])
	}
	return f
}
