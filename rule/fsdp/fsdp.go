// Package fsdp is the rule of pipeline stages sharded over their
// data-parallel group (FSDP inside the pipeline, as PyTorch's pipelining
// lowers it): before a sharded stage computes, its parameters are
// gathered (UNSHARD: an all-gather that takes time on the rank's
// collective stream and memory until RESHARD releases it); after the
// stage's last weight gradient its gradients are reduced (REDUCE_GRAD);
// at most MaxActive stages hold gathered parameters at once on a rank.
//
// The package has the hooks of a rule: Rule (registered in rules.All:
// the verifier's check of a schedule whose spec shards stages, each
// violation naming its rank and stage; what it is not combined with),
// Bound (what the rule adds to the lower bounds), TimeActions (the
// compaction step: when the actions run and how long each compute waits
// for its gather; package fsdpplan re-times the computes by it) and
// Windows (PyTorch's placement rule). It has no solver encoding: where
// the actions go is a pass over a verified compute schedule (package
// fsdpplan's Search), no worse than PyTorch's own placements by
// construction.
//
// The timing model, the same for every placement compared: the FSDP
// actions of a rank sit in gaps between its computes (gap j: just before
// its j-th compute in start order). They take effect when the rank's
// previous compute ends (time 0 in gap 0). UNSHARD and REDUCE_GRAD run
// one at a time on the rank's collective stream, in the rank's order;
// UNSHARD allocates the stage's gathered parameters when it starts;
// RESHARD frees them at once; a compute of a sharded stage starts no
// earlier than its gather ends. The collective stream is the rank's
// data-parallel link, apart from the pipeline's own links.
package fsdp

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/internal/strictjson"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Name is the rule's name in messages.
const Name = "fsdp"

// Per says how often a sharded stage gathers its parameters.
type Per string

const (
	// PerIteration: once before the stage's first compute of an
	// iteration; the gathered parameters may serve every micro-batch
	// until released (PyTorch's lowering).
	PerIteration Per = "iteration"
	// PerMicroBatch: a gather serves one compute only; the next compute
	// of the stage needs a gather of its own (FSDP resharding after
	// every forward and backward).
	PerMicroBatch Per = "micro-batch"
)

// Stage is one sharded pipeline stage (spec's ShardedStage): the ID of
// its forward block (the blocks that train it belong to the stage too),
// the memory of its gathered parameters while held (beyond what the
// blocks count), and the times of its all-gather and of its gradients'
// reduction (≥ 0).
type Stage = spec.ShardedStage

// Model is the rule as the user states it.
type Model struct {
	Stages []Stage
	// MaxActive is max_active_stages: at most this many stages hold
	// gathered parameters at once on a rank (≥ 1).
	MaxActive int
	Per       Per
}

// Limits of a model file's numbers.
const (
	MaxValue  = 1 << 30
	MaxStages = 1 << 16
)

// Check says what is wrong with the model on its own (before a
// placement), or nil.
func (m Model) Check() error {
	if m.MaxActive < 1 || m.MaxActive > MaxStages {
		return fmt.Errorf("max_active_stages must be 1..%d, got %d", MaxStages, m.MaxActive)
	}
	if m.Per != PerIteration && m.Per != PerMicroBatch {
		return fmt.Errorf("gather must be %q or %q, got %q", PerIteration, PerMicroBatch, m.Per)
	}
	if len(m.Stages) == 0 {
		return errors.New("no sharded stages")
	}
	seen := map[string]bool{}
	for i, s := range m.Stages {
		switch {
		case s.Forward == "":
			return fmt.Errorf("stage %d: no forward block", i)
		case seen[s.Forward]:
			return fmt.Errorf("stage %d: forward block %q named twice", i, s.Forward)
		case s.Params < 0 || s.Params > MaxValue || s.Gather < 0 || s.Gather > MaxValue || s.Reduce < 0 || s.Reduce > MaxValue:
			return fmt.Errorf("stage %d (%s): params, gather_time and reduce_time must be 0..%d", i, s.Forward, MaxValue)
		}
		seen[s.Forward] = true
	}
	return nil
}

