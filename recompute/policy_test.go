package recompute

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/plan"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// llama is the Llama-7B-like profile split onto 8 devices of memory GB
// each.
func llama(t *testing.T, gb float64) *partition.Report {
	t.Helper()
	return split(t, "llama7b.json", 8, gb*1e9)
}

// split is the model file split onto devices of the given memory (0: the
// file's).
func split(t *testing.T, model string, devices int, memory float64) *partition.Report {
	t.Helper()
	g, err := partition.Load("../testdata/models/" + model)
	if err != nil {
		t.Fatal(err)
	}
	g.Accelerators = devices
	if memory > 0 {
		g.Memory = memory
	}
	pr, err := partition.Run(context.Background(), g, partition.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

func budgetsOf(t *testing.T, pr *partition.Report) ([]int, []partition.DeviceMemory) {
	t.Helper()
	mem, err := pr.Converted.Memory(pr.Split, nil)
	if err != nil {
		t.Fatal(err)
	}
	return partition.Budgets(mem), mem
}

func TestString(t *testing.T) {
	four := make([]Layer, 4)
	for _, tc := range []struct {
		ks   []int
		want string
	}{
		{[]int{0, 0}, "recompute nothing"},
		{[]int{3, 3, 3, 0}, "recompute 3 of 4 layers on stages 0-2"},
		{[]int{3, 2, 1, 1, 0}, "recompute 3 of 4 layers on stage 0, 2 of 4 on stage 1, 1 of 4 on stages 2-3"},
		{[]int{0, 4}, "recompute 4 of 4 layers on stage 1"},
	} {
		var p Policy
		for _, k := range tc.ks {
			p.Stages = append(p.Stages, Stage{Layers: four, Recompute: k})
		}
		if got := p.String(); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.ks, got, tc.want)
		}
		if p.Any() != (tc.want != "recompute nothing") {
			t.Errorf("%v: Any %v", tc.ks, p.Any())
		}
		u := p.Uniform()
		for i, s := range u.Stages {
			if s.Recompute != p.Max() {
				t.Errorf("%v: uniform stage %d recomputes %d, want %d", tc.ks, i, s.Recompute, p.Max())
			}
		}
		if !u.IsUniform() || p.IsUniform() != (tc.want == "recompute nothing") {
			t.Errorf("%v: uniform %v, %v", tc.ks, u.IsUniform(), p.IsUniform())
		}
	}
}

// Of lists every stage's recomputable layers (the embedding keeps all it
// has: no); Fit's k is, stage by stage, the least at which the micro-batches
// 1F1B keeps in flight there fit the device's budget, counted here in
// bytes against the device's memory; at 80 GB nothing is recomputed.
func TestFit(t *testing.T) {
	pr := llama(t, 24)
	pol, err := Of(pr)
	if err != nil {
		t.Fatal(err)
	}
	if len(pol.Stages) != 8 {
		t.Fatalf("%d stages", len(pol.Stages))
	}
	for i, s := range pol.Stages {
		for _, l := range s.Layers {
			if !strings.HasPrefix(l.Name, "layer") && l.Name != "head" || l.Checkpoint >= l.Activation || l.Forward <= 0 {
				t.Errorf("stage %d: layer %+v", i, l)
			}
		}
	}
	budgets, mem := budgetsOf(t, pr)
	const n = 32
	fit, err := Fit(pr.Converted, pol, budgets, n)
	if err != nil {
		t.Fatal(err)
	}
	unit := pr.Converted.MemoryUnit
	fits := func(st, k int) bool {
		s := fit.Stages[st]
		s.Recompute = k
		sb, _ := blocksOf(pr.Converted, st)
		kept := pr.Converted.Activation[sb.forward]
		for _, l := range s.Layers[:k] {
			kept -= l.Activation - l.Checkpoint
		}
		inflight := min(n, 8-st)
		need := float64(inflight)*math.Ceil(kept/unit-1e-9)*unit + math.Ceil(s.Reserve()/unit-1e-9)*unit
		d := pr.Converted.Placement.Blocks[sb.forward].Devices[0]
		return need <= float64(budgets[d])*unit && need <= mem[d].Free
	}
	for st, s := range fit.Stages {
		if s.Recompute < len(s.Layers) && !fits(st, s.Recompute) {
			t.Errorf("stage %d: %d layers recomputed do not fit", st, s.Recompute)
		}
		if s.Recompute > 0 && fits(st, s.Recompute-1) {
			t.Errorf("stage %d: %d recomputed, %d fit", st, s.Recompute, s.Recompute-1)
		}
	}
	if fit.Stages[0].Recompute == 0 || fit.Stages[7].Recompute != 0 {
		t.Errorf("at 24 GB: %v", fit)
	}
	big := llama(t, 80)
	b80, _ := budgetsOf(t, big)
	pol80, _ := Of(big)
	if f, _ := Fit(big.Converted, pol80, b80, n); f.Any() {
		t.Errorf("at 80 GB: %v", f)
	}
}

