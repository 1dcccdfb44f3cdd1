package torchcsv

import (
	"fmt"
	"strings"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Stage is one stage of a chain: one model part on one device, its
// forward block and the blocks that train it (block indices of the
// placement, -1 where absent): a backward block, or an input and a weight
// block.
type Stage struct {
	Device                           int
	Forward, Backward, Input, Weight int
}

// Chain returns the stages of p in chain order, their index being the
// global stage id: the forward blocks must form one chain (each feeds the
// next), every block must run on one device, and every stage must be
// trained by a backward block, or by an input and a weight block, paired
// with its forward (placement.Placement.Pairs). The dependencies must be
// those PyTorch's runtime itself enforces: forward to the next forward,
// the last forward to its backward (or input), each backward (or input) to
// the previous stage's, each input to its weight, and a forward to any
// block of its own stage. Anything else is an error that says why it is
// no chain of stages: blocks on device groups, branches, two chains
// (DualPipe: one pipeline per direction), inference, dependencies the
// runtime would not wait for.
func Chain(p *placement.Placement) ([]Stage, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	for _, b := range p.Blocks {
		if len(b.Devices) != 1 {
			return nil, fmt.Errorf("block %q runs on devices %v, a group: PyTorch's pipelining runs each stage on one rank", b.ID, b.Devices)
		}
	}
	isGrad := func(i int) bool { return kindInfo(p.Blocks[i].Kind).Gradient }
	next := make([]int, p.K()) // the forward a forward feeds, or -1
	npred := make([]int, p.K())
	for i := range next {
		next[i] = -1
	}
	for _, d := range p.Deps {
		switch {
		case isGrad(d.From) && !isGrad(d.To):
			return nil, fmt.Errorf("dependency %s → %s runs from a gradient block to a forward block: no chain of stages", p.Blocks[d.From].ID, p.Blocks[d.To].ID)
		case isGrad(d.From) || isGrad(d.To):
			continue
		}
		if next[d.From] >= 0 {
			return nil, fmt.Errorf("forward %q feeds two forward blocks (%q and %q), a branch: PyTorch's pipelining runs a chain of stages",
				p.Blocks[d.From].ID, p.Blocks[next[d.From]].ID, p.Blocks[d.To].ID)
		}
		next[d.From] = d.To
		if npred[d.To]++; npred[d.To] > 1 {
			return nil, fmt.Errorf("forward %q has two forward inputs, a join: PyTorch's pipelining runs a chain of stages", p.Blocks[d.To].ID)
		}
	}
	var heads []string
	head := -1
	for i, b := range p.Blocks {
		if !isGrad(i) && npred[i] == 0 {
			heads = append(heads, b.ID)
			head = i
		}
	}
	switch {
	case len(heads) == 0:
		return nil, fmt.Errorf("no forward blocks")
	case len(heads) > 1:
		return nil, fmt.Errorf("the forward blocks form %d chains (starting at %s): PyTorch's pipelining runs every micro-batch through one chain of stages (DualPipe runs one pipeline per direction; its V form exports)",
			len(heads), strings.Join(heads, ", "))
	}
	var stages []Stage
	stageOf := make([]int, p.K()) // of every block
	for i := range stageOf {
		stageOf[i] = -1
	}
	for f := head; f >= 0; f = next[f] {
		stageOf[f] = len(stages)
		stages = append(stages, Stage{Device: p.Blocks[f].Devices[0], Forward: f, Backward: -1, Input: -1, Weight: -1})
	}
	pair := p.Pairs()
	for i, b := range p.Blocks {
		if !isGrad(i) {
			continue
		}
		if pair[i] < 0 {
			return nil, fmt.Errorf("%s block %q differentiates no forward block on its device", b.Kind, b.ID)
		}
		st := &stages[stageOf[pair[i]]]
		stageOf[i] = stageOf[pair[i]]
		k := kindInfo(b.Kind)
		slot := &st.Weight
		switch {
		case k.InputGradient && k.WeightGradient:
			slot = &st.Backward
		case k.InputGradient:
			slot = &st.Input
		}
		*slot = i // Pairs gives each forward one block of each gradient
	}
	for s, st := range stages {
		f := p.Blocks[st.Forward].ID
		switch {
		case st.Backward < 0 && st.Input < 0 && st.Weight < 0:
			return nil, fmt.Errorf("stage %d (forward %q) has no backward: PyTorch's pipelining schedules train every stage (inference placements do not export)", s, f)
		case st.Backward >= 0 && (st.Input >= 0 || st.Weight >= 0):
			return nil, fmt.Errorf("stage %d (forward %q) has a backward and a split backward", s, f)
		case st.Backward < 0 && (st.Input < 0 || st.Weight < 0):
			return nil, fmt.Errorf("stage %d (forward %q) has only half of a split backward: want an input and a weight block", s, f)
		}
	}
	// The dependencies PyTorch's runtime enforces, and the ones it allows
	// (a forward before its own stage's gradients: true on one rank).
	grad := func(s int) int { // the block that sends the gradient on
		if stages[s].Backward >= 0 {
			return stages[s].Backward
		}
		return stages[s].Input
	}
	required := map[placement.Dep]bool{}
	for s := range stages {
		if s+1 < len(stages) {
			required[placement.Dep{From: stages[s].Forward, To: stages[s+1].Forward}] = true
			required[placement.Dep{From: grad(s + 1), To: grad(s)}] = true
		}
		if stages[s].Input >= 0 {
			required[placement.Dep{From: stages[s].Input, To: stages[s].Weight}] = true
		}
	}
	last := len(stages) - 1
	required[placement.Dep{From: stages[last].Forward, To: grad(last)}] = true
	for _, d := range p.Deps {
		own := !isGrad(d.From) && isGrad(d.To) && stageOf[d.From] == stageOf[d.To]
		if !required[d] && !own {
			return nil, fmt.Errorf("dependency %s → %s is not one of a chain of stages: PyTorch's runtime would not wait for it", p.Blocks[d.From].ID, p.Blocks[d.To].ID)
		}
	}
	have := map[placement.Dep]bool{}
	for _, d := range p.Deps {
		have[d] = true
	}
	for s := range stages { // in stage order, for a stable message
		for _, d := range []placement.Dep{{From: grad(min(s+1, last)), To: grad(s)}, {From: stages[s].Input, To: stages[s].Weight}} {
			if d.From != d.To && required[d] && !have[d] {
				return nil, fmt.Errorf("no dependency %s → %s: in a chain of stages each gradient waits for the next stage's", p.Blocks[d.From].ID, p.Blocks[d.To].ID)
			}
		}
	}
	if !have[placement.Dep{From: stages[last].Forward, To: grad(last)}] {
		return nil, fmt.Errorf("no dependency %s → %s: the last stage's backward waits for its forward", p.Blocks[stages[last].Forward].ID, p.Blocks[grad(last)].ID)
	}
	return stages, nil
}

// kindInfo is the table's entry for k; a valid placement has known kinds.
func kindInfo(k placement.Kind) placement.KindInfo {
	in, _ := k.Info()
	return in
}

// Export writes a verified schedule of a chain of stages as a table: row
// d holds device d's instances in the order it runs them (by start time),
// each as the action of its stage. The table passes Validate; an error
// says why the placement is no chain of stages or the schedule is invalid.
// A schedule that offloads or recomputes activations is refused:
// PyTorch's format has no action for either.
func Export(s *schedule.Schedule) (*Table, error) {
	if err := verify.Schedule(s); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	if off, rec := s.Count(); off+rec > 0 {
		return nil, fmt.Errorf("the schedule offloads %d and recomputes %d activations, and PyTorch's CSV has no action for either (run it with tessel gen's workers)", off, rec)
	}
	stages, err := Chain(s.Placement)
	if err != nil {
		return nil, err
	}
	act := actions(s.Placement, stages)
	t := &Table{}
	for _, order := range schedule.Orders(s) {
		row := make([]Action, len(order))
		for i, r := range order {
			row[i] = act[r.Block]
			row[i].Micro = r.Micro
		}
		t.Rows = append(t.Rows, row)
	}
	if len(s.Pairs) > 0 {
		if err := exportPairs(s, t); err != nil {
			return nil, err
		}
	}
	if _, err := Validate(t); err != nil {
		// Chain admits only what the validator accepts: a bug if not.
		return nil, fmt.Errorf("exported table fails PyTorch's rules: %w", err)
	}
	return t, nil
}

// actions returns, for every block of a chain, its action without the
// micro-batch.
func actions(p *placement.Placement, stages []Stage) []Action {
	act := make([]Action, p.K())
	for s, st := range stages {
		for _, b := range []int{st.Forward, st.Backward, st.Input, st.Weight} {
			if b >= 0 {
				act[b] = Action{Stage: s, Kind: p.Blocks[b].Kind}
			}
		}
	}
	return act
}

// ImportOptions are what a table does not say: block times and memory
// (a placement's), the memory budget and a name.
type ImportOptions struct {
	Name string
	// Times of each stage's blocks, ≥ 1.
	ForwardTime, BackwardTime, InputTime, WeightTime int
	// Memory of each stage's blocks (negative frees).
	ForwardMemory, BackwardMemory, InputMemory, WeightMemory int
	// Memory is the per-device budget of the schedule (0: unlimited).
	Memory int
	// Overlap is the placement's rule of overlapped forward and backward
	// (placement's Overlap) for a table that keeps OVERLAP_F_B actions as
	// pairs (Table.Overlaps); nil otherwise.
	Overlap *placement.Overlap
}

// Check says which time or memory is out of the placement's range
// (times 1..placement.MaxTime, memories within ±placement.MaxMemory),
// naming it as tessel import's flag does, or returns nil. The budget
// (Memory) is checked by the caller.
func (o ImportOptions) Check() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"forward-time", o.ForwardTime}, {"backward-time", o.BackwardTime}, {"input-time", o.InputTime}, {"weight-time", o.WeightTime}} {
		if f.v < 1 || f.v > placement.MaxTime {
			return fmt.Errorf("--%s must be in 1..%d, got %d", f.name, placement.MaxTime, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"forward-memory", o.ForwardMemory}, {"backward-memory", o.BackwardMemory}, {"input-memory", o.InputMemory}, {"weight-memory", o.WeightMemory}} {
		if f.v < -placement.MaxMemory || f.v > placement.MaxMemory {
			return fmt.Errorf("--%s must be in -%d..%d, got %d", f.name, placement.MaxMemory, placement.MaxMemory, f.v)
		}
	}
	return nil
}