// Read reads a model file: an object with "max_active_stages", "gather"
// ("iteration" or "micro-batch", default iteration) and either "stages"
// (one object per sharded stage: "forward", "params", "gather_time",
// "reduce_time") or "every_stage" (one such object without "forward":
// every forward block of the placement given to Resolve). An every_stage
// model has Stages nil and Every set: Resolve fills the stages in.
func Read(data []byte) (*File, error) {
	raw, err := strictjson.Top(data, "FSDP object")
	if err != nil {
		return nil, err
	}
	f := &File{Model: Model{Per: PerIteration}}
	var per string
	stage := func(s *Stage, named bool) func(json.RawMessage) error {
		return func(r json.RawMessage) error {
			fields := []strictjson.Field{
				{Name: "params", Required: true, Decode: func(r json.RawMessage) error { return strictjson.Int(r, &s.Params) }},
				{Name: "gather_time", Required: true, Decode: func(r json.RawMessage) error { return strictjson.Int(r, &s.Gather) }},
				{Name: "reduce_time", Decode: func(r json.RawMessage) error { return strictjson.Int(r, &s.Reduce) }},
			}
			if named {
				fields = append(fields, strictjson.Field{Name: "forward", Required: true, Decode: func(r json.RawMessage) error { return strictjson.String(r, &s.Forward) }})
			}
			return strictjson.Object(r, fields)
		}
	}
	err = strictjson.Object(raw, []strictjson.Field{
		{Name: "max_active_stages", Required: true, Decode: func(r json.RawMessage) error { return strictjson.Int(r, &f.Model.MaxActive) }},
		{Name: "gather", Decode: func(r json.RawMessage) error { return strictjson.String(r, &per) }},
		{Name: "stages", Decode: func(r json.RawMessage) error {
			var items []json.RawMessage
			if err := strictjson.Array(r, &items); err != nil {
				return err
			}
			if len(items) > MaxStages {
				return fmt.Errorf("more than %d stages", MaxStages)
			}
			f.Model.Stages = make([]Stage, len(items))
			for i, it := range items {
				if err := stage(&f.Model.Stages[i], true)(it); err != nil {
					return fmt.Errorf("stage %d: %w", i, err)
				}
			}
			return nil
		}},
		{Name: "every_stage", Decode: func(r json.RawMessage) error {
			f.Every = &Stage{}
			return stage(f.Every, false)(r)
		}},
	})
	if err != nil {
		return nil, err
	}
	if per != "" {
		f.Model.Per = Per(per)
	}
	if (f.Every == nil) == (f.Model.Stages == nil) {
		return nil, errors.New(`give one of "stages" and "every_stage"`)
	}
	if f.Every != nil {
		chk := f.Model
		chk.Stages = []Stage{*f.Every}
		chk.Stages[0].Forward = "every"
		return f, chk.Check()
	}
	return f, f.Model.Check()
}

// File is a model file as read: the model, or its every_stage costs to
// be given to each forward block of a placement (Resolve).
type File struct {
	Model Model
	Every *Stage
}

// For is the file's model on placement p: with every_stage, one stage per
// forward block of p (in block order).
func (f *File) For(p *placement.Placement) Model {
	if f.Every == nil {
		return f.Model
	}
	m := f.Model
	m.Stages = nil
	for _, b := range p.Blocks {
		if in, _ := b.Kind.Info(); !in.Gradient {
			s := *f.Every
			s.Forward = b.ID
			m.Stages = append(m.Stages, s)
		}
	}
	return m
}

// rules is a model resolved against a placement.
type rules struct {
	m       Model
	p       *placement.Placement
	stageOf []int // block → stage, -1 for blocks of no sharded stage
	rank    []int // stage → device
	weight  []bool
}

// Excludes names what the rule cannot be combined with in s, or nil: no
// offload or recompute decisions (their memory timing is their own), no
// latency budget, no overlapped pairs (an FSDP action between the two
// computes of a pair has no place in PyTorch's CSV). Every stage's blocks
// on one device is Resolve's to check.
func Excludes(s *schedule.Schedule) error {
	switch {
	case s.Latency > 0:
		return errors.New("fsdp: not with a latency budget")
	case len(s.Decisions) > 0:
		return errors.New("fsdp: not with offload or recompute decisions")
	case len(s.Pairs) > 0:
		return errors.New("fsdp: not with overlapped forward and backward pairs")
	}
	return nil
}

