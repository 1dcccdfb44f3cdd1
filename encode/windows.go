package encode

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
)

// The windows of the refinement (package refine): a part of a full
// schedule freed, the rest held, as an smt.Problem whose tasks are the
// freed instances in the order given, with the hint (the freed instances'
// current starts) that fits it. EndWindow frees one end of the schedule;
// SpanWindow a span of time anywhere in it. Partition's integer programs
// encode a cut of a layer graph, not a placement, and live in partition.

// EndWindow frees the last w instances of s (the first w with head),
// widened so that the cut is a time, and returns them (indices into
// s.Instances, each a task in that order), the problem of placing them
// with every other instance kept where it is, and the hint: their
// current starts. With head the problem is in reversed time: an instance
// at [start, end) runs at [H − end, H − start), so that the head becomes
// a tail, dependencies point the other way and memory is given back
// where it was taken; the hint's starts are reversed too.
func EndWindow(s *schedule.Schedule, w int, head bool) (free []int, pr *smt.Problem, hint []int) {
	p := s.Placement
	H := schedule.Makespan(s)
	// In reversed time an instance at [start, end) runs at
	// [H − end, H − start): the head becomes a tail.
	at := func(in schedule.Instance) int {
		if head {
			return H - in.Start - p.Blocks[in.Block].Time
		}
		return in.Start
	}
	idx := make([]int, len(s.Instances))
	for x := range idx {
		idx[x] = x
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ia, ib := s.Instances[idx[a]], s.Instances[idx[b]]
		if at(ia) != at(ib) {
			return at(ia) > at(ib)
		}
		return idx[a] < idx[b]
	})
	if w >= len(idx) {
		w = len(idx)
	} else {
		// Free every instance that starts with the w-th, so that the cut
		// is a time.
		cut := at(s.Instances[idx[w-1]])
		for w < len(idx) && at(s.Instances[idx[w]]) == cut {
			w++
		}
	}
	free = idx[:w]
	task := make(map[schedule.Ref]int, w)
	for k, x := range free {
		task[s.Instances[x].Ref()] = k
	}

	// Per-device budgets as one budget with shifted entries
	// (BudgetShift); the entries below add to the shift.
	budget, shift := BudgetShift(s.Spec)
	pr = &smt.Problem{Devices: p.Devices, Memory: budget, Entry: smt.ShiftEntry(make([]int, p.Devices), shift)}
	avail := make([]int, p.Devices) // when the fixed instances leave each device
	for _, in := range s.Instances {
		if _, ok := task[in.Ref()]; ok {
			continue
		}
		b := p.Blocks[in.Block]
		for _, d := range b.Devices {
			avail[d] = max(avail[d], at(in)+b.Time)
			if !head {
				pr.Entry[d] += b.Memory
			}
		}
	}
	hint = make([]int, w)
	for k, x := range free {
		in := s.Instances[x]
		b := p.Blocks[in.Block]
		t := smt.Task{Name: fmt.Sprintf("%s^%d", b.ID, in.Micro), Devices: b.Devices, Time: b.Time, Memory: b.Memory}
		if head {
			// Backwards, memory is given back where it was taken, and
			// the run starts from the level the head leaves behind.
			t.Memory = -b.Memory
			for _, d := range b.Devices {
				pr.Entry[d] += b.Memory
			}
		}
		for _, d := range b.Devices {
			t.Release = max(t.Release, avail[d])
		}
		hint[k] = at(in)
		pr.Tasks = append(pr.Tasks, t)
	}
	// Dependencies: between two freed instances a precedence; from a
	// fixed one, a release.
	preds, succs := p.PredDeps(), p.SuccDeps()
	byRef := make(map[schedule.Ref]int, len(s.Instances))
	for _, in := range s.Instances {
		byRef[in.Ref()] = in.Start
	}
	// With channels, forwards, the links too: every freed instance starts
	// after the fixed ones on its devices, so on every link the fixed
	// instances' transfers go first (placement's LinkQueue, booked in the
	// verifier's order). That gives when a fixed tensor reaches a freed
	// consumer, and when each link is free for the freed transfers
	// (smt.Transfer's Release), which then queue as the solver orders
	// them: the window is exact. Backwards the rule does not reverse
	// (its order is the producers'), so a head window leaves links out;
	// the caller's compaction applies them.
	var queue *placement.LinkQueue
	var fixedAt map[fixedTensor]int
	if links.Queued(p) && !head {
		queue, fixedAt = fixedArrivals(s, task)
	}
	for k, x := range free {
		in := s.Instances[x]
		// Forwards the dependencies into the instance; backwards, out.
		near := preds[in.Block]
		if head {
			near = succs[in.Block]
		}
		for _, d := range near {
			other := d.From
			if head {
				other = d.To
			}
			ref := schedule.Ref{Block: other, Micro: in.Micro}
			if j, ok := task[ref]; ok {
				// Forwards j → k; backwards too, since j is then the
				// dependency's consumer, which runs first.
				pr.Precs = append(pr.Precs, smt.Prec{From: j, To: k, Lag: -p.Transfer(d)})
				if queue != nil {
					trs := DepTransfers(p, d, j, k)
					for x, l := range p.Links(d) { // DepTransfers' order
						if x < len(trs) { // none for a pair of several links
							trs[x].Release = queue.Free(l)
						}
					}
					pr.Transfers = append(pr.Transfers, trs...)
				}
				continue
			}
			// A fixed neighbour: its end (reversed: its start) plus the
			// transfer.
			oin := schedule.Instance{Block: other, Micro: in.Micro, Start: byRef[ref]}
			arrival := at(oin) + p.Blocks[other].Time + p.Transfer(d)
			if queue != nil {
				arrival = fixedAt[fixedTensor{d, in.Micro}]
			}
			pr.Tasks[k].Release = max(pr.Tasks[k].Release, arrival)
		}
	}
	return free, pr, hint
}

