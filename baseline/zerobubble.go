package baseline

import (
	"fmt"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// The zero-bubble family: schedules for a backward split into an input
// block (the gradient the previous stage waits for) and a weight block
// (which nobody waits for, so it can fill bubbles). Each follows its
// published construction as a per-device order of actions; compaction
// then times it.

// ZBH1 is ZB-H1 ("Zero Bubble Pipeline Parallelism", Qi et al., ICLR 2024,
// §3.1 and Fig. 3 top): on a v-shape pipeline with a split backward, the
// forwards and input blocks keep 1F1B's order (stage s of S warms up with
// S−s forwards), and the weight block of micro-batch m on stage s runs
// right after the input block of micro-batch m+s, or at the end when there
// is none: the last stages delay their weight blocks into what were 1F1B's
// bubbles. Peak memory stays 1F1B's largest, S activations, on every
// stage; with F = I = W the bubble shrinks from 1F1B's (S−1)(F+I+W) to
// (S−1)(F+I−W).
func ZBH1(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "zb-h1"
	q, err := splitVPipeline(name, p, n, memory)
	if err != nil {
		return nil, err
	}
	S := q.stages()
	return finish(name, p, n, memory, zbOrders(p.Devices, q, n, func(s int) (warmup, delay int) { return S - s, s }))
}

// ZBH2 is ZB-H2 (Qi et al., ICLR 2024, §3.2 and Fig. 3 bottom): as ZB-H1,
// but stage s warms up with 2(S−s)−1 forwards and delays its weight blocks
// by 2s input blocks, so that every stage holds 2S−1 activations at its
// peak (about twice 1F1B's) and the steady state has no bubble.
func ZBH2(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "zb-h2"
	q, err := splitVPipeline(name, p, n, memory)
	if err != nil {
		return nil, err
	}
	S := q.stages()
	return finish(name, p, n, memory, zbOrders(p.Devices, q, n, func(s int) (warmup, delay int) { return 2*(S-s) - 1, 2 * s }))
}

// splitVPipeline reads p as a v-shape pipeline with one stage per device
// and a split backward, or says why not.
func splitVPipeline(name string, p *placement.Placement, n, memory int) (pipeline, error) {
	if err := checkArgs(name, p, n, memory); err != nil {
		return pipeline{}, err
	}
	q, err := wholePipeline(p)
	if err != nil {
		return q, notApplicable(name, p, "not a v-shape pipeline: %v", err)
	}
	if !q.split() {
		return q, notApplicable(name, p, "needs a backward split into input and weight blocks (--split-backward)")
	}
	if v, ok := q.stagesPerDevice(); !ok || v != 1 {
		return q, notApplicable(name, p, "needs one stage per device")
	}
	return q, nil
}

// zbOrders is the order of every stage of the ZB-H family: warmup
// forwards, then one input block and one forward alternately, then the
// remaining input blocks (1F1B's order with input blocks for backwards),
// with the weight block of micro-batch m right after the input block of
// micro-batch m+delay, or at the end.
func zbOrders(devices int, q pipeline, n int, rule func(s int) (warmup, delay int)) [][]schedule.Ref {
	orders := make([][]schedule.Ref, devices)
	for s := range q.stages() {
		warmup, delay := rule(s)
		warmup = min(warmup, n)
		f := func(m int) schedule.Ref { return schedule.Ref{Block: q.fwd[s], Micro: m} }
		w := func(m int) schedule.Ref { return schedule.Ref{Block: q.wgt[s], Micro: m} }
		var order []schedule.Ref
		for m := range warmup {
			order = append(order, f(m))
		}
		for m := range n {
			order = append(order, schedule.Ref{Block: q.bwd[s], Micro: m})
			if m-delay >= 0 {
				order = append(order, w(m-delay))
			}
			if warmup+m < n {
				order = append(order, f(warmup+m))
			}
		}
		for m := max(0, n-delay); m < n; m++ {
			order = append(order, w(m))
		}
		orders[q.dev[s]] = order
	}
	return orders
}

// vPipeline is a pipeline on the V placement: 2L stages on L devices,
// stages 0..L−1 down the devices and L..2L−1 back up, so that position r
// holds stages r and 2L−1−r.
type vPipeline struct {
	pipeline
	L int
}

// chunk0 and chunk1 are the stages of position r.
func (v vPipeline) chunk0(r int) int { return r }
func (v vPipeline) chunk1(r int) int { return 2*v.L - 1 - r }

// splitV reads p as a pipeline on the V placement with a split backward.
func splitV(name string, p *placement.Placement, n, memory int) (vPipeline, error) {
	if err := checkArgs(name, p, n, memory); err != nil {
		return vPipeline{}, err
	}
	q, err := wholePipeline(p)
	if err != nil {
		return vPipeline{}, notApplicable(name, p, "not a pipeline: %v", err)
	}
	if !q.split() {
		return vPipeline{}, notApplicable(name, p, "needs a backward split into input and weight blocks (--split-backward)")
	}
	S := q.stages()
	L := S / 2
	ok := S%2 == 0 && L >= 1
	seen := map[int]bool{}
	for j := 0; ok && j < L; j++ {
		ok = !seen[q.dev[j]] && q.dev[S-1-j] == q.dev[j]
		seen[q.dev[j]] = true
	}
	if !ok {
		return vPipeline{}, notApplicable(name, p, "needs the V placement: 2 stages per device, down the devices and back up (--chunks 2 --order v)")
	}
	return vPipeline{q, L}, nil
}

// stage is the blocks of one pipeline stage with a split backward.
type stage struct{ f, i, w int }

func (q pipeline) stage(j int) stage { return stage{q.fwd[j], q.bwd[j], q.wgt[j]} }

// actions builds one device's order from a construction written as a list
// of actions on its stages: forwards and input blocks of a stage run in
// micro-batch order; a whole backward is the input block then its weight
// block; the weight blocks of input blocks that run without them wait in
// one queue per device.
type actions struct {
	n      int
	order  []schedule.Ref
	nextF  map[int]int // forward block → its next micro-batch
	nextI  map[int]int // input block → its next micro-batch
	queued []schedule.Ref
	// sendAfter records, for DeepSeek's runtime, which instance's output
	// leaves only when another has ended: the input block of a whole
	// backward waits for its weight block (both gradients come from one
	// autograd call), and the forward of an overlapped forward-backward
	// pair for the end of the pair. Our model sends every output when its
	// block ends; tests use this to time the orders DeepSeek's way.
	sendAfter [][2]schedule.Ref
	// pairs are the overlapped forward-backward pairs, for the baselines
	// that run them overlapped (DualPipeVOverlap).
	pairs []schedule.Pair
}

func newActions(n int) *actions {
	return &actions{n: n, nextF: map[int]int{}, nextI: map[int]int{}}
}

// forward adds the next forward of st; a construction that counts on more
// micro-batches than there are skips the missing ones.
func (a *actions) forward(st stage) {
	if m := a.nextF[st.f]; m < a.n {
		a.order = append(a.order, schedule.Ref{Block: st.f, Micro: m})
		a.nextF[st.f] = m + 1
	}
}

// backward adds the next whole backward of st: its input block, then its
// weight block.
func (a *actions) backward(st stage) { a.input(st, false) }

// input adds the next input block of st; its weight block runs right
// after it unless hold says to queue it.
func (a *actions) input(st stage, hold bool) {
	m := a.nextI[st.i]
	if m >= a.n {
		return
	}
	a.nextI[st.i] = m + 1
	a.order = append(a.order, schedule.Ref{Block: st.i, Micro: m})
	w := schedule.Ref{Block: st.w, Micro: m}
	if hold {
		a.queued = append(a.queued, w)
		return
	}
	a.order = append(a.order, w)
	a.sendAfter = append(a.sendAfter, [2]schedule.Ref{{Block: st.i, Micro: m}, w})
}

// overlapped adds DualPipe's overlapped pair: the next forward of f and
// the next whole backward of b, one after the other here.
func (a *actions) overlapped(f, b stage) {
	mf, mb := a.nextF[f.f], a.nextI[b.i]
	a.forward(f)
	a.backward(b)
	if mf < a.n && mb < a.n {
		a.sendAfter = append(a.sendAfter, [2]schedule.Ref{{Block: f.f, Micro: mf}, {Block: b.w, Micro: mb}})
		a.pairs = append(a.pairs, schedule.Pair{Forward: schedule.Ref{Block: f.f, Micro: mf}, Backward: schedule.Ref{Block: b.i, Micro: mb}})
	}
}

// weight adds the oldest queued weight block, if any.
func (a *actions) weight() {
	if len(a.queued) > 0 {
		a.order = append(a.order, a.queued[0])
		a.queued = a.queued[1:]
	}
}

// weightOf adds the oldest queued weight block of st, if any.
func (a *actions) weightOf(st stage) bool {
	for k, w := range a.queued {
		if w.Block == st.w {
			a.order = append(a.order, w)
			a.queued = append(a.queued[:k:k], a.queued[k+1:]...)
			return true
		}
	}
	return false
}

// done checks that every block of the stages ran n times (a bug otherwise).
func (a *actions) done(stages ...stage) error {
	for _, st := range stages {
		if a.nextF[st.f] != a.n || a.nextI[st.i] != a.n {
			return fmt.Errorf("a stage ran %d forwards and %d input blocks of %d micro-batches", a.nextF[st.f], a.nextI[st.i], a.n)
		}
	}
	if len(a.queued) > 0 {
		return fmt.Errorf("%d weight blocks never ran", len(a.queued))
	}
	return nil
}

// ZBV is ZB-V (Qi et al., ICLR 2024, §6 and Fig. 8, as PyTorch's
// ScheduleZBVZeroBubble builds it) on the V placement with a split
// backward: position r of L holds stages r (chunk 0) and 2L−1−r (chunk 1).
// It warms up with 2(L−r)−1 forwards of chunk 0, then r pairs of a chunk-1
// and a chunk-0 forward, then L−r rounds of a chunk-1 forward, input and
// weight; each steady round is a forward, input and weight of chunk 0, then
// of chunk 1; the cooldown runs r pairs of input blocks of chunks 0 and 1,
// then L−r rounds of a chunk-0 input and its oldest waiting weight, then
// the waiting weights of chunk 1 and of chunk 0. It counts on at least
// 2L−1 micro-batches and skips the actions of micro-batches that do not
// exist. With F = I = W its steady state has no bubble, at 1F1B's peak
// memory (2L activations of one stage).
func ZBV(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "zb-v"
	v, err := splitV(name, p, n, memory)
	if err != nil {
		return nil, err
	}
	L := v.L
	nm := max(2*L-1, n)
	orders := make([][]schedule.Ref, p.Devices)
	for r := range L {
		c0, c1 := v.stage(v.chunk0(r)), v.stage(v.chunk1(r))
		a := newActions(n)
		f0, f1 := 0, 0 // forwards counted, those skipped included
		for range 2*(L-r) - 1 {
			a.forward(c0)
			f0++
		}
		for range r {
			a.forward(c1)
			a.forward(c0)
			f1++
			f0++
		}
		for range L - r {
			a.forward(c1)
			f1++
			a.backward(c1)
		}
		for f1 < f0 || f0 < nm {
			if f0 < nm {
				a.forward(c0)
				f0++
			}
			a.backward(c0)
			a.forward(c1)
			f1++
			a.backward(c1)
		}
		for range r {
			a.input(c0, true)
			a.input(c1, true)
		}
		for range L - r {
			a.input(c0, true)
			a.weightOf(c0)
		}
		for a.weightOf(c1) {
		}
		for a.weightOf(c0) {
		}
		if err := a.done(c0, c1); err != nil {
			return nil, fmt.Errorf("%s: placement %q: position %d: %w (a bug)", name, p.Name, r, err)
		}
		orders[v.dev[v.chunk0(r)]] = a.order
	}
	return finish(name, p, n, memory, orders)
}

// dualPipeOrder is the order of one device of DualPipe (DeepSeek-V3
// technical report, §3.2.1 and Fig. 5; deepseek-ai/DualPipe's step): L is
// half the ranks of DualPipe (all the ranks of DualPipeV), r the device's
// distance to the nearer end (DualPipe's half_rank), n the micro-batches
// of each direction (DualPipe) or of the V (DualPipeV), c0 the stage whose
// pipeline starts nearer to the device and c1 the other. Its eight steps:
// 2(L−r−1) forwards of c0; r+1 pairs of forwards of c0 and c1; L−r−1 rounds
// of an input block of c1 (its weight queued), the oldest queued weight and
// a forward of c1; n−2L+r+1 rounds of a forward of c0 with a whole backward
// of c1 and a forward of c1 with a whole backward of c0 (DeepSeek overlaps
// each pair; we run them one after the other); L−r−1 rounds of a whole
// backward of c1 and a forward of c1 with a whole backward of c0; r+1
// pairs of backwards of c1 and c0, whose weights are queued from the
// middle pair on; L−r−1 rounds of the oldest queued weight and an input
// block of c0; and the r+1 weights left. The device's two stages travel
// as one pair, c[0] = c0 and c[1] = c1.
func dualPipeOrder(a *actions, L, r, n int, c [2]stage) {
	c0, c1 := c[0], c[1]
	for range 2 * (L - r - 1) {
		a.forward(c0)
	}
	for range r + 1 {
		a.forward(c0)
		a.forward(c1)
	}
	for range L - r - 1 {
		a.input(c1, true)
		a.weight()
		a.forward(c1)
	}
	for k := range n - 2*L + r + 1 {
		if k == 0 && r == L-1 { // DeepSeek does not overlap this pair, to shorten the bubble
			a.forward(c0)
			a.backward(c1)
		} else {
			a.overlapped(c0, c1)
		}
		a.overlapped(c1, c0)
	}
	for range L - r - 1 {
		a.backward(c1)
		a.overlapped(c1, c0)
	}
	zb := false
	step6 := r + 1
	for k := range step6 {
		if k == step6/2 && r%2 == 1 {
			zb = true
		}
		a.input(c1, zb)
		if k == step6/2 && r%2 == 0 {
			zb = true
		}
		a.input(c0, zb)
	}
	for range L - r - 1 {
		a.weight()
		a.input(c0, true)
	}
	for range r + 1 {
		a.weight()
	}
}

// DualPipe is DeepSeek's DualPipe (DeepSeek-V3 technical report, §3.2.1,
// Fig. 5 and Table 2; She et al. §V-A) on the DualPipe placement: the
// x-shape with its backward split, one pipeline down the D devices and one
// up, micro-batch m of the placement being a pair, one micro-batch in each
// direction. Every device runs dualPipeOrder with L = D/2, its distance to
// the nearer end as r, and as c0 its stage in the pipeline that starts
// nearer to it. DeepSeek's DualPipe needs D even and at least D
// micro-batches in each direction (n ≥ D here); its bubble is
// (D/2−1)(F&B + B − 3W), F&B counted as F + B when, as here, they do not
// overlap: 2(D/2−1) with F = I = W = 1. Peak memory: D+1 activations.
func DualPipe(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "dualpipe"
	orders, _, err := dualPipeOrders(p, n, memory)
	if err != nil {
		return nil, err
	}
	return finish(name, p, n, memory, orders)
}

// dualPipeOrders are DualPipe's per-device orders and its sendAfter pairs
// (see actions).
func dualPipeOrders(p *placement.Placement, n, memory int) ([][]schedule.Ref, [][2]schedule.Ref, error) {
	const name = "dualpipe"
	if err := checkArgs(name, p, n, memory); err != nil {
		return nil, nil, err
	}
	comps := components(p)
	if len(comps) != 2 {
		return nil, nil, notApplicable(name, p, "needs two pipelines in opposite directions, the blocks form %d connected parts", len(comps))
	}
	var pipes [2]pipeline
	for k, c := range comps {
		rest, wgt, err := weights(p, c)
		if err != nil {
			return nil, nil, notApplicable(name, p, "part %d: %v", k, err)
		}
		chain, ok := chainOf(p, rest)
		if !ok {
			return nil, nil, notApplicable(name, p, "part %d is not a chain", k)
		}
		q, err := pipelineOf(p, chain, wgt)
		if err != nil {
			return nil, nil, notApplicable(name, p, "part %d is not a pipeline: %v", k, err)
		}
		if v, ok := q.stagesPerDevice(); !ok || v != 1 || !q.split() {
			return nil, nil, notApplicable(name, p, "part %d needs one stage per device and a split backward", k)
		}
		pipes[k] = q
	}
	down, up := pipes[0], pipes[1]
	D := down.stages()
	if up.stages() != D || D != p.Devices || D%2 != 0 {
		return nil, nil, notApplicable(name, p, "needs two pipelines over all devices, an even number of them")
	}
	for s := range D {
		if up.dev[s] != down.dev[D-1-s] {
			return nil, nil, notApplicable(name, p, "the two pipelines do not run in opposite directions over the same devices")
		}
	}
	if n < D {
		return nil, nil, notApplicable(name, p, "DualPipe needs at least %d micro-batch pairs (as many per direction as devices), got %d", D, n)
	}
	orders := make([][]schedule.Ref, p.Devices)
	var after [][2]schedule.Ref
	for s := range D {
		dev := down.dev[s]
		// Stage s of the down pipeline and stage D−1−s of the up one
		// share the device; c0 is the one in the first half of its pipeline.
		c0, c1 := down.stage(s), up.stage(D-1-s)
		r := s
		if s >= D/2 {
			c0, c1 = c1, c0
			r = D - 1 - s
		}
		a := newActions(n)
		dualPipeOrder(a, D/2, r, n, [2]stage{c0, c1})
		if err := a.done(c0, c1); err != nil {
			return nil, nil, fmt.Errorf("%s: placement %q: device %d: %w (a bug)", name, p.Name, dev, err)
		}
		orders[dev] = a.order
		after = append(after, a.sendAfter...)
	}
	return orders, after, nil
}

// DualPipeV is DualPipeV, DualPipe cut in half (DeepSeek's DualPipe
// repository; PyTorch's ScheduleDualPipeV), on the V placement with a split
// backward: position r of L holds stages r (c0) and 2L−1−r (c1) of one
// pipeline, and runs dualPipeOrder with that L and r. It needs at least
// 2L micro-batches.
func DualPipeV(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "dualpipe-v"
	orders, _, err := dualPipeVOrders(name, p, n, memory)
	if err != nil {
		return nil, err
	}
	return finish(name, p, n, memory, orders)
}

// DualPipeVOverlap is DualPipeV as DeepSeek runs it, on a placement whose
// forwards and backwards may overlap (placement's Overlap,
// --overlap-time): every forward-backward pair of its steady phase (the
// pairs DualPipeV runs one after the other) is one overlapped action, for
// the pair's time. A pair the placement gives no time runs as in
// DualPipeV.
func DualPipeVOverlap(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "dualpipe-v-overlap"
	if err := checkArgs(name, p, n, memory); err != nil {
		return nil, err
	}
	if p.Overlap == nil {
		return nil, notApplicable(name, p, "the placement overlaps no forward with a backward (--overlap-time)")
	}
	orders, pairs, err := dualPipeVOrders(name, p, n, memory)
	if err != nil {
		return nil, err
	}
	roles := p.Roles()
	var keep []schedule.Pair
	for _, q := range pairs {
		if _, _, why := p.OverlapGroup(q.Forward.Block, q.Backward.Block, roles); why == "" {
			keep = append(keep, q)
		}
	}
	return finishPairs(name, spec.Spec{Placement: p, MicroBatches: n, Memory: memory}, compact.Keep{Orders: orders, Pairs: keep})
}

// dualPipeVOrders are DualPipeV's per-device orders and its overlapped
// pairs.
func dualPipeVOrders(name string, p *placement.Placement, n, memory int) ([][]schedule.Ref, []schedule.Pair, error) {
	v, err := splitV(name, p, n, memory)
	if err != nil {
		return nil, nil, err
	}
	if n < 2*v.L {
		return nil, nil, notApplicable(name, p, "DualPipeV needs at least %d micro-batches (one per stage), got %d", 2*v.L, n)
	}
	orders := make([][]schedule.Ref, p.Devices)
	var pairs []schedule.Pair
	for r := range v.L {
		c0, c1 := v.stage(v.chunk0(r)), v.stage(v.chunk1(r))
		a := newActions(n)
		dualPipeOrder(a, v.L, r, n, [2]stage{c0, c1})
		if err := a.done(c0, c1); err != nil {
			return nil, nil, fmt.Errorf("%s: placement %q: position %d: %w (a bug)", name, p.Name, r, err)
		}
		orders[v.dev[v.chunk0(r)]] = a.order
		pairs = append(pairs, a.pairs...)
	}
	return orders, pairs, nil
}