// Apply: a stage's forward keeps what its layers keep, in whole units, its
// freeing block frees as much, its gradient block runs the recomputed
// layers' forward again; no per-instance declaration is left.
func TestApply(t *testing.T) {
	pr := llama(t, 24)
	pol, _ := Of(pr)
	pol.Stages[0].Recompute, pol.Stages[3].Recompute = 4, 1
	cv, err := Apply(pr.Converted, pol)
	if err != nil {
		t.Fatal(err)
	}
	p, q := pr.Converted.Placement, cv.Placement
	if p.Blocks[0].RecomputedLayers != 0 || !p.Blocks[0].Recompute {
		t.Fatal("Apply changed the split's placement")
	}
	for st, s := range pol.Stages {
		sb, err := blocksOf(cv, st)
		if err != nil {
			t.Fatal(err)
		}
		f, c, fr := q.Blocks[sb.forward], q.Blocks[sb.consumer], q.Blocks[sb.free]
		if f.Recompute || f.Checkpoint != 0 || f.RecomputedLayers != s.Recompute || fr.Memory != -f.Memory {
			t.Errorf("stage %d: forward %+v, freeing %+v", st, f, fr)
		}
		kept := pr.Converted.Activation[sb.forward] - s.Saved(s.Recompute)
		if want := int(math.Ceil(kept/cv.MemoryUnit - 1e-9)); f.Memory != want {
			t.Errorf("stage %d: memory %d, want %d", st, f.Memory, want)
		}
		extra := 0.0
		for _, l := range s.Layers[:s.Recompute] {
			extra += l.Forward
		}
		if want := p.Blocks[sb.consumer].Time + int(math.Round(extra/cv.TimeUnit)); c.Time != want {
			t.Errorf("stage %d: gradient time %d, want %d", st, c.Time, want)
		}
	}
	if q.HasRecompute() {
		t.Error("per-instance recompute still declared")
	}
	pol.Stages[1].Recompute = 9
	if _, err := Apply(pr.Converted, pol); err == nil {
		t.Error("9 of 4 layers applied")
	}
}

