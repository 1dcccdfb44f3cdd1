package schedule

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// Latency of a schedule: the latency of micro-batch n is the time from
// the start of its first block to the end of its last (placement's
// "Latency"), what one request of an inference service waits.

// MicroLatency is one micro-batch's latency and the instances that make
// it: the first to start and the last to end.
type MicroLatency struct {
	Micro, Latency int
	First, Last    Ref
	Start, End     int
}

// Latencies is the latency of every micro-batch of s, by micro-batch;
// a micro-batch missing an instance, or one whose instance names no block,
// is measured from what is there (the verifier reports the rest). s must
// have a placement.
func Latencies(s *Schedule) []MicroLatency {
	p := s.Placement
	out := make([]MicroLatency, s.MicroBatches)
	seen := make([]bool, s.MicroBatches)
	for _, in := range s.Instances {
		if in.Micro < 0 || in.Micro >= s.MicroBatches || in.Block < 0 || in.Block >= len(p.Blocks) {
			continue
		}
		m := &out[in.Micro]
		end := in.Start + p.Blocks[in.Block].Time
		if !seen[in.Micro] {
			*m = MicroLatency{Micro: in.Micro, First: in.Ref(), Last: in.Ref(), Start: in.Start, End: end}
			seen[in.Micro] = true
		}
		if in.Start < m.Start || (in.Start == m.Start && in.Block < m.First.Block) {
			m.Start, m.First = in.Start, in.Ref()
		}
		if end > m.End || (end == m.End && in.Block < m.Last.Block) {
			m.End, m.Last = end, in.Ref()
		}
	}
	for n := range out {
		out[n].Micro = n
		out[n].Latency = out[n].End - out[n].Start
	}
	return out
}

// LatencyStats are a schedule's latency figures: the largest and the
// mean latency of its micro-batches, and the throughput of its steady
// state in micro-batches (requests) per time unit: micro-batches per
// period where the schedule has a steady state (SteadyOf), N / makespan
// otherwise.
type LatencyStats struct {
	Max        int
	Mean       float64
	Throughput float64
}

// MeasureLatency is s's LatencyStats; s must be verified.
func MeasureLatency(s *Schedule) LatencyStats {
	return MeasureLatencyOf(s, SteadyOf(s))
}

// MeasureLatencyOf is MeasureLatency with s's steady state st
// (SteadyOf(s)) already known: a report that shows both finds it once.
func MeasureLatencyOf(s *Schedule, st *SteadyState) LatencyStats {
	ls := Latencies(s)
	var out LatencyStats
	sum := 0
	for _, l := range ls {
		out.Max = max(out.Max, l.Latency)
		sum += l.Latency
	}
	if len(ls) > 0 {
		out.Mean = float64(sum) / float64(len(ls))
	}
	if st != nil && st.Period > 0 {
		out.Throughput = float64(st.PerPeriod) / float64(st.Period)
	} else if ms := Makespan(s); ms > 0 {
		out.Throughput = float64(s.MicroBatches) / float64(ms)
	}
	return out
}

// latency reports every micro-batch whose latency exceeds the budget,
// naming the instances that make it.
func (v *verifier) latency(r *report) {
	s := v.s
	if s.Latency <= 0 {
		return
	}
	ok := &Schedule{Spec: spec.Spec{Placement: s.Placement, MicroBatches: s.MicroBatches}}
	for x, in := range s.Instances {
		if v.ok[x] && v.first[in.Ref()] == x {
			ok.Instances = append(ok.Instances, in)
		}
	}
	for _, l := range Latencies(ok) {
		if l.Latency > s.Latency {
			r.add(Latency, -1, []Ref{l.First, l.Last}, "latency of micro-batch %d is %d > budget %d: %s starts at %d, %s ends at %d",
				l.Micro, l.Latency, s.Latency, v.name(l.First), l.Start, v.name(l.Last), l.End)
		}
	}
}

