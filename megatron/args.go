package megatron

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/torchcsv"
)

// ArgsOptions are what a schedule does not say about its Megatron-Core
// run.
type ArgsOptions struct {
	// Layout is the plan's split in Megatron-Core's terms: its stages are
	// the schedule's chain of stages, in order.
	Layout *Layout
	// MoE says which transformer layers are mixture-of-experts layers,
	// one entry per layer in order (Megatron-Core's --moe-layer-freq);
	// nil: every one, Megatron-Core's default frequency 1.
	MoE []bool
	// Source names the schedule in the comments.
	Source string
	// MaxGroups bounds the group sizes tried (0: 512).
	MaxGroups int
}

// Flag is one argument: a name ("--num-layers") and its value ("" for a
// switch).
type Flag struct{ Name, Value string }

// Args are the Megatron-Core arguments of a plan.
type Args struct {
	Flags []Flag
	// Notes are what the arguments cannot say, written as comments.
	Notes []string
	// Group is the micro-batch group size written (0 without virtual
	// stages); SameOrder says whether Megatron-Core's order with it is
	// the schedule's own; Makespan is Megatron-Core's order's makespan on
	// the schedule's placement and Plan the schedule's.
	Group          int
	SameOrder      bool
	Makespan, Plan int
}

// Arguments are the Megatron-Core arguments that run schedule s (a
// verified schedule of a chain of stages on Megatron-Core's ranks, stage i
// on device i mod P) with opt.Layout's split: the pipeline size, the
// layout (the virtual size is the layout's: a note says so, as
// --num-virtual-stages-per-pipeline-rank must not be given with it), the
// layer counts, with virtual stages the micro-batch group size (the one
// whose Megatron-Core order is s's own, else the one whose order ends
// first on s's placement, Megatron-Core's rules on group sizes kept),
// --overlap-moe-expert-parallel-comm where s overlaps forwards and
// backwards, --delay-wgrad-compute where it splits the backward, and the
// recompute method and layers where it recomputes.
//
// Before writing, it refuses, naming the rule and the stage, what
// Megatron-Core rejects or is known to hang on: a split backward without
// the overlap (Megatron-Core delays weight gradients only with it), the
// overlap with several stages on a rank missing, with recomputation, with
// more than one MTP layer, with a stage holding no transformer layer
// (Megatron-LM's pipeline deadlocks on empty stages of a custom layout),
// or with a stage holding an odd number of MoE layers (its all-to-all
// overlap deadlocks on those); and offloaded activations, which its
// pipeline does not offload.
func Arguments(s *schedule.Schedule, opt ArgsOptions) (*Args, error) {
	l := opt.Layout
	if l == nil {
		return nil, fmt.Errorf("no layout: the split of the plan in Megatron-Core's terms")
	}
	p := s.Placement
	stages, err := torchcsv.Chain(p)
	if err != nil {
		return nil, err
	}
	if p.Devices != l.PP || len(stages) != len(l.Stages) {
		return nil, fmt.Errorf("the schedule has %d stages on %d devices, the layout %d stages on %d ranks", len(stages), p.Devices, len(l.Stages), l.PP)
	}
	for i, st := range stages {
		if st.Device != l.Rank(i) {
			return nil, fmt.Errorf("stage %d is on device %d: Megatron-Core runs layout stage i on rank i mod %d", i, st.Device, l.PP)
		}
	}
	if opt.MoE != nil && len(opt.MoE) != l.Layers {
		return nil, fmt.Errorf("MoE pattern of %d layers for %d transformer layers", len(opt.MoE), l.Layers)
	}
	split := slices.ContainsFunc(stages, func(st torchcsv.Stage) bool { return st.Input >= 0 })
	overlap := len(s.Pairs) > 0
	off, rec := s.Count()
	policy := torchcsv.RecomputedLayers(p, stages)
	switch {
	case policy != nil && rec > 0:
		return nil, fmt.Errorf("the schedule recomputes %d activations and also layers of every micro-batch: Megatron-Core takes one of the two", rec)
	case off > 0:
		return nil, fmt.Errorf("the schedule offloads %d activations: Megatron-Core's pipeline offloads none of them (search without --offload)", off)
	case split && !overlap:
		return nil, fmt.Errorf("the schedule splits the backward (input and weight gradients): Megatron-Core delays weight gradients (--delay-wgrad-compute) only with --overlap-moe-expert-parallel-comm, which this schedule's order has no overlapped pairs for; export it with --merge-bw")
	}
	if overlap {
		if err := l.checkOverlap(rec+len(policy), opt.MoE); err != nil {
			return nil, err
		}
	}
	a := &Args{Plan: schedule.Makespan(s)}
	n := s.MicroBatches
	if err := a.order(s, opt, overlap); err != nil {
		return nil, err
	}
	add := func(name, value string) { a.Flags = append(a.Flags, Flag{name, value}) }
	add("--pipeline-model-parallel-size", strconv.Itoa(l.PP))
	add("--pipeline-model-parallel-layout", strconv.Quote(l.String()))
	add("--num-layers", strconv.Itoa(l.Layers))
	if l.MTP > 0 {
		add("--mtp-num-layers", strconv.Itoa(l.MTP))
	}
	if a.Group > 0 {
		add("--microbatch-group-size-per-virtual-pipeline-stage", strconv.Itoa(a.Group))
	}
	if overlap {
		add("--overlap-moe-expert-parallel-comm", "")
	}
	if split {
		add("--delay-wgrad-compute", "")
	}
	src := opt.Source
	if src == "" {
		src = "the schedule"
	}
	a.Notes = append(a.Notes, fmt.Sprintf("Megatron-Core arguments for %s: %d micro-batches per iteration (--global-batch-size = %d × --micro-batch-size × the data-parallel size)", src, n, n))
	if l.VPP > 1 {
		a.Notes = append(a.Notes, fmt.Sprintf("virtual pipeline size %d, from the layout (%d stages on %d ranks): give no --num-virtual-stages-per-pipeline-rank beside it", l.VPP, len(l.Stages), l.PP))
	}
	what := "1F1B"
	if l.VPP > 1 {
		what = fmt.Sprintf("interleaved 1F1B with micro-batch groups of %d", a.Group)
	}
	// In time where the placement says what its steps are.
	span := strconv.Itoa
	if u := s.Placement.Units; u.HasTime() {
		span = func(x int) string { return u.Duration(float64(x)) }
	}
	if a.SameOrder {
		a.Notes = append(a.Notes, fmt.Sprintf("the schedule's order is Megatron-Core's %s: makespan %s", what, span(a.Plan)))
	} else {
		a.Notes = append(a.Notes, fmt.Sprintf("Megatron-Core runs its own order, not the schedule's: its %s ends at %s on this placement, the schedule at %s", what, span(a.Makespan), span(a.Plan)))
	}
	if policy != nil {
		k, notes := l.policy(policy)
		add("--recompute-granularity", "full")
		add("--recompute-method", "block")
		add("--recompute-num-layers", strconv.Itoa(k))
		a.Notes = append(a.Notes, notes...)
	}
	if rec > 0 {
		k, why := l.recompute(s, stages)
		add("--recompute-granularity", "full")
		add("--recompute-method", "block")
		add("--recompute-num-layers", strconv.Itoa(k))
		if why != "" {
			a.Notes = append(a.Notes, why)
		}
	}
	if overlap {
		a.Notes = append(a.Notes, "the all-to-all overlap also needs --expert-model-parallel-size > 1, --moe-token-dispatcher-type alltoall or flex, and --bf16 or --fp16")
	}
	return a, nil
}