// DefaultImportOptions: the zero-bubble papers' times (F = I = W = 1, so
// B = I + W = 2) and memory (+1 for a forward's activations, freed by the
// backward or, when split, by the weight gradient).
func DefaultImportOptions() ImportOptions {
	return ImportOptions{Name: "torch-csv", ForwardTime: 1, BackwardTime: 2, InputTime: 1, WeightTime: 1,
		ForwardMemory: 1, BackwardMemory: -1, InputMemory: 0, WeightMemory: -1}
}

// Import builds a placement and a verified schedule from a table:
//
//   - one device per row (rank), one stage per stage id, on the rank whose
//     row holds it;
//   - stage s is forward f<s>, and b<s> when its micro-batches run full
//     backwards (B), or i<s> and w<s> when they run input and weight
//     gradients (I, W); a stage that mixes both is an error (a placement
//     trains every micro-batch alike);
//   - the dependencies of a chain by stage id: f<s> → f<s+1>, the last
//     forward → its b or i, b or i of s+1 → b or i of s, i<s> → w<s>;
//   - times and memory from opt, the same for every stage;
//   - every rank's instances in the order of its row, each as early as
//     that order and the dependencies allow (compact.Compact).
//
// A table whose ranks' orders contradict the dependencies (PyTorch would
// wait forever) or whose memory exceeds opt.Memory is an error.
func Import(t *Table, opt ImportOptions) (*schedule.Schedule, error) {
	sum, err := Validate(t)
	if err != nil {
		return nil, err
	}
	if sum.Ranks > placement.MaxDevices {
		return nil, fmt.Errorf("%d ranks: at most %d", sum.Ranks, placement.MaxDevices)
	}
	if sum.MicroBatches > schedule.MaxMicroBatches {
		return nil, fmt.Errorf("%d micro-batches: at most %d", sum.MicroBatches, schedule.MaxMicroBatches)
	}
	for s, mixed := range sum.Mixed {
		if mixed {
			return nil, fmt.Errorf("stage %d runs full backwards (B) for some micro-batches and input and weight gradients (I, W) for others: a placement trains every micro-batch alike", s)
		}
	}
	p := &placement.Placement{Name: opt.Name, Devices: sum.Ranks}
	add := func(id string, k placement.Kind, dev, time, mem int) int {
		p.Blocks = append(p.Blocks, placement.Block{ID: id, Kind: k, Devices: []int{dev}, Time: time, Memory: mem})
		return len(p.Blocks) - 1
	}
	S := sum.Stages
	stages := make([]Stage, S)
	for s := range S {
		stages[s] = Stage{Device: sum.StageRank[s], Forward: add(fmt.Sprintf("f%d", s), placement.Forward, sum.StageRank[s], opt.ForwardTime, opt.ForwardMemory),
			Backward: -1, Input: -1, Weight: -1}
	}
	grad := make([]int, S)
	for s := S - 1; s >= 0; s-- {
		if sum.Split[s] {
			stages[s].Input = add(fmt.Sprintf("i%d", s), placement.Input, sum.StageRank[s], opt.InputTime, opt.InputMemory)
			grad[s] = stages[s].Input
		} else {
			stages[s].Backward = add(fmt.Sprintf("b%d", s), placement.Backward, sum.StageRank[s], opt.BackwardTime, opt.BackwardMemory)
			grad[s] = stages[s].Backward
		}
	}
	for s := S - 1; s >= 0; s-- {
		if sum.Split[s] {
			stages[s].Weight = add(fmt.Sprintf("w%d", s), placement.Weight, sum.StageRank[s], opt.WeightTime, opt.WeightMemory)
		}
	}
	for s := 0; s+1 < S; s++ {
		p.Deps = append(p.Deps, placement.Dep{From: stages[s].Forward, To: stages[s+1].Forward})
	}
	p.Deps = append(p.Deps, placement.Dep{From: stages[S-1].Forward, To: grad[S-1]})
	for s := S - 1; s > 0; s-- {
		p.Deps = append(p.Deps, placement.Dep{From: grad[s], To: grad[s-1]})
	}
	for s := S - 1; s >= 0; s-- {
		if sum.Split[s] {
			p.Deps = append(p.Deps, placement.Dep{From: stages[s].Input, To: stages[s].Weight})
		}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	block := map[Action]int{} // action without micro-batch → block
	for i, a := range actions(p, stages) {
		block[a] = i
	}
	orders := make([][]schedule.Ref, sum.Ranks)
	for r, row := range t.Rows {
		orders[r] = make([]schedule.Ref, len(row))
		for c, a := range row {
			orders[r][c] = schedule.Ref{Block: block[Action{Stage: a.Stage, Kind: a.Kind}], Micro: a.Micro}
		}
	}
	var pairs []schedule.Pair
	if len(t.Overlaps) > 0 {
		if opt.Overlap == nil {
			return nil, fmt.Errorf("the table keeps %d OVERLAP_F_B action(s) as overlapped pairs, but no overlap time is given", len(t.Overlaps))
		}
		p.Overlap = opt.Overlap
		if err := p.Validate(); err != nil {
			return nil, err
		}
		for _, o := range t.Overlaps {
			pairs = append(pairs, schedule.Pair{Forward: orders[o.Rank][o.At], Backward: orders[o.Rank][o.At+1]})
		}
	}
	cs, err := compact.Compact(spec.New(p, sum.MicroBatches), compact.Keep{Orders: orders, Pairs: pairs})
	if err != nil {
		return nil, fmt.Errorf("the ranks' orders cannot run (PyTorch would wait forever): %w", err)
	}
	ins := cs.Instances
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: sum.MicroBatches, Memory: opt.Memory}, Instances: ins, Pairs: pairs}
	if err := verify.Schedule(s); err != nil {
		return nil, err
	}
	return s, nil
}