// CompactLatency is Compact under a latency budget (0: none, then it is
// Compact): the earliest start times that keep the device orders and the
// dependencies and meet the budget in every micro-batch (placement's
// "Latency": the sink of micro-batch n ends at most budget after its
// source starts). The latency rule adds an edge from every sink back to
// every source of its micro-batch, weighted t_sink − budget, so the
// starts are the longest paths of a graph with negative edges: computed
// by relaxation passes in the order Compact's starts give (a topological
// order of the other edges), until nothing moves. When the orders admit
// no schedule within the budget (the passes would go on for ever, a cycle
// of positive weight) it is an error. With links that carry one transfer
// at a time (Channels) see compactLatencyLinks. A micro-batch is delayed
// only as much as its budget asks: its first blocks start later, so that
// it finishes within the budget.
func CompactLatency(p *placement.Placement, n int, orders [][]Ref, budget int) ([]Instance, error) {
	ins, err := Compact(p, n, orders)
	if err != nil || budget <= 0 {
		return ins, err
	}
	if p.Channels {
		return compactLatencyLinks(p, n, orders, budget, ins)
	}
	k := len(p.Blocks)
	node := func(r Ref) int { return r.Micro*k + r.Block }
	nodes := k * n
	start := make([]int, nodes)
	if len(ins) != nodes {
		return nil, fmt.Errorf("compact: %d instances for %d blocks of %d micro-batches", len(ins), k, n)
	}
	for _, in := range ins {
		start[node(in.Ref())] = in.Start
	}
	// Predecessor edges (device orders and dependencies).
	type edge struct{ from, lag int }
	preds := make([][]edge, nodes)
	for _, order := range orders {
		for pos := 1; pos < len(order); pos++ {
			a, b := order[pos-1], order[pos]
			preds[node(b)] = append(preds[node(b)], edge{node(a), p.Blocks[a.Block].Time})
		}
	}
	for _, d := range p.Deps {
		delay := p.Delay(d)
		for m := range n {
			v := node(Ref{d.To, m})
			preds[v] = append(preds[v], edge{node(Ref{d.From, m}), delay})
		}
	}
	topo := make([]int, nodes)
	for v := range topo {
		topo[v] = v
	}
	slices.SortFunc(topo, func(a, b int) int { return cmp.Or(cmp.Compare(start[a], start[b]), cmp.Compare(a, b)) })
	pairs := p.LatencyPairs()
	for pass := 0; ; pass++ {
		moved := false
		for m := range n {
			for _, lp := range pairs {
				src, snk := node(Ref{lp.Source, m}), node(Ref{lp.Sink, m})
				if need := start[snk] + p.Blocks[lp.Sink].Time - budget; need > start[src] {
					start[src], moved = need, true
				}
			}
		}
		if !moved {
			break
		}
		// A longest path uses each latency edge at most once: more passes
		// than there are such edges mean a cycle of positive weight.
		if pass > n*len(pairs) {
			return nil, fmt.Errorf("compact: these device orders meet no latency budget %d", budget)
		}
		for _, v := range topo {
			for _, e := range preds[v] {
				start[v] = max(start[v], start[e.from]+e.lag)
			}
		}
	}
	for x := range ins {
		ins[x].Start = start[node(ins[x].Ref())]
	}
	return ins, nil
}

// compactLatencyLinks is CompactLatency with links that carry one
// transfer at a time (placement's Channels), from ins, Compact's
// instances. The device orders fix the order of the transfers on every
// link (its producers all run on the link's first device, and the queue
// takes them in their start order: placement's LinkQueue), so each
// transfer is an event of its own: it starts at the later of its
// producer's end and the end of the transfer before it on its link, and
// its consumer starts after it ends. Every such rule only moves an
// instance later when another moves later (where a pair has several
// links, Lanes, the tensor takes the one where it ends first: a least of
// such rules, as monotone). So the earliest starts under the budget are
// the least fixed point of: Compact with a release per instance (its
// earliest start), each source's release raised to its sink's end minus
// the budget, until nothing moves. Each pass is one compaction, exact for
// the releases it is given.
//
// Termination. Where the least fixed point exists, every start is a
// longest path of the constraints with every least (Lanes) fixed to the
// link it takes, a path with no cycle: at most B, the sum of every block
// time and every transfer time (the latency edges weigh t_sink − budget
// ≤ 0, the budget being at least the critical path). A pass that moves
// raises some start by at least 1 and never lowers one, so a start past B
// means there is none: these device orders meet no schedule within the
// budget (an error). Without Lanes the constraints are difference
// constraints, and, as in CompactLatency, n·|pairs|+1 passes find every
// longest path; more mean a cycle of positive weight.
func compactLatencyLinks(p *placement.Placement, n int, orders [][]Ref, budget int, ins []Instance) ([]Instance, error) {
	k := len(p.Blocks)
	node := func(r Ref) int { return r.Block*n + r.Micro } // compact's numbering
	limit := 0
	for _, b := range p.Blocks {
		limit += b.Time
	}
	for _, d := range p.Deps {
		t := p.Transfer(d)
		for _, lt := range p.Lanes[d] {
			t = max(t, lt)
		}
		limit += t * len(p.Links(d))
	}
	limit *= n
	pairs := p.LatencyPairs()
	release := make([]int, k*n)
	start := make([]int, k*n)
	for pass := 0; ; pass++ {
		for _, in := range ins {
			start[node(in.Ref())] = in.Start
		}
		moved := false
		for m := range n {
			for _, lp := range pairs {
				src, snk := node(Ref{lp.Source, m}), node(Ref{lp.Sink, m})
				if need := start[snk] + p.Blocks[lp.Sink].Time - budget; need > start[src] && need > release[src] {
					release[src], moved = need, true
				}
			}
		}
		if !moved {
			return ins, nil
		}
		if slices.Max(start) > limit || (len(p.Lanes) == 0 && pass > n*len(pairs)) {
			return nil, fmt.Errorf("compact: these device orders meet no latency budget %d on links that carry one transfer at a time", budget)
		}
		var err error
		if ins, err = compact(p, n, orders, nil, release); err != nil {
			return nil, err
		}
	}
}