// checkOverlap refuses what Megatron-Core's all-to-all overlap rejects or
// hangs on.
func (l *Layout) checkOverlap(recomputed int, moe []bool) error {
	if l.PP > 1 && l.VPP < 2 {
		return fmt.Errorf("the schedule overlaps forwards and backwards: Megatron-Core's all-to-all overlap (--overlap-moe-expert-parallel-comm) needs virtual stages with pipeline parallelism, and the layout has one stage per rank")
	}
	if recomputed > 0 {
		return fmt.Errorf("the schedule overlaps forwards and backwards and recomputes %d activations: Megatron-Core's all-to-all overlap refuses recomputation", recomputed)
	}
	if l.MTP > 1 {
		return fmt.Errorf("the schedule overlaps forwards and backwards with %d MTP layers: Megatron-Core's all-to-all overlap takes at most one", l.MTP)
	}
	if e := l.Empty(); len(e) > 0 {
		return fmt.Errorf("stage %d (%q) holds no transformer layer: with the all-to-all overlap (--overlap-moe-expert-parallel-comm) such stages deadlock in Megatron-LM's pipeline", e[0], l.Stages[e[0]])
	}
	layer := 0
	for i, st := range l.Stages {
		count := 0
		for _, c := range []byte(st) {
			if c != 't' {
				continue
			}
			if moe == nil || moe[layer] {
				count++
			}
			layer++
		}
		if count%2 == 1 {
			return fmt.Errorf("stage %d holds %d MoE layers, an odd number: the all-to-all overlap (--overlap-moe-expert-parallel-comm) deadlocks on those in Megatron-LM's pipeline", i, count)
		}
	}
	return nil
}