// ImportText is the line tessel import prints about s, the schedule
// Import built from the file at path: ranks, stages (forward blocks),
// micro-batches, makespan, bubble rate, every rank's peak memory and the
// budget it was verified against.
func ImportText(path string, s *schedule.Schedule) string {
	m := schedule.Measure(s)
	stages := 0
	for _, b := range s.Placement.Blocks {
		if k, _ := b.Kind.Info(); !k.Gradient {
			stages++
		}
	}
	return fmt.Sprintf("imported %s: %d ranks, %d stages, %d micro-batches, makespan %d, bubble rate %.2f%%, peak memory %v (budget %s), verified\n",
		path, s.Placement.Devices, stages, s.MicroBatches, m.Makespan, 100*m.BubbleRate, textfmt.CommaInts(m.PeakMemory), textfmt.Budget(s.Memory))
}

// Stages is how many stages the table's actions name: one more than the
// largest stage id.
func (t *Table) Stages() int {
	stages := 0
	for _, row := range t.Rows {
		for _, a := range row {
			stages = max(stages, a.Stage+1)
		}
	}
	return stages
}

// RecomputedLayers is, per stage of p in chain order, the layers its
// forward block recomputes in every micro-batch under a per-stage policy
// (placement.Block.RecomputedLayers); nil where no stage recomputes any.
func RecomputedLayers(p *placement.Placement, stages []Stage) []int {
	ks := make([]int, len(stages))
	anyK := false
	for i, st := range stages {
		ks[i] = p.Blocks[st.Forward].RecomputedLayers
		anyK = anyK || ks[i] > 0
	}
	if !anyK {
		return nil
	}
	return ks
}