// fixedTensor is dependency Dep's tensor of micro-batch Micro.
type fixedTensor struct {
	Dep   placement.Dep
	Micro int
}

// fixedArrivals books the transfers of s's fixed instances (those not in
// task) on the links, in the verifier's order, and returns the queue and
// when each fixed tensor reaches its consumer (EndWindow with channels).
func fixedArrivals(s *schedule.Schedule, task map[schedule.Ref]int) (*placement.LinkQueue, map[fixedTensor]int) {
	p := s.Placement
	succs := p.SuccDeps()
	fixedAt := map[fixedTensor]int{}
	links := p.NewLinkQueue()
	var fixed []schedule.Instance
	for _, in := range s.Instances {
		if _, ok := task[in.Ref()]; !ok {
			fixed = append(fixed, in)
		}
	}
	slices.SortFunc(fixed, func(a, b schedule.Instance) int {
		return cmp.Or(cmp.Compare(a.Start, b.Start), cmp.Compare(a.Block, b.Block), cmp.Compare(a.Micro, b.Micro))
	})
	for _, in := range fixed {
		for _, d := range succs[in.Block] {
			at, _, _ := links.Arrival(d, in.Start)
			fixedAt[fixedTensor{d, in.Micro}] = at
		}
	}
	return links, fixedAt
}