func resolve(m Model, p *placement.Placement) (*rules, error) {
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("fsdp: %w", err)
	}
	if p == nil {
		return nil, errors.New("fsdp: no placement")
	}
	r := &rules{m: m, p: p, stageOf: make([]int, p.K()), rank: make([]int, len(m.Stages)), weight: make([]bool, p.K())}
	for i := range r.stageOf {
		r.stageOf[i] = -1
	}
	for i, s := range m.Stages {
		b := p.Index(s.Forward)
		if b < 0 {
			return nil, fmt.Errorf("fsdp: stage %d: no block %q in placement %q", i, s.Forward, p.Name)
		}
		if in, _ := p.Blocks[b].Kind.Info(); in.Gradient {
			return nil, fmt.Errorf("fsdp: stage %d: block %q is a %s block, not a forward", i, s.Forward, p.Blocks[b].Kind)
		}
		if len(p.Blocks[b].Devices) != 1 {
			return nil, fmt.Errorf("fsdp: stage %d: block %q runs on a device group: a sharded stage is on one rank", i, s.Forward)
		}
		r.stageOf[b], r.rank[i] = i, p.Blocks[b].Devices[0]
	}
	for i, f := range p.Pairs() {
		if f >= 0 && r.stageOf[f] >= 0 {
			r.stageOf[i] = r.stageOf[f]
			in, _ := p.Blocks[i].Kind.Info()
			r.weight[i] = in.WeightGradient
			if len(p.Blocks[i].Devices) != 1 || p.Blocks[i].Devices[0] != r.rank[r.stageOf[f]] {
				return nil, fmt.Errorf("fsdp: block %q trains stage %q on another device", p.Blocks[i].ID, p.Blocks[f].ID)
			}
		}
	}
	return r, nil
}

// stageName names stage i in messages.
func (r *rules) stageName(i int) string {
	return fmt.Sprintf("stage %d (%s)", i, r.m.Stages[i].Forward)
}

// Kind is an FSDP action, named as PyTorch's CSV names it.
type Kind string

const (
	Unshard    Kind = "UNSHARD"
	Reshard    Kind = "RESHARD"
	ReduceGrad Kind = "REDUCE_GRAD"
)

// Op is one FSDP action of a rank: Kind of Stage (an index of the
// model's stages) in gap Gap (just before the rank's Gap-th compute in
// start order; the number of its computes: after the last). Start is
// when it starts (UNSHARD, REDUCE_GRAD: on the collective stream;
// RESHARD: when the memory is freed); End when it ends.
type Op struct {
	Kind       Kind
	Stage, Gap int
	Start, End int
}

// Plan is every rank's FSDP actions in order (gaps never decreasing).
type Plan struct {
	Ranks [][]Op
}

// Violation is one breach of the rule, naming its rank and stage.
type Violation struct {
	Rank, Stage int
	Text        string
}

// orders is every device's computes in start order.
func orders(s *schedule.Schedule) [][]schedule.Ref { return schedule.Orders(s) }

// ends is every device's compute ends in order: a gap's effect time is
// the previous compute's end.
func gapTimes(s *schedule.Schedule, ord [][]schedule.Ref) [][]int {
	start := map[schedule.Ref]int{}
	for _, in := range s.Instances {
		start[in.Ref()] = in.Start
	}
	dur := pairedDur(s)
	out := make([][]int, len(ord))
	for d, o := range ord {
		out[d] = make([]int, len(o)+1)
		end := 0
		for j, r := range o {
			out[d][j] = end
			end = max(end, start[r]+dur(r))
		}
		out[d][len(o)] = end
	}
	return out
}

// pairedDur is how long an instance occupies its device: an overlapped
// pair's time for both of its instances.
func pairedDur(s *schedule.Schedule) func(schedule.Ref) int {
	pt := map[schedule.Ref]int{}
	if len(s.Pairs) > 0 {
		_, times := s.Placement.OverlapGroups()
		groups, _ := s.Placement.OverlapGroups()
		for _, q := range s.Pairs {
			t := 0
			for g, blocks := range groups {
				if slices.Contains(blocks, q.Forward.Block) && slices.Contains(blocks, q.Backward.Block) {
					t = times[g]
				}
			}
			if t > 0 {
				pt[q.Forward], pt[q.Backward] = t, t
			}
		}
	}
	return func(r schedule.Ref) int {
		if t, ok := pt[r]; ok {
			return t
		}
		return s.Placement.Blocks[r.Block].Time
	}
}