// ShowsLatency reports whether a report on s speaks of latency without
// being asked: s has a latency budget, or its placement is an inference
// placement (every block a forward). Reports on training schedules stay
// as they were.
func ShowsLatency(s *Schedule) bool {
	return s.Latency > 0 || s.Placement.Inference()
}

// LatencyText is s's latency figures for people, e.g. "max 4, mean 4,
// throughput 1 per time unit (budget 4)"; s must be verified.
func LatencyText(s *Schedule) string {
	st := MeasureLatency(s)
	t := fmt.Sprintf("max %d, mean %s, throughput %s per time unit", st.Max, strconv.FormatFloat(roundRate(st.Mean), 'f', -1, 64),
		strconv.FormatFloat(roundRate(st.Throughput), 'f', -1, 64))
	if s.Latency > 0 {
		t += fmt.Sprintf(" (budget %d)", s.Latency)
	}
	return t
}

// CompactDecisionsLatency is CompactDecisions under a latency budget (0:
// none, then it is CompactDecisions): s's orders kept (of instances and
// recomputes on every device, of moves on every host channel, of memory
// changes on every device), every start as early as they, the
// dependencies, the decisions' timing and the budget allow. The latency
// rule joins the difference constraints as an edge from every sink back
// to every source of its micro-batch, weighted t_sink − budget (a
// micro-batch's latency counts its blocks: its offloads, reloads and
// recomputes all lie between its forward's end and its consumer's
// start), and the relaxation finds the least solution or, where a cycle
// of positive weight makes these orders meet no schedule within the
// budget, an error. Keeping the orders keeps memory as CompactDecisions
// does. Without decisions it is CompactLatency of s's orders. s must
// verify without its budget; placements whose links carry one transfer at
// a time are not compacted with decisions (an error). The result records
// the budget and is verified.
func CompactDecisionsLatency(s *Schedule, budget int) (*Schedule, error) {
	if budget <= 0 {
		return CompactDecisions(s)
	}
	free := *s
	free.Latency = 0
	if err := Verify(&free); err != nil {
		return nil, fmt.Errorf("compact: %w", err)
	}
	p := s.Placement
	out := &Schedule{Spec: spec.Spec{Placement: p, Cluster: s.Cluster, Given: s.Given, MicroBatches: s.MicroBatches, Memory: s.Memory, Latency: budget}}
	if len(s.Decisions) == 0 {
		ins, err := CompactLatency(p, s.MicroBatches, Orders(s), budget)
		if err != nil {
			return nil, err
		}
		out.Instances = ins
	} else {
		if p.Channels {
			return nil, fmt.Errorf("compact: a schedule that offloads or recomputes on links that carry one transfer at a time")
		}
		c := newCompactor(&free)
		at := make(map[Ref]int, len(s.Instances))
		for x, in := range s.Instances {
			at[in.Ref()] = x
		}
		for m := range s.MicroBatches {
			for _, lp := range p.LatencyPairs() {
				c.cons = append(c.cons, constraint{x: at[Ref{lp.Source, m}], y: at[Ref{lp.Sink, m}], w: p.Blocks[lp.Sink].Time - budget})
			}
		}
		if err := c.solve(); err != nil {
			return nil, fmt.Errorf("compact: these orders meet no latency budget %d", budget)
		}
		out.Instances, out.Decisions = c.result()
		out.Sort()
	}
	if err := Verify(out); err != nil {
		return nil, fmt.Errorf("compact: the compacted schedule fails verification (a bug): %w", err)
	}
	return out, nil
}

// LatencySummary is the latency per micro-batch (its first block's start
// to its last block's end: max and mean), the throughput of the steady
// state in micro-batches per time unit, and the latency budget (omitted
// without one): MeasureLatency as the --json reports give it.
type LatencySummary struct {
	Max        int     `json:"max"`
	Mean       float64 `json:"mean"`
	Throughput float64 `json:"throughput"`
	Budget     int     `json:"budget,omitempty"`
}

// SummarizeLatency is s's LatencySummary, the mean and the throughput
// rounded to six decimals; s must be verified.
func SummarizeLatency(s *Schedule) LatencySummary {
	return SummarizeLatencyOf(s, SteadyOf(s))
}

// SummarizeLatencyOf is SummarizeLatency with s's steady state steady
// (SteadyOf(s)) already known: a report that shows both finds it once.
func SummarizeLatencyOf(s *Schedule, steady *SteadyState) LatencySummary {
	st := MeasureLatencyOf(s, steady)
	return LatencySummary{Max: st.Max, Mean: textfmt.Round6(st.Mean), Throughput: textfmt.Round6(st.Throughput), Budget: s.Latency}
}
