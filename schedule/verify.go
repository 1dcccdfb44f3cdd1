package schedule

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/placement"
)

// Limits of a schedule the verifier accepts. They keep every end time and
// every sum of memory far from overflow; a solver never comes near them.
const (
	MaxMicroBatches = limits.MicroBatches
	MaxStart        = 1 << 40
)

// MaxViolations is how many violations a VerifyError lists; the rest are
// only counted.
const MaxViolations = 50

// ViolationKind names the constraint a violation breaks.
type ViolationKind string

const (
	// Input: the schedule cannot be checked as given (no or an invalid
	// placement, a micro-batch count or budget out of range).
	Input ViolationKind = "input"
	// Missing: an instance B_i^n with i < K, n < N has no start time.
	Missing ViolationKind = "missing"
	// Duplicate: an instance has more than one start time.
	Duplicate ViolationKind = "duplicate"
	// OutOfRange: an instance names a block or micro-batch that does not exist.
	OutOfRange ViolationKind = "out-of-range"
	// Start: a start time below 0 or above MaxStart.
	Start ViolationKind = "start"
	// Dependency: B_j^n starts before B_i^n ends plus the transfer time
	// (with channels, before its tensor arrives over its queued links),
	// for a dependency i -> j.
	Dependency ViolationKind = "dependency"
	// Overlap: two instances run on one device at the same time.
	Overlap ViolationKind = "overlap"
	// Memory: a device's running memory exceeds the budget.
	Memory ViolationKind = "memory"
	// RepetendMismatch: the schedule's repetend does not describe its instances.
	RepetendMismatch ViolationKind = "repetend"
	// MetricsMismatch: the metrics a file claims differ from the measured ones.
	MetricsMismatch ViolationKind = "metrics"
	// BadDecision: a decision names no forward instance of the schedule,
	// an action its block does not allow, or an instance decided twice.
	BadDecision ViolationKind = "decision"
	// OffloadTiming: an offload starts before its forward ends, a reload
	// before its offload ends, or a reload ends after its consumer starts.
	OffloadTiming ViolationKind = "offload"
	// RecomputeTiming: a recompute starts before its forward ends or ends
	// after its consumer starts.
	RecomputeTiming ViolationKind = "recompute"
	// HostChannel: two offloads or reloads on one host channel at once.
	HostChannel ViolationKind = "host-channel"
	// Latency: a micro-batch's latency (its first block's start to its
	// last block's end) exceeds the schedule's latency budget.
	Latency ViolationKind = "latency"
	// BadLinkOrder: a recorded link order (Schedule.LinkOrder) names a
	// link or transfer that does not exist, or misses or repeats one.
	BadLinkOrder ViolationKind = "link-order"
)

// Violation is one broken constraint.
type Violation struct {
	Kind      ViolationKind
	Message   string // one line, names the constraint and the instances, e.g. "overlap on device 1: f1^0 [0,1) and b1^3 [0,3)"
	Instances []Ref  // the instances involved, if any
	Device    int    // the device involved, or -1
}

// VerifyError is every violation Verify found: the first MaxViolations of
// them in Violations (in a deterministic order), and how many more there
// were in Omitted.
type VerifyError struct {
	Violations []Violation
	Omitted    int
}

// Count is the total number of violations found.
func (e *VerifyError) Count() int { return len(e.Violations) + e.Omitted }

// Error summarises the violations on one line: the first one and how many
// more there are.
func (e *VerifyError) Error() string {
	if len(e.Violations) == 0 {
		return "invalid schedule"
	}
	msg := "invalid schedule: " + e.Violations[0].Message
	if more := e.Count() - 1; more > 0 {
		msg += fmt.Sprintf(" (and %d more %s)", more, plural(more, "violation"))
	}
	return msg
}

// List is every violation listed, one a line, and a last line "... and N
// more" where some were omitted: what tessel verify prints.
func (e *VerifyError) List() string {
	var b strings.Builder
	for _, v := range e.Violations {
		b.WriteString(v.Message + "\n")
	}
	if e.Omitted > 0 {
		fmt.Fprintf(&b, "... and %d more\n", e.Omitted)
	}
	return b.String()
}