// violations are the rule's breaches in s (whose computes are checked
// on their own by the verifier) of plan under r: on every rank, in
// order, each compute of a sharded stage runs while the stage's
// parameters are gathered (an UNSHARD in an earlier or the same gap, not
// since released; with PerMicroBatch one gather per compute) and starts
// no earlier than its gather ends; at most MaxActive stages are gathered
// at once; UNSHARD and REDUCE_GRAD start no earlier than their gap, last
// their times and run one at a time; each sharded stage reduces its
// gradients exactly once, after its last weight gradient, and is
// released by the end; the peaks, gathered parameters counted, are
// within the budgets.
func violations(s *schedule.Schedule, r *rules, plan Plan) []Violation {
	ord := orders(s)
	var vs []Violation
	if len(plan.Ranks) != len(ord) {
		return append(vs, Violation{Rank: -1, Stage: -1, Text: fmt.Sprintf("FSDP actions for %d ranks, the schedule has %d devices", len(plan.Ranks), len(ord))})
	}
	add := func(rank, stage int, format string, args ...any) {
		vs = append(vs, Violation{Rank: rank, Stage: stage, Text: fmt.Sprintf("rank %d: ", rank) + fmt.Sprintf(format, args...)})
	}
	start := map[schedule.Ref]int{}
	for _, in := range s.Instances {
		start[in.Ref()] = in.Start
	}
	gaps := gapTimes(s, ord)
	weights := make([]int, len(r.m.Stages)) // weight-gradient instances per stage
	for b, st := range r.stageOf {
		if st >= 0 && r.weight[b] {
			weights[st] += s.MicroBatches
		}
	}
	for d, ops := range plan.Ranks {
		gathered := map[int]int{} // stage → gather end
		used := map[int]bool{}    // PerMicroBatch: the gather has served its compute
		reduced := map[int]bool{}
		done := make([]int, len(r.m.Stages))
		comm, k := 0, 0
		for j := 0; j <= len(ord[d]); j++ {
			for ; k < len(ops) && ops[k].Gap <= j; k++ {
				op := ops[k]
				if op.Gap < j || op.Gap < 0 {
					add(d, op.Stage, "%s of stage %d out of order (gap %d after gap %d)", op.Kind, op.Stage, op.Gap, j)
					continue
				}
				if op.Stage < 0 || op.Stage >= len(r.m.Stages) {
					add(d, op.Stage, "%s of stage %d: no such sharded stage", op.Kind, op.Stage)
					continue
				}
				name := r.stageName(op.Stage)
				if r.rank[op.Stage] != d {
					add(d, op.Stage, "%s of %s, which runs on rank %d", op.Kind, name, r.rank[op.Stage])
					continue
				}
				if op.Start < gaps[d][j] {
					add(d, op.Stage, "%s of %s starts at %d, before its place (after the compute ending at %d)", op.Kind, name, op.Start, gaps[d][j])
				}
				switch op.Kind {
				case Unshard, ReduceGrad:
					want := r.m.Stages[op.Stage].Gather
					if op.Kind == ReduceGrad {
						want = r.m.Stages[op.Stage].Reduce
					}
					if op.Start < comm {
						add(d, op.Stage, "%s of %s starts at %d while the collective stream is busy until %d", op.Kind, name, op.Start, comm)
					}
					if op.End != op.Start+want {
						add(d, op.Stage, "%s of %s ends at %d, want %d", op.Kind, name, op.End, op.Start+want)
					}
					comm = max(comm, op.End)
				case Reshard:
				default:
					add(d, op.Stage, "unknown action %q", op.Kind)
					continue
				}
				switch op.Kind {
				case Unshard:
					if _, ok := gathered[op.Stage]; ok {
						add(d, op.Stage, "UNSHARD of %s, already gathered", name)
					}
					gathered[op.Stage], used[op.Stage] = op.End, false
					if len(gathered) > r.m.MaxActive {
						add(d, op.Stage, "%d stages hold gathered parameters after UNSHARD of %s, more than max_active_stages %d", len(gathered), name, r.m.MaxActive)
					}
				case Reshard:
					if _, ok := gathered[op.Stage]; !ok {
						add(d, op.Stage, "RESHARD of %s, which is not gathered", name)
					}
					delete(gathered, op.Stage)
				case ReduceGrad:
					if reduced[op.Stage] {
						add(d, op.Stage, "REDUCE_GRAD of %s twice", name)
					}
					if done[op.Stage] < weights[op.Stage] {
						add(d, op.Stage, "REDUCE_GRAD of %s after %d of its %d weight gradients", name, done[op.Stage], weights[op.Stage])
					}
					reduced[op.Stage] = true
				}
			}
			if j == len(ord[d]) {
				break
			}
			ref := ord[d][j]
			st := r.stageOf[ref.Block]
			if st < 0 {
				continue
			}
			name := r.stageName(st)
			what := fmt.Sprintf("%s^%d (compute %d)", s.Placement.Blocks[ref.Block].ID, ref.Micro, j)
			end, ok := gathered[st]
			switch {
			case !ok:
				add(d, st, "%s runs on %s, whose parameters are not gathered", what, name)
			case r.m.Per == PerMicroBatch && used[st]:
				add(d, st, "%s runs on %s with a gather that served another compute (gather per micro-batch)", what, name)
			case start[ref] < end:
				add(d, st, "%s starts at %d, before the gather of %s ends at %d", what, start[ref], name, end)
			}
			used[st] = true
			if r.weight[ref.Block] {
				done[st]++
			}
		}
		for i := k; i < len(ops); i++ {
			add(d, ops[i].Stage, "%s of stage %d in gap %d, beyond the rank's %d computes", ops[i].Kind, ops[i].Stage, ops[i].Gap, len(ord[d]))
		}
		for st := range r.m.Stages {
			if r.rank[st] != d {
				continue
			}
			if _, ok := gathered[st]; ok {
				add(d, st, "%s is still gathered at the end (no RESHARD)", r.stageName(st))
			}
			if !reduced[st] {
				add(d, st, "%s never reduces its gradients (no REDUCE_GRAD)", r.stageName(st))
			}
		}
	}
	if len(vs) == 0 {
		budgets := s.Budgets()
		for d, pk := range peaks(s, r, plan) {
			if d < len(budgets) && budgets[d] > 0 && pk > budgets[d] {
				vs = append(vs, Violation{Rank: d, Stage: -1, Text: fmt.Sprintf("rank %d: peak memory %d with gathered parameters exceeds the budget %d", d, pk, budgets[d])})
			}
		}
	}
	return vs
}

