package construct

import "container/heap"

// devQueue is one device's released instances in a rule's order, kept
// per class (the instances of one block, or the recomputes of one block)
// so that pick passes over a whole class at once where its block cannot
// start. A memory-bound device otherwise scanned every waiting
// micro-batch at every event: list schedules quadratic in N.
type devQueue struct {
	less    func(x, y int) bool
	classes []*classQueue // by class index; nil until used
	top     topHeap       // the non-empty classes, by their first instance
}

// classQueue is a heap of one class's instances; pos is its index in
// the devQueue's top heap, -1 while it is not there.
type classQueue struct {
	prioQueue
	pos int
}

func newDevQueue(classes int, less func(x, y int) bool) *devQueue {
	return &devQueue{less: less, classes: make([]*classQueue, classes), top: topHeap{less: less}}
}

// push adds instance x of class c.
func (q *devQueue) push(x, c int) {
	cq := q.classes[c]
	if cq == nil {
		cq = &classQueue{prioQueue: prioQueue{less: q.less}, pos: -1}
		q.classes[c] = cq
	}
	heap.Push(&cq.prioQueue, x)
	switch {
	case cq.pos < 0:
		heap.Push(&q.top, cq)
	case cq.xs[0] == x:
		heap.Fix(&q.top, cq.pos)
	}
}

// pick removes and returns the first instance, in the rule's order, that
// can start (-1: none). stale drops instances started from another
// queue; ready says whether an instance's own conditions hold, start
// whether it can start: where ready holds and start does not, the
// block's devices or memory stop it, and every instance of its class
// alike.
func (q *devQueue) pick(class func(x int) int, stale, ready, start func(x int) bool) int {
	var skipped []int
	var blocked []*classQueue
	found := -1
	for q.top.Len() > 0 {
		cq := q.top.cs[0]
		x := heap.Pop(&cq.prioQueue).(int)
		if cq.Len() == 0 {
			heap.Pop(&q.top)
		} else {
			heap.Fix(&q.top, 0)
		}
		switch {
		case stale(x):
			continue
		case start(x):
			found = x
		case ready(x):
			heap.Push(&cq.prioQueue, x)
			if cq.pos >= 0 {
				heap.Remove(&q.top, cq.pos)
			}
			blocked = append(blocked, cq)
			continue
		default:
			skipped = append(skipped, x)
			continue
		}
		break
	}
	for _, cq := range blocked {
		heap.Push(&q.top, cq)
	}
	for _, x := range skipped {
		q.push(x, class(x))
	}
	return found
}

// topHeap orders classes by their first instance.
type topHeap struct {
	cs   []*classQueue
	less func(x, y int) bool
}

func (h *topHeap) Len() int           { return len(h.cs) }
func (h *topHeap) Less(i, j int) bool { return h.less(h.cs[i].xs[0], h.cs[j].xs[0]) }
func (h *topHeap) Swap(i, j int) {
	h.cs[i], h.cs[j] = h.cs[j], h.cs[i]
	h.cs[i].pos, h.cs[j].pos = i, j
}
func (h *topHeap) Push(v any) {
	cq := v.(*classQueue)
	cq.pos = len(h.cs)
	h.cs = append(h.cs, cq)
}
func (h *topHeap) Pop() any {
	cq := h.cs[len(h.cs)-1]
	h.cs = h.cs[:len(h.cs)-1]
	cq.pos = -1
	return cq
}