// Compare: both plans verified on the same split and budgets, the
// per-stage one with no decision and the policy recorded on its
// placement; the faster chosen; every device's peak, in bytes, within its
// memory with the reserve.
func TestCompare(t *testing.T) {
	testskip.Short(t, "three searches")
	pr := llama(t, 24)
	c, err := Compare(context.Background(), pr, plan.Options{MicroBatches: 16, Decisions: placement.Decisions{Recompute: true}})
	if err != nil {
		t.Fatal(err)
	}
	if c.NoPolicy != nil || !c.Policy.Any() {
		t.Fatalf("no policy: %v %v", c.NoPolicy, c.Policy)
	}
	per, st := c.PerInstance.Search.Schedule, c.Staged.Search.Schedule
	for _, s := range []*schedule.Schedule{per, st} {
		if err := verify.Schedule(s); err != nil {
			t.Fatal(err)
		}
	}
	if _, rec := per.Count(); rec == 0 {
		t.Error("the per-instance plan recomputes nothing")
	}
	if _, rec := st.Count(); rec != 0 || c.Staged.Decisions {
		t.Errorf("the policy's plan decides %d recomputes", rec)
	}
	for i, s := range c.Policy.Stages {
		sb, _ := blocksOf(pr.Converted, i)
		if got := st.Placement.Blocks[sb.forward].RecomputedLayers; got != s.Recompute {
			t.Errorf("stage %d: placement records %d, policy %d", i, got, s.Recompute)
		}
	}
	if c.PolicyChosen != (schedule.Makespan(st) <= schedule.Makespan(per)) || c.Chosen() == nil {
		t.Errorf("chosen: policy %v, makespans %d and %d", c.PolicyChosen, schedule.Makespan(st), schedule.Makespan(per))
	}
	if want := float64(schedule.Makespan(st)) * pr.Converted.TimeUnit; c.PolicyTime != want {
		t.Errorf("policy time %v, want %v", c.PolicyTime, want)
	}
	_, mem := budgetsOf(t, pr)
	peak := schedule.Measure(st).PeakMemory
	for i, s := range c.Policy.Stages {
		sb, _ := blocksOf(pr.Converted, i)
		d := st.Placement.Blocks[sb.forward].Devices[0]
		if bytes := float64(peak[d])*pr.Converted.MemoryUnit + s.Reserve() + mem[d].Static; bytes > mem[d].Capacity {
			t.Errorf("device %d: peak %.3g bytes with the reserve, capacity %.3g", d, bytes, mem[d].Capacity)
		}
	}
	if c.Policy.IsUniform() != (c.UniformPlan == nil) {
		t.Fatalf("policy %v, uniform plan %v", c.Policy, c.UniformPlan != nil)
	}
	if c.UniformPlan != nil {
		u := c.UniformPlan.Search.Schedule
		if err := verify.Schedule(u); err != nil {
			t.Fatal(err)
		}
		for i, s := range c.Uniform.Stages {
			sb, _ := blocksOf(pr.Converted, i)
			if got := u.Placement.Blocks[sb.forward].RecomputedLayers; got != min(c.Policy.Max(), len(s.Layers)) {
				t.Errorf("uniform: stage %d recomputes %d", i, got)
			}
		}
		if want := float64(schedule.Makespan(u)) * pr.Converted.TimeUnit; c.UniformTime != want {
			t.Errorf("uniform time %v, want %v", c.UniformTime, want)
		}
	}
	sum := c.Summary()
	if sum.Policy != c.Policy.String() || len(sum.Recomputed) != 8 || sum.PerInstanceTime != c.PerInstanceTime {
		t.Errorf("summary %+v", sum)
	}
}

// A split the policy cannot describe: a graph without activations.
func TestOfRefuses(t *testing.T) {
	pr := split(t, "gpt-like.json", 4, 0)
	if _, err := Of(pr); err == nil {
		t.Error("a policy without activation and checkpoint bytes")
	}
	if _, err := Compare(context.Background(), pr, plan.Options{MicroBatches: 4}); err == nil {
		t.Error("a comparison without recompute allowed")
	}
}

// Reserve: a recomputed layer's excess over its checkpoint, less what the
// kept layers (run backward first) have freed by then.
func TestReserve(t *testing.T) {
	l := func(a, c float64) Layer { return Layer{Activation: a, Checkpoint: c, Forward: 1} }
	for _, tc := range []struct {
		layers []Layer
		k      int
		want   float64
	}{
		{[]Layer{l(10, 1), l(10, 1)}, 0, 0},
		{[]Layer{l(10, 1), l(12, 2)}, 2, 10},
		{[]Layer{l(10, 1), l(12, 2)}, 1, 0},
		{[]Layer{l(30, 1), l(5, 1)}, 1, 24},
	} {
		if got := (Stage{Layers: tc.layers, Recompute: tc.k}).Reserve(); got != tc.want {
			t.Errorf("%v, k %d: reserve %v, want %v", tc.layers, tc.k, got, tc.want)
		}
	}
}