// policy is Megatron-Core's block recompute of a per-stage policy (ks:
// the layers every stage recomputes in every micro-batch): K, the most of
// any stage, for every stage, as Megatron-Core takes one
// --recompute-num-layers; notes say where a stage then recomputes more
// than the policy (more time, less memory than planned), and where the
// policy recomputes more than the stage's transformer layers, the only
// ones Megatron-Core recomputes.
func (l *Layout) policy(ks []int) (int, []string) {
	k := slices.Max(ks)
	notes := []string{fmt.Sprintf("the plan's per-stage recompute policy: %s layers recomputed in every micro-batch, stage by stage (Megatron-Core's block method recomputes a stage's first layers)", textfmt.Ints(ks))}
	var more, fewer []string
	for i, st := range l.Stages {
		t := strings.Count(st, "t")
		switch {
		case ks[i] > t:
			fewer = append(fewer, fmt.Sprintf("stage %d (its %d transformer layers; the policy: %d layers)", i, t, ks[i]))
		case min(k, t) > ks[i]:
			more = append(more, fmt.Sprintf("stage %d (%d instead of %d)", i, min(k, t), ks[i]))
		}
	}
	if len(more) > 0 {
		notes = append(notes, fmt.Sprintf("Megatron-Core takes one --recompute-num-layers for every stage: it recomputes more than the policy on %s, which costs time (tessel plan --recompute times this form beside the policy)", strings.Join(more, ", ")))
	}
	if len(fewer) > 0 {
		notes = append(notes, fmt.Sprintf("Megatron-Core recomputes transformer layers only: fewer than the policy on %s, which needs memory the plan did not count", strings.Join(fewer, ", ")))
	}
	return k, notes
}

// recompute is Megatron-Core's block recompute of what s recomputes: K
// layers of every stage, K the most layers of a stage s recomputes, and a
// note where that is more than s recomputes.
func (l *Layout) recompute(s *schedule.Schedule, stages []torchcsv.Stage) (int, string) {
	stageOf := map[int]int{}
	for i, st := range stages {
		stageOf[st.Forward] = i
	}
	per := map[int]int{} // instances recomputed per stage
	for _, d := range s.Decisions {
		if d.Action == placement.Recompute {
			per[stageOf[d.Block]]++
		}
	}
	k, all := 0, true
	for i, st := range l.Stages {
		if per[i] > 0 {
			k = max(k, strings.Count(st, "t"))
		}
		all = all && per[i] == s.MicroBatches
	}
	if all {
		return k, ""
	}
	var which []string
	for i := range l.Stages {
		if per[i] > 0 {
			which = append(which, fmt.Sprintf("stage %d for %d of %d micro-batches", i, per[i], s.MicroBatches))
		}
	}
	return k, fmt.Sprintf("Megatron-Core recomputes %d layers of every stage for every micro-batch, more than the schedule, which recomputes %s", k, strings.Join(which, ", "))
}