// peaks is every device's peak memory: the schedule's changes and the
// gathered parameters (held from their UNSHARD's start to their
// RESHARD; at equal times a release counts first, then a gather, then
// the computes' changes).
func peaks(s *schedule.Schedule, r *rules, plan Plan) []int {
	type change struct{ time, order, delta int }
	trace := schedule.MemoryChanges(s, schedule.DeviceInstances(s, nil), nil)
	out := make([]int, len(trace))
	for d, list := range trace {
		var cs []change
		for _, c := range list { // in the verifier's order
			cs = append(cs, change{c.Time, 2, c.Delta})
		}
		if d < len(plan.Ranks) {
			for _, op := range plan.Ranks[d] {
				switch op.Kind {
				case Unshard:
					cs = append(cs, change{op.Start, 1, r.m.Stages[op.Stage].Params})
				case Reshard:
					cs = append(cs, change{op.Start, 0, -r.m.Stages[op.Stage].Params})
				}
			}
		}
		slices.SortStableFunc(cs, func(a, b change) int { return cmp.Or(cmp.Compare(a.time, b.time), cmp.Compare(a.order, b.order)) })
		sum := 0
		for _, c := range cs {
			sum += c.delta
			out[d] = max(out[d], sum)
		}
	}
	return out
}

// Lookahead is PyTorch's unshard_lookahead: how many of the upcoming
// distinct stages may begin gathering (the issue distance), per rank.
type Lookahead struct {
	// Policy is "full" (max_active_stages on every rank), "auto"
	// (min(rank + 2, max_active_stages)) or "ranks" (Ranks).
	Policy string
	Ranks  []int
}

// ParseLookahead reads "full", "auto" or a comma-separated list of
// positive distances, one per rank.
func ParseLookahead(s string) (Lookahead, error) {
	switch s {
	case "full", "auto":
		return Lookahead{Policy: s}, nil
	}
	var l Lookahead
	l.Policy = "ranks"
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > MaxStages {
			return Lookahead{}, fmt.Errorf("want full, auto or a list of distances 1..%d (one per rank), got %q", MaxStages, s)
		}
		l.Ranks = append(l.Ranks, n)
	}
	return l, nil
}

// Distance is the issue distance on rank d under max_active_stages m.
func (l Lookahead) Distance(d, m int) int {
	switch l.Policy {
	case "auto":
		return min(d+2, m)
	case "ranks":
		if d < len(l.Ranks) {
			return min(l.Ranks[d], m)
		}
	}
	return m
}