// CountText is how many violations there are, "1 violation" or "N
// violations".
func (e *VerifyError) CountText() string {
	return fmt.Sprintf("%d %s", e.Count(), plural(e.Count(), "violation"))
}

// ValidText is the line tessel verify prints for a valid schedule: its
// placement, micro-batches, makespan, bubble rate, peak memory of every
// device, the budget (every device's where they differ) and, where the
// schedule shows one, its latency.
func ValidText(s *Schedule) string {
	m := Measure(s)
	name := s.Placement.Name
	if name == "" {
		name = "(unnamed)"
	}
	budget := "unlimited"
	if s.Memory > 0 {
		budget = strconv.Itoa(s.Memory)
	}
	if !s.Placement.Uniform(s.Memory) {
		budget = textfmt.CommaInts(s.Budgets()) // every device's, where they differ
	}
	onCluster := ""
	if s.Cluster != nil {
		onCluster = " on its cluster"
	}
	latency := ""
	if ShowsLatency(s) {
		latency = ", latency " + LatencyText(s)
	}
	return fmt.Sprintf("valid%s: %s, %d micro-batches, makespan %d, bubble rate %.2f%%, peak memory %v (budget %s)%s\n",
		onCluster, name, s.MicroBatches, m.Makespan, 100*m.BubbleRate, textfmt.CommaInts(m.PeakMemory), budget, latency)
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// report collects violations up to MaxViolations and counts the rest.
type report struct {
	list    []Violation
	omitted int
}

func (r *report) add(kind ViolationKind, device int, refs []Ref, format string, args ...any) {
	if len(r.list) >= MaxViolations {
		r.omitted++
		return
	}
	r.list = append(r.list, Violation{Kind: kind, Message: fmt.Sprintf(format, args...), Instances: refs, Device: device})
}

func (r *report) err() error {
	if len(r.list) == 0 {
		return nil
	}
	return &VerifyError{Violations: r.list, Omitted: r.omitted}
}

// Verify checks s against the meaning of a schedule, trusting nothing but
// its placement, micro-batch count, memory budget and start times: every
// instance B_i^n (i < K, n < N) is present exactly once; starts are in
// 0..MaxStart; every dependency B_i -> B_j has B_j^n start no earlier than
// B_i^n ends plus the transfer time (placement's Delay), and with channels
// no earlier than its tensor arrives after the transfers queued before it
// on its links (placement's LinkQueue); no two instances overlap in time on a device (a block on a device
// group occupies each device of the group); on every device the running
// memory, from 0 and in start order, never exceeds the device's budget
// (placement's Budget: the schedule's Memory and the device's capacity, 0:
// unlimited); with a latency budget, every micro-batch's latency (its first
// block's start to its last block's end, placement's "Latency") is at most
// the budget. When s has a Repetend it must describe the instances; when
// it has Claimed metrics they must equal Measure's.
//
// The result is nil or a *VerifyError listing every violation. Runs in
// O(I log I) for I instances.
func Verify(s *Schedule) error {
	r := &report{}
	if s == nil {
		r.add(Input, -1, nil, "no schedule")
		return r.err()
	}
	p := s.Placement
	if p == nil {
		r.add(Input, -1, nil, "no placement")
		return r.err()
	}
	if err := p.Validate(); err != nil {
		r.add(Input, -1, nil, "invalid placement: %v", err)
		return r.err()
	}
	if s.Cluster != nil {
		if s.Given == nil {
			r.add(Input, -1, nil, "a cluster without the placement it was applied to")
			return r.err()
		}
		q, err := s.Cluster.Apply(s.Given)
		if err != nil {
			r.add(Input, -1, nil, "placement on the cluster: %v", err)
			return r.err()
		}
		if !q.Equal(p) {
			r.add(Input, -1, nil, "the placement is not the source placement on the cluster")
			return r.err()
		}
	}
	if s.MicroBatches < 1 || s.MicroBatches > MaxMicroBatches {
		r.add(Input, -1, nil, "micro-batch count %d out of range 1..%d", s.MicroBatches, MaxMicroBatches)
		return r.err()
	}
	if s.Memory < 0 {
		r.add(Input, -1, nil, "memory budget %d is negative (0 means unlimited)", s.Memory)
		return r.err()
	}
	if s.Latency < 0 {
		r.add(Input, -1, nil, "latency budget %d is negative (0 means none)", s.Latency)
		return r.err()
	}
	v := newVerifier(s)
	v.presence(r)
	v.pairs(r)
	v.decisions(r)
	v.linkOrder(r)
	v.dependencies(r)
	v.devices(r)
	v.latency(r)
	v.repetend(r)
	v.claimed(r)
	return r.err()
}

// verifier holds the indexes the checks share.
type verifier struct {
	s *Schedule
	// ok marks the instances that name an existing block and micro-batch
	// and start in range; only those take part in the timing checks.
	ok []bool
	// first maps an instance to the index of its first occurrence in
	// s.Instances among the ok ones.
	first map[Ref]int
	// okDec marks the decisions that name a present forward instance
	// with an action its block allows, once; only those take part in the
	// timing and memory checks.
	okDec []bool
	// pg indexes the valid overlapped pairs (nil: none).
	pg *pairing
}

func newVerifier(s *Schedule) *verifier {
	return &verifier{s: s, ok: make([]bool, len(s.Instances)), first: make(map[Ref]int, len(s.Instances)), okDec: make([]bool, len(s.Decisions))}
}

// name is B_i^n as people read it, e.g. "f1^2".
func (v *verifier) name(ref Ref) string { return refName(v.s, ref) }

func refName(s *Schedule, ref Ref) string {
	if s.Placement != nil && ref.Block >= 0 && ref.Block < len(s.Placement.Blocks) {
		return s.Placement.Blocks[ref.Block].ID + "^" + strconv.Itoa(ref.Micro)
	}
	return fmt.Sprintf("block#%d^%d", ref.Block, ref.Micro)
}

func (v *verifier) end(x int) int {
	in := v.s.Instances[x]
	return in.Start + v.pg.dur(v.s.Placement, in.Ref())
}

// span is "[start,end)" of instance x.
func (v *verifier) span(x int) string {
	return fmt.Sprintf("[%d,%d)", v.s.Instances[x].Start, v.end(x))
}

// presence checks ranges, duplicates and missing instances.
func (v *verifier) presence(r *report) {
	s := v.s
	k, n := len(s.Placement.Blocks), s.MicroBatches
	for x, in := range s.Instances {
		ref := in.Ref()
		switch {
		case in.Block < 0 || in.Block >= k:
			r.add(OutOfRange, -1, []Ref{ref}, "instance %d: block index %d out of range 0..%d", x, in.Block, k-1)
			continue
		case in.Micro < 0 || in.Micro >= n:
			r.add(OutOfRange, -1, []Ref{ref}, "instance %d: %s: micro-batch %d out of range 0..%d", x, v.name(ref), in.Micro, n-1)
			continue
		case in.Start < 0:
			r.add(Start, -1, []Ref{ref}, "%s starts at %d < 0", v.name(ref), in.Start)
			continue
		case in.Start > MaxStart:
			r.add(Start, -1, []Ref{ref}, "%s starts at %d > %d", v.name(ref), in.Start, MaxStart)
			continue
		}
		if y, dup := v.first[ref]; dup {
			r.add(Duplicate, -1, []Ref{ref}, "%s given twice: at %d (instance %d) and at %d (instance %d)", v.name(ref), s.Instances[y].Start, y, in.Start, x)
			continue
		}
		v.first[ref] = x
		v.ok[x] = true
	}
	// Missing instances, in block then micro-batch order. Only the first
	// few are named, so the walk stops early; the rest are counted.
	missing := k*n - len(v.first)
	if missing == 0 {
		return
	}
	named := 0
	for i := 0; i < k && named < MaxViolations+1 && named < missing; i++ {
		for m := 0; m < n && named < MaxViolations+1; m++ {
			ref := Ref{i, m}
			if _, ok := v.first[ref]; !ok {
				r.add(Missing, -1, []Ref{ref}, "%s missing", v.name(ref))
				named++
			}
		}
	}
	for ; named < missing; named++ {
		r.omitted++
	}
}

// dependencies checks, for every dependency i -> j and every micro-batch n
// where both are present, that B_j^n starts no earlier than B_i^n's
// tensor arrives: B_i^n's start plus the placement's Delay (its end plus
// the transfer time), and with channels after the transfers queued before
// it on the same links (placement's LinkQueue). The message names the
// transfer only when there is one, and the link when it waited.
func (v *verifier) dependencies(r *report) {
	s := v.s
	p := s.Placement
	preds := p.PredDeps()
	arrivals := v.arrivals()
	for x, in := range s.Instances {
		if !v.ok[x] || v.first[in.Ref()] != x {
			continue
		}
		// Checked from the successor's side, so that the order of the
		// report follows the instances.
		for _, d := range preds[in.Block] {
			from := Ref{d.From, in.Micro}
			y, ok := v.first[from]
			if !ok {
				continue // reported as missing
			}
			if v.pg.together(from, in.Ref()) {
				continue // one overlapped action: the pair's own order
			}
			a, queued := arrivals[depMicro{d, in.Micro}]
			if !queued {
				a.at = s.Instances[y].Start + p.Delay(d) - p.Blocks[d.From].Time + v.pg.dur(p, from)
			}
			if a.at <= in.Start {
				continue
			}
			fb, tb := p.Blocks[d.From].ID, p.Blocks[d.To].ID
			c := p.Transfer(d)
			switch {
			case a.waited > 0:
				r.add(Dependency, -1, []Ref{from, in.Ref()},
					"dependency %s -> %s broken for micro-batch %d: %s ends at %d, its transfer waits %d for link %d->%d and takes %d, %s starts at %d < %d",
					fb, tb, in.Micro, v.name(from), v.end(y), a.waited, a.busy.From, a.busy.To, c, v.name(in.Ref()), in.Start, a.at)
			case c != 0:
				r.add(Dependency, -1, []Ref{from, in.Ref()},
					"dependency %s -> %s broken for micro-batch %d: %s ends at %d and its transfer takes %d, %s starts at %d < %d",
					fb, tb, in.Micro, v.name(from), v.end(y), c, v.name(in.Ref()), in.Start, a.at)
			default:
				r.add(Dependency, -1, []Ref{from, in.Ref()},
					"dependency %s -> %s broken for micro-batch %d: %s ends at %d, %s starts at %d",
					fb, tb, in.Micro, v.name(from), a.at, v.name(in.Ref()), in.Start)
			}
		}
	}
}

// depMicro is dependency Dep's tensor of micro-batch Micro.
type depMicro struct {
	Dep   placement.Dep
	Micro int
}

// arrival is when a tensor reaches its consumer's devices, and how long
// its transfer waited for which link.
type arrival struct {
	at, waited int
	busy       placement.Link
}

// arrivals books, with channels, every transfer of the present instances
// on its links in the rule's order (producers by start, block and
// micro-batch; placement's LinkQueue) and returns when each tensor
// arrives. Without channels it is nil: every tensor arrives at its
// producer's start plus Delay.
func (v *verifier) arrivals() map[depMicro]arrival {
	p := v.s.Placement
	if !p.Channels {
		return nil
	}
	var xs []int
	for x, in := range v.s.Instances {
		if v.ok[x] && v.first[in.Ref()] == x {
			xs = append(xs, x)
		}
	}
	slices.SortFunc(xs, func(a, b int) int { return compareStart(v.s.Instances, a, b) })
	succs := p.SuccDeps()
	if v.s.LinkOrder != nil {
		return v.orderedArrivals(xs, succs)
	}
	q := p.NewLinkQueue()
	out := map[depMicro]arrival{}
	for _, x := range xs {
		in := v.s.Instances[x]
		for _, d := range succs[in.Block] {
			at, waited, busy := q.Arrival(d, in.Start)
			out[depMicro{d, in.Micro}] = arrival{at, waited, busy}
		}
	}
	return out
}

// orderedArrivals is arrivals under a recorded link order (bookOrdered):
// a tensor arrives when its transfer has ended on the last of its links.
func (v *verifier) orderedArrivals(xs []int, succs [][]placement.Dep) map[depMicro]arrival {
	ins := make([]Instance, len(xs))
	for k, x := range xs {
		ins[k] = v.s.Instances[x]
	}
	out := map[depMicro]arrival{}
	for _, b := range bookOrdered(v.s.Placement, v.s.LinkOrder, ins, succs) {
		a := out[b.t]
		if w := b.start - b.ready; w > a.waited {
			a.waited, a.busy = w, b.link
		}
		a.at = max(a.at, b.end)
		out[b.t] = a
	}
	return out
}

// booking is one transfer t on one link: ready when its producer ended,
// over [start, end).
type booking struct {
	t                 depMicro
	link              placement.Link
	ready, start, end int
}

// bookOrdered books the transfers of the producers ins (one instance per
// block and micro-batch, in the producer-start order) under a recorded
// link order: each link named in order books its transfers in the
// recorded order (those without a producer in ins skipped: the verifier
// reports them), every other link in the producer-start order, each
// transfer starting as soon as its producer has ended and its link is
// free (placement's LinkQueue.ArrivalOn). Links are independent queues,
// so the result does not depend on the order links are booked in; they
// come out by first appearance, each in its order.
func bookOrdered(p *placement.Placement, order []placement.LinkOrder, ins []Instance, succs [][]placement.Dep) []booking {
	start := map[depMicro]int{}
	byLink := map[placement.Link][]depMicro{} // the producer-start order
	var links []placement.Link
	for _, in := range ins {
		for _, d := range succs[in.Block] {
			t := depMicro{d, in.Micro}
			start[t] = in.Start
			for _, l := range p.Links(d) {
				if _, seen := byLink[l]; !seen {
					links = append(links, l)
				}
				byLink[l] = append(byLink[l], t)
			}
		}
	}
	for _, o := range order {
		if _, seen := byLink[o.Link]; !seen {
			links = append(links, o.Link)
		}
		ts := make([]depMicro, len(o.Transfers))
		for k, t := range o.Transfers {
			ts[k] = depMicro{t.Dep, t.Micro}
		}
		byLink[o.Link] = ts
	}
	q := p.NewLinkQueue()
	var out []booking
	for _, l := range links {
		for _, t := range byLink[l] {
			s, ok := start[t]
			if !ok {
				continue
			}
			at, w := q.ArrivalOn(l, t.Dep, s)
			ready := s + p.Blocks[t.Dep.From].Time
			out = append(out, booking{t, l, ready, ready + w, at})
		}
	}
	return out
}

// linkOrder checks the recorded link order (Schedule.LinkOrder): each
// link named once, a link some transfer with time crosses, and listing
// every present transfer that crosses it exactly once. Without channels
// a recorded order is an error: no transfer waits for a link.
func (v *verifier) linkOrder(r *report) {
	s := v.s
	if s.LinkOrder == nil {
		return
	}
	p := s.Placement
	if !p.Channels {
		r.add(BadLinkOrder, -1, nil, "link order recorded but the placement has no channels")
		return
	}
	present := map[depMicro]bool{}
	cross := map[placement.Link][]depMicro{}
	succs := p.SuccDeps()
	for x, in := range s.Instances {
		if !v.ok[x] || v.first[in.Ref()] != x {
			continue
		}
		for _, d := range succs[in.Block] {
			t := depMicro{d, in.Micro}
			present[t] = true
			for _, l := range p.Links(d) {
				cross[l] = append(cross[l], t)
			}
		}
	}
	named := map[placement.Link]bool{}
	for _, o := range s.LinkOrder {
		l := o.Link
		if named[l] {
			r.add(BadLinkOrder, -1, nil, "link order: link %d->%d named twice", l.From, l.To)
			continue
		}
		named[l] = true
		seen := map[depMicro]bool{}
		for _, t := range o.Transfers {
			k := depMicro{t.Dep, t.Micro}
			if !slices.Contains(p.Deps, t.Dep) {
				r.add(BadLinkOrder, -1, nil, "link order of link %d->%d: no dependency %d -> %d", l.From, l.To, t.Dep.From, t.Dep.To)
				continue
			}
			name := v.transferName(k)
			switch {
			case !slices.Contains(p.Links(t.Dep), l):
				r.add(BadLinkOrder, -1, nil, "link order of link %d->%d: transfer %s does not cross it", l.From, l.To, name)
			case !present[k]:
				r.add(BadLinkOrder, -1, nil, "link order of link %d->%d: transfer %s has no producer in the schedule", l.From, l.To, name)
			case seen[k]:
				r.add(BadLinkOrder, -1, nil, "link order of link %d->%d: transfer %s listed twice", l.From, l.To, name)
			}
			seen[k] = true
		}
		for _, k := range cross[l] {
			if !seen[k] {
				r.add(BadLinkOrder, -1, nil, "link order of link %d->%d: transfer %s missing", l.From, l.To, v.transferName(k))
			}
		}
	}
}

// transferName is "f0 -> f1 of micro-batch 2".
func (v *verifier) transferName(t depMicro) string {
	p := v.s.Placement
	return fmt.Sprintf("%s -> %s of micro-batch %d", p.Blocks[t.Dep.From].ID, p.Blocks[t.Dep.To].ID, t.Micro)
}

// devices checks, per device in start order, that no two instances (a
// recompute counting as one) overlap and that the running memory stays
// within the budget.
func (v *verifier) devices(r *report) {
	xs := deviceInstances(v.s, v.ok)
	events := memoryEvents(v.s, xs, v.okDec)
	reruns := v.deviceReruns()
	for d := range xs {
		if len(reruns[d]) == 0 {
			v.overlaps(r, d, xs[d])
		} else {
			v.overlapsWithReruns(r, d, xs[d], reruns[d])
		}
		v.memory(r, d, events[d])
	}
}

// deviceInstances lists, for every device, the indices of the instances
// (among those with use[x], or all when use is nil) that occupy it, sorted by
// start time, then block index, then micro-batch, then index.
func deviceInstances(s *Schedule, use []bool) [][]int {
	p := s.Placement
	out := make([][]int, p.Devices)
	for x, in := range s.Instances {
		if use != nil && !use[x] {
			continue
		}
		if in.Block < 0 || in.Block >= len(p.Blocks) {
			continue
		}
		for _, d := range p.Blocks[in.Block].Devices {
			if d >= 0 && d < p.Devices {
				out[d] = append(out[d], x)
			}
		}
	}
	for _, xs := range out {
		slices.SortFunc(xs, func(a, b int) int { return compareStart(s.Instances, a, b) })
	}
	return out
}

func compareStart(ins []Instance, a, b int) int {
	x, y := ins[a], ins[b]
	return cmp.Or(cmp.Compare(x.Start, y.Start), cmp.Compare(x.Block, y.Block), cmp.Compare(x.Micro, y.Micro), cmp.Compare(a, b))
}

// overlaps reports every instance that starts before the latest end among
// the instances started before it on device d, naming that one.
func (v *verifier) overlaps(r *report, d int, xs []int) {
	last, lastEnd := -1, math.MinInt
	for _, x := range xs {
		if v.pg.follower(v.s.Instances[x].Ref()) {
			continue // its pair's forward occupies the device for both
		}
		if v.s.Instances[x].Start < lastEnd {
			a, b := v.s.Instances[last].Ref(), v.s.Instances[x].Ref()
			r.add(Overlap, d, []Ref{a, b}, "overlap on device %d: %s %s and %s %s",
				d, v.name(a), v.span(last), v.name(b), v.span(x))
		}
		if e := v.end(x); e > lastEnd {
			last, lastEnd = x, e
		}
	}
}

// memory reports each time device d's running memory rises above the
// budget (once per excursion over it, at the change that crosses it:
// an instance's start, or a decision's free or return).
func (v *verifier) memory(r *report, d int, events []memEvent) {
	budget := v.s.Placement.Budget(d, v.s.Memory)
	if budget == 0 {
		return
	}
	sum, over := 0, false
	for _, e := range events {
		sum += e.delta
		if sum > budget && !over {
			r.add(Memory, d, []Ref{{e.block, e.micro}}, "memory on device %d reaches %d > budget %d after %s at time %d",
				d, sum, budget, eventName(v.s, e), e.time)
		}
		over = sum > budget
	}
}

// repetend checks that s.Repetend, if any, describes the instances:
// iteration k (0 ≤ k < Iterations) runs B_i^{Offsets[i]+k} at
// Start + s_i + k·Period, with s_i taken from iteration 0, whose earliest
// instance starts at Start.
func (v *verifier) repetend(r *report) {
	rp := v.s.Repetend
	if rp == nil {
		return
	}
	if err := checkRepetendShape(v.s, rp); err != nil {
		r.add(RepetendMismatch, -1, nil, "repetend: %v", err)
		return
	}
	p := v.s.Placement
	first := math.MaxInt
	base := make([]int, len(p.Blocks))
	for i := range p.Blocks {
		x, ok := v.first[Ref{i, rp.Offsets[i]}]
		if !ok {
			return // reported as missing
		}
		base[i] = v.s.Instances[x].Start
		first = min(first, base[i])
	}
	if first != rp.Start {
		r.add(RepetendMismatch, -1, nil, "repetend: first iteration starts at %d, not %d", first, rp.Start)
	}
	for k := 1; k < rp.Iterations; k++ {
		for i := range p.Blocks {
			ref := Ref{i, rp.Offsets[i] + k}
			x, ok := v.first[ref]
			if !ok {
				continue
			}
			want := base[i] + k*rp.Period
			if got := v.s.Instances[x].Start; got != want {
				r.add(RepetendMismatch, -1, []Ref{ref}, "repetend iteration %d: %s starts at %d, not %d (%s^%d at %d + %d·period %d)",
					k, v.name(ref), got, want, p.Blocks[i].ID, rp.Offsets[i], base[i], k, rp.Period)
			}
		}
	}
}

// checkRepetendShape checks the repetend's numbers against the placement
// and the micro-batch count.
func checkRepetendShape(s *Schedule, rp *Repetend) error {
	k, n := len(s.Placement.Blocks), s.MicroBatches
	switch {
	case rp.NR < 1 || rp.NR > n:
		return fmt.Errorf("nr %d out of range 1..%d", rp.NR, n)
	case rp.Period < 1:
		return fmt.Errorf("period %d < 1", rp.Period)
	case rp.Iterations < 1 || rp.Iterations > n:
		return fmt.Errorf("iterations %d out of range 1..%d", rp.Iterations, n)
	case len(rp.Offsets) != k:
		return fmt.Errorf("%d offsets for %d blocks", len(rp.Offsets), k)
	}
	for i, o := range rp.Offsets {
		id := s.Placement.Blocks[i].ID
		if o < 0 || o >= rp.NR {
			return fmt.Errorf("offset of %s is %d, out of range 0..%d", id, o, rp.NR-1)
		}
		if o+rp.Iterations > n {
			return fmt.Errorf("%d iterations from offset %d of %s run past micro-batch %d", rp.Iterations, o, id, n-1)
		}
	}
	return nil
}

// claimed compares the metrics a file claims with the measured ones.
func (v *verifier) claimed(r *report) {
	c := v.s.Claimed
	if c == nil {
		return
	}
	m := Measure(v.s)
	if c.Makespan != m.Makespan {
		r.add(MetricsMismatch, -1, nil, "metrics: makespan %d claimed, measured %d", c.Makespan, m.Makespan)
	}
	if math.Abs(c.BubbleRate-roundRate(m.BubbleRate)) > 1e-6 || math.IsNaN(c.BubbleRate) {
		r.add(MetricsMismatch, -1, nil, "metrics: bubble rate %g claimed, measured %g", c.BubbleRate, roundRate(m.BubbleRate))
	}
	if !slices.Equal(c.PeakMemory, m.PeakMemory) {
		r.add(MetricsMismatch, -1, nil, "metrics: peak memory %s claimed, measured %s", intList(c.PeakMemory), intList(m.PeakMemory))
	}
}

// intList formats [1 2 3] as "[1, 2, 3]".
func intList(xs []int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, x := range xs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(x))
	}
	b.WriteByte(']')
	return b.String()
}