// SpanWindow is the problem of the instances free of s (indices into
// s.Instances, each a task in that order) that start in a span of time,
// part[x] saying what becomes of instance x (Fixed before the span, Free
// in it, Later after it) and later listing the Later ones by start. The
// Fixed instances keep their starts; the Later ones are tails: the
// problem's last task, a sink on a device of its own, starts after every
// freed instance's end plus the longest path from there through the
// later instances (their device orders and dependencies, transfers
// included) to the end of the schedule, so that the sink's start is the
// makespan the whole schedule gets when the later instances move as
// early as their orders allow. Under s's latency budget the window holds
// the latency rule (windowLatency). The hint is the freed instances'
// starts and the sink's.
func SpanWindow(s *schedule.Schedule, part, free, later []int) (*smt.Problem, []int) {
	p := s.Placement
	n := len(s.Instances)
	byRef := make(map[schedule.Ref]int, n)
	for x, in := range s.Instances {
		byRef[in.Ref()] = x
	}
	preds, succs := p.PredDeps(), p.SuccDeps()
	tail, nextOn := laterTails(s, later, part, byRef)

	budget, shift := BudgetShift(s.Spec)
	pr := &smt.Problem{Devices: p.Devices + 1, Memory: budget}
	entry := smt.ShiftEntry(make([]int, p.Devices), shift)
	avail := make([]int, p.Devices)
	for x, in := range s.Instances {
		if part[x] != Fixed {
			continue
		}
		b := p.Blocks[in.Block]
		for _, d := range b.Devices {
			avail[d] = max(avail[d], in.Start+b.Time)
			entry[d] += b.Memory
		}
	}
	pr.Entry = append(entry, 0)
	task := make(map[int]int, len(free)) // instance → task
	hint := make([]int, 0, len(free)+1)
	sink := 0 // the hint's objective: latest end plus tail
	for k, x := range free {
		task[x] = k
		in := s.Instances[x]
		b := p.Blocks[in.Block]
		t := smt.Task{Name: fmt.Sprintf("%s^%d", b.ID, in.Micro), Devices: b.Devices, Time: b.Time, Memory: b.Memory}
		for _, d := range b.Devices {
			t.Release = max(t.Release, avail[d])
		}
		for _, dep := range preds[in.Block] {
			y := byRef[schedule.Ref{Block: dep.From, Micro: in.Micro}]
			if part[y] == Fixed {
				t.Release = max(t.Release, s.Instances[y].Start+p.Delay(dep))
			}
		}
		pr.Tasks = append(pr.Tasks, t)
		hint = append(hint, in.Start)
	}
	// The sink, on a device of its own, starts after every freed
	// instance's end plus its tail.
	ks := len(pr.Tasks)
	pr.Tasks = append(pr.Tasks, smt.Task{Name: "end", Devices: []int{p.Devices}, Time: 1})
	for k, x := range free {
		in := s.Instances[x]
		b := p.Blocks[in.Block]
		q := 0
		for _, d := range b.Devices {
			if y := nextOn[d]; y >= 0 {
				q = max(q, tail[y])
			}
		}
		for _, dep := range succs[in.Block] {
			y := byRef[schedule.Ref{Block: dep.To, Micro: in.Micro}]
			switch part[y] {
			case Free:
				pr.Precs = append(pr.Precs, smt.Prec{From: k, To: task[y], Lag: -p.Transfer(dep)})
			case Later:
				q = max(q, p.Transfer(dep)+tail[y])
			}
		}
		pr.Precs = append(pr.Precs, smt.Prec{From: k, To: ks, Lag: -q})
		sink = max(sink, in.Start+b.Time+q)
	}
	hint = append(hint, sink)
	if s.Latency > 0 {
		windowLatency(pr, s, part, task, byRef)
	}
	return pr, hint
}

// laterTails are the tails of the later instances (later, in start
// order), by instance, and the later instance that follows on each
// device (-1: none) once the window's are placed.
func laterTails(s *schedule.Schedule, later, part []int, byRef map[schedule.Ref]int) (tail, nextOn []int) {
	// Tails of the later instances: the longest path from their start to
	// the end of the schedule over their device orders and
	// dependencies, in decreasing start order (every edge goes forward
	// in time).
	n, p := len(s.Instances), s.Placement
	succs := p.SuccDeps()
	tail = make([]int, n)
	nextOn = make([]int, p.Devices) // the later instance that follows on each device
	for d := range nextOn {
		nextOn[d] = -1
	}
	for k := len(later) - 1; k >= 0; k-- {
		x := later[k]
		in := s.Instances[x]
		b := p.Blocks[in.Block]
		t := b.Time
		for _, d := range b.Devices {
			if y := nextOn[d]; y >= 0 {
				t = max(t, b.Time+tail[y])
			}
			nextOn[d] = x
		}
		for _, dep := range succs[in.Block] {
			if y, ok := byRef[schedule.Ref{Block: dep.To, Micro: in.Micro}]; ok && part[y] == Later {
				t = max(t, p.Delay(dep)+tail[y])
			}
		}
		tail[x] = t
	}
	return tail, nextOn
}