// PyTorch places the actions as PyTorch's lowering does
// (_add_unshard_reshard, _add_reduce_grad): before each compute of a
// rank, the next `window` distinct sharded stages it computes are the
// ones to hold; any other held stage is released (in the order they were
// gathered), then those of the first `issue` of them not held are gathered
// (in order of use); after all computes the held stages are released.
// Each stage reduces its gradients right after its last weight gradient.
// With PerMicroBatch every compute of a sharded stage is its own use: a
// stage is released after each compute and gathered again for the next.
// window[d] and issue[d] are per rank (issue ≤ window).
func placeWindows(s *schedule.Schedule, r *rules, window, issue []int) Plan {
	ord := orders(s)
	plan := Plan{Ranks: make([][]Op, len(ord))}
	weights := make([]int, len(r.m.Stages))
	for b, st := range r.stageOf {
		if st >= 0 && r.weight[b] {
			weights[st] += s.MicroBatches
		}
	}
	for d, o := range ord {
		var held []int // in gather order
		done := make([]int, len(r.m.Stages))
		var ops []Op
		for j, ref := range o {
			up := upcoming(o[j:], r, window[d])
			var keep []int
			for _, st := range held {
				if slices.Contains(up, st) {
					keep = append(keep, st)
				} else {
					ops = append(ops, Op{Kind: Reshard, Stage: st, Gap: j})
				}
			}
			held = keep
			for _, st := range up[:min(issue[d], len(up))] {
				if !slices.Contains(held, st) {
					held = append(held, st)
					ops = append(ops, Op{Kind: Unshard, Stage: st, Gap: j})
				}
			}
			st := r.stageOf[ref.Block]
			if st < 0 {
				continue
			}
			if r.m.Per == PerMicroBatch {
				// This compute uses its gather up; the next use of
				// the stage gathers again.
				held = slices.DeleteFunc(held, func(x int) bool { return x == st })
				ops = append(ops, Op{Kind: Reshard, Stage: st, Gap: j + 1})
			}
			if r.weight[ref.Block] {
				if done[st]++; done[st] == weights[st] {
					ops = append(ops, Op{Kind: ReduceGrad, Stage: st, Gap: j + 1})
				}
			}
		}
		for _, st := range held {
			ops = append(ops, Op{Kind: Reshard, Stage: st, Gap: len(o)})
		}
		// Actions placed after compute j (Gap j+1) come before the
		// ones the next compute's turn adds: order by gap, stably.
		slices.SortStableFunc(ops, func(a, b Op) int { return cmp.Compare(a.Gap, b.Gap) })
		plan.Ranks[d] = ops
	}
	return plan
}

// upcoming is the first n distinct sharded stages of the computes o.
func upcoming(o []schedule.Ref, r *rules, n int) []int {
	var up []int
	for _, ref := range o {
		if len(up) == n {
			break
		}
		st := r.stageOf[ref.Block]
		if st < 0 || slices.Contains(up, st) {
			continue
		}
		up = append(up, st)
	}
	return up
}

// timeOps times the plan's actions (in place) on the computes of cur and
// returns, for every compute of a sharded stage, when its gather ends.
func (r *rules) timeOps(cur *schedule.Schedule, ord [][]schedule.Ref, plan Plan) (map[schedule.Ref]int, error) {
	gaps := gapTimes(cur, ord)
	next := map[schedule.Ref]int{}
	for d, ops := range plan.Ranks {
		comm, k := 0, 0
		gather := map[int]int{}
		for j := 0; j <= len(ord[d]); j++ {
			for ; k < len(ops) && ops[k].Gap <= j; k++ {
				op := &ops[k]
				if op.Stage < 0 || op.Stage >= len(r.m.Stages) {
					return nil, fmt.Errorf("fsdp: rank %d: %s of stage %d: no such sharded stage", d, op.Kind, op.Stage)
				}
				op.Start = gaps[d][j]
				switch op.Kind {
				case Unshard:
					op.Start = max(op.Start, comm)
					op.End = op.Start + r.m.Stages[op.Stage].Gather
					comm, gather[op.Stage] = op.End, op.End
				case ReduceGrad:
					op.Start = max(op.Start, comm)
					op.End = op.Start + r.m.Stages[op.Stage].Reduce
					comm = op.End
				default:
					op.End = op.Start
				}
			}
			if j < len(ord[d]) {
				if st := r.stageOf[ord[d][j].Block]; st >= 0 {
					if t, ok := gather[st]; ok && t > 0 {
						next[ord[d][j]] = t
					}
				}
			}
		}
	}
	return next, nil
}