// order finds the micro-batch group size: Megatron-Core's orders for
// every group size it allows, the one equal to s's own if any, else the
// one that ends first (the smallest on a tie).
func (a *Args) order(s *schedule.Schedule, opt ArgsOptions, overlap bool) error {
	l, n := opt.Layout, s.MicroBatches
	want := schedule.Orders(s)
	// Megatron-Core's orders are compared by time alone: the plan's
	// budgets (capacities) are the plan's, not a limit on them.
	plain := *s.Placement
	plain.Capacities = nil
	groups := []int{0}
	if l.VPP > 1 {
		groups = groups[:0]
		limit := opt.MaxGroups
		if limit <= 0 {
			limit = 512
		}
		for g := l.PP; g <= n && len(groups) < limit; g++ {
			if CheckGroup(g, n, l.PP) == nil {
				groups = append(groups, g)
			}
		}
		if len(groups) == 0 {
			return fmt.Errorf("%d micro-batches: Megatron-Core's interleaved schedule needs at least %d (the pipeline size)", n, l.PP)
		}
	}
	best, bestSpan := -1, 0
	var firstErr error
	for _, g := range groups {
		m, err := Order(spec.New(&plain, n), OrderOptions{Group: g, Overlap: overlap})
		if err != nil {
			firstErr = err
			continue
		}
		span := schedule.Makespan(m)
		if slices.EqualFunc(schedule.Orders(m), want, slices.Equal) {
			a.Group, a.SameOrder, a.Makespan = g, true, span
			return nil
		}
		if best < 0 || span < bestSpan {
			best, bestSpan = g, span
		}
	}
	if best < 0 {
		return fmt.Errorf("no Megatron-Core order runs on this placement: %w", firstErr)
	}
	a.Group, a.Makespan = best, bestSpan
	return nil
}

// Text writes the arguments one per line, the notes first as comments:
// ready to paste into a launch script (the layout is quoted for the
// shell).
func (a *Args) Text() []byte {
	var b bytes.Buffer
	for _, n := range a.Notes {
		b.WriteString("# " + textfmt.OneLine(n) + "\n") // a path in a note stays in its comment
	}
	for _, f := range a.Flags {
		b.WriteString(f.Name)
		if f.Value != "" {
			b.WriteString(" " + f.Value)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ParseArgs reads arguments written as Text writes them: one "--name" or
// "--name value" per line (a value in double quotes is unquoted as Go and
// the shell both read it), comments and blank lines skipped. It returns
// the values by name ("" for a switch); a name given twice or a line of
// another shape is an error naming the line.
func ParseArgs(data []byte) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, _ := strings.Cut(line, " ")
		value = strings.TrimSpace(value)
		if !strings.HasPrefix(name, "--") || len(name) < 3 {
			return nil, fmt.Errorf("line %d: %q is no --name", i+1, name)
		}
		if strings.HasPrefix(value, `"`) {
			v, err := strconv.Unquote(value)
			if err != nil {
				return nil, fmt.Errorf("line %d: value %s: %v", i+1, value, err)
			}
			value = v
		} else if strings.ContainsAny(value, " \t\"") {
			return nil, fmt.Errorf("line %d: value %q: one word, or one quoted string", i+1, value)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("line %d: %s given twice", i+1, name)
		}
		out[name] = value
	}
	return out, nil
}

// ParseMoELayerFreq reads Megatron-Core's --moe-layer-freq for layers
// transformer layers: an integer N (layer i is an MoE layer where i mod N
// is 0; 1: every layer) or a list of 0 and 1, one per layer ("[1,1,0,1]").
func ParseMoELayerFreq(s string, layers int) ([]bool, error) {
	s = strings.TrimSpace(s)
	out := make([]bool, layers)
	if !strings.HasPrefix(s, "[") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("MoE layer frequency %q: want a positive integer or a list of 0 and 1 such as [1,0,1]", s)
		}
		for i := range out {
			out[i] = i%n == 0
		}
		return out, nil
	}
	if !strings.HasSuffix(s, "]") {
		return nil, fmt.Errorf("MoE layer pattern %q: no closing \"]\"", s)
	}
	parts := strings.Split(s[1:len(s)-1], ",")
	if len(parts) != layers {
		return nil, fmt.Errorf("MoE layer pattern %q has %d entries for %d transformer layers", s, len(parts), layers)
	}
	for i, p := range parts {
		switch strings.TrimSpace(p) {
		case "1":
			out[i] = true
		case "0":
		default:
			return nil, fmt.Errorf("MoE layer pattern %q: entry %d is %q, not 0 or 1", s, i+1, strings.TrimSpace(p))
		}
	}
	return out, nil
}

// LayoutOfSplit is the layout of a split given as its stages' layer names
// in pipeline order (a partition's, named as Megatron-Core's kinds:
// partition.MegatronSymbol) on pp ranks, checked as ParseLayout checks a
// layout.
func LayoutOfSplit(names [][]string, pp int) (*Layout, error) {
	devices := make([]int, len(names))
	for i := range devices {
		devices[i] = i % max(pp, 1)
	}
	ml, err := partition.Megatron(names, devices, pp)
	if err != nil {
		return nil, err
	}
	return ParseLayout(ml.Layout, LayoutOptions{PP: pp})
}
