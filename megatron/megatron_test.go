package megatron

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// Megatron-Core's own layout examples (its pipeline-layout unit tests,
// eight layers on four ranks of two virtual stages, and its
// documentation's DeepSeek-V3 split of 61 layers on 16 ranks) read into
// the stages Megatron-Core unrolls them to, stage i on rank i mod P.
func TestParseLayoutMegatronExamples(t *testing.T) {
	for _, tc := range []struct {
		layout          string
		layers, pp, vpp int
		stages          []string
		mtp             int
	}{
		{"E|t*3|(t|)*5mL", 8, 4, 2, []string{"E", "ttt", "t", "t", "t", "t", "t", "mL"}, 1},
		{"E|t*3|(t|)*4tm|L", 8, 4, 2, []string{"E", "ttt", "t", "t", "t", "t", "tm", "L"}, 1},
		{"E|t*3|(t|)*3tt|m|L", 8, 4, 2, []string{"E", "ttt", "t", "t", "t", "tt", "m", "L"}, 1},
		// The list form with an empty fifth stage, as a string.
		{"E|t|t*2|t||t|t|t*2L", 8, 4, 2, []string{"E", "t", "tt", "t", "", "t", "t", "ttL"}, 0},
		{"Etttt|ttttL", 8, 2, 1, []string{"Etttt", "ttttL"}, 0},
		{"E||t|L", 1, 2, 2, []string{"E", "", "t", "L"}, 0},
	} {
		l, err := ParseLayout(tc.layout, LayoutOptions{Layers: tc.layers, PP: tc.pp})
		if err != nil {
			t.Errorf("%s: %v", tc.layout, err)
			continue
		}
		if !slices.Equal(l.Stages, tc.stages) || l.VPP != tc.vpp || l.Layers != tc.layers || l.MTP != tc.mtp {
			t.Errorf("%s: stages %q, vpp %d, %d layers, %d MTP", tc.layout, l.Stages, l.VPP, l.Layers, l.MTP)
		}
		back, err := ParseLayout(l.String(), LayoutOptions{Layers: tc.layers, PP: tc.pp, VPP: tc.vpp})
		if err != nil || !slices.Equal(back.Stages, l.Stages) {
			t.Errorf("%s: written as %q, read back %v, %v", tc.layout, l.String(), back, err)
		}
	}

}

// Megatron-Core's layout checks, each one line.
func TestParseLayoutRefuses(t *testing.T) {
	for _, tc := range []struct {
		layout     string
		layers, pp int
		vpp        int
		err        string
	}{
		{"E|t|t|L", 2, 3, 0, "has 4 stages: Megatron-Core needs a multiple of the pipeline size 3"},
		{"E|t|t|L", 2, 2, 1, "4 stages, 2 per rank of 2, not the virtual size 1"},
		{"t|E|t|L", 2, 2, 0, "the first layer must be the embedding E"},
		{"E|t|t|tL|t", 4, 1, 0, "the last layer must be the loss L"},
		{"E|t|E|tL", 3, 2, 0, "one embedding E and one loss L"},
		{"E|t*3|(t|)*5mL", 7, 4, 0, "has 8 transformer layers, not --num-layers 7"},
		{"E|t|m|tL", 2, 2, 0, "every transformer layer t before the MTP layers m"},
		{"Et|t|m|mL", 2, 2, 0, "stage 2 holds 1 of the 2 MTP layers"},
		{"Et|m||L", 1, 2, 0, "stage 1 (rank 1, virtual stage 0) holds MTP layers"},
		{"Et|t|m|L", 2, 2, 0, "stage 2 holds MTP layers on the first rank"},
		{"E|x|L", 1, 1, 0, `symbol 'x' is not E, t, m, L or |`},
	} {
		_, err := ParseLayout(tc.layout, LayoutOptions{Layers: tc.layers, PP: tc.pp, VPP: tc.vpp})
		if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.layout, err, tc.err)
		}
	}
}

// A layout's placement: stage i on rank i mod P, times by layer count,
// the empty stage the least time and no memory; it is a chain that
// Megatron-Core's 1F1B with virtual stages (tessel's baseline, micro-batch
// groups of P) runs, and Order with group size P is the same order.
func TestLayoutPlacementAndOrder(t *testing.T) {
	l, err := ParseLayout("E|t|t*2|t||t|t|t*2L", LayoutOptions{Layers: 8, PP: 4})
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Placement(PlacementOptions{ForwardTime: 2, BackwardTime: 4, ForwardMemory: 1, BackwardMemory: -1})
	if err != nil {
		t.Fatal(err)
	}
	if p.Devices != 4 || len(p.Blocks) != 16 {
		t.Fatalf("%d devices, %d blocks", p.Devices, len(p.Blocks))
	}
	for i, want := range []int{2, 2, 4, 2, 1, 2, 2, 6} {
		b := p.Blocks[i]
		if b.Time != want || b.Devices[0] != i%4 {
			t.Errorf("f%d: time %d on %v, want %d on %d", i, b.Time, b.Devices, want, i%4)
		}
	}
	if p.Blocks[4].Memory != 0 {
		t.Errorf("the empty stage holds memory %d", p.Blocks[4].Memory)
	}
	for _, n := range []int{8, 12} {
		base, err := baseline.Interleaved(spec.New(p, n))
		if err != nil {
			t.Fatal(err)
		}
		m, err := Order(spec.New(p, n), OrderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(schedule.Orders(m), schedule.Orders(base), slices.Equal) {
			t.Errorf("n %d: Megatron-Core's order with groups of 4 differs from the interleaved baseline", n)
		}
	}
	// Groups of 6 on 12 micro-batches: six forwards of a virtual stage in
	// a row, and Megatron-Core's warmup of 2(P−r−1) + (V−1)·G.
	m, err := Order(spec.New(p, 12), OrderOptions{Group: 6})
	if err != nil {
		t.Fatal(err)
	}
	order := schedule.Orders(m)[3] // rank 3: warmup 6 forwards
	for k, want := range []string{"f3/0", "f3/1", "f3/2", "f3/3", "f3/4", "f3/5", "f7/0", "b7/0"} {
		r := order[k]
		if got := p.Blocks[r.Block].ID + "/" + strconv.Itoa(r.Micro); got != want {
			t.Errorf("rank 3, op %d: %s, want %s", k, got, want)
		}
	}
	for _, tc := range []struct {
		g, n int
		err  string
	}{{3, 12, "takes 4 (the pipeline size) to 12"}, {5, 12, "the last group of 12 micro-batches holds 2"}} {
		if _, err := Order(spec.New(p, tc.n), OrderOptions{Group: tc.g}); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("group %d: got %v, want %q", tc.g, err, tc.err)
		}
	}
}

// The arguments of a searched plan parse back to the plan: the pipeline
// size, the layout (the same stages), the layer count, a group size that
// Megatron-Core accepts; Megatron-Core's own order, given as the
// schedule, is recognised with its group size.
func TestArgumentsParseBack(t *testing.T) {
	testskip.Short(t, "searches a placement of 8 stages")
	l, err := ParseLayout("E|t*3|(t|)*5mL", LayoutOptions{Layers: 8, PP: 4})
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Placement(PlacementOptions{ForwardTime: 2, BackwardTime: 4, ForwardMemory: 1, BackwardMemory: -1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Memory: 12}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := Order(spec.New(p, 8), OrderOptions{Group: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		label string
		s     *schedule.Schedule
	}{{"searched", res.Schedule}, {"Megatron-Core's, groups of 8", mine}} {
		a, err := Arguments(tc.s, ArgsOptions{Layout: l, Source: "s.json"})
		if err != nil {
			t.Fatalf("%s: %v", tc.label, err)
		}
		got, err := ParseArgs(a.Text())
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.label, err, a.Text())
		}
		back, err := ParseLayout(got["--pipeline-model-parallel-layout"], LayoutOptions{Layers: 8, PP: 4})
		if err != nil || !slices.Equal(back.Stages, l.Stages) {
			t.Errorf("%s: layout %q: %v", tc.label, got["--pipeline-model-parallel-layout"], err)
		}
		if got["--pipeline-model-parallel-size"] != "4" || got["--num-layers"] != "8" || got["--mtp-num-layers"] != "1" {
			t.Errorf("%s: %v", tc.label, got)
		}
		if _, ok := got["--num-virtual-stages-per-pipeline-rank"]; ok {
			t.Errorf("%s: the virtual size beside the layout, which Megatron-Core refuses", tc.label)
		}
		g := got["--microbatch-group-size-per-virtual-pipeline-stage"]
		if gi, err := strconv.Atoi(g); err != nil || CheckGroup(gi, 8, 4) != nil {
			t.Errorf("%s: group size %q", tc.label, g)
		}
		if tc.label != "searched" && (!a.SameOrder || g != "8") {
			t.Errorf("%s: group %s, same order %v", tc.label, g, a.SameOrder)
		}
	}
	if _, err := ParseArgs([]byte("--a 1\n--a 2\n")); err == nil || !strings.Contains(err.Error(), "line 2: --a given twice") {
		t.Errorf("twice: %v", err)
	}
}

// The known hangs are refused before anything is written, naming the
// stage: an empty stage with the all-to-all overlap (a Megatron-LM deadlock),
// an odd number of MoE layers in a stage with it (another), and
// a split backward without it (Megatron-Core delays weight gradients only
// with the overlap).
func TestArgumentsRefuse(t *testing.T) {
	overlapped := func(layout string, layers int, moe []bool) error {
		l, err := ParseLayout(layout, LayoutOptions{Layers: layers, PP: 2})
		if err != nil {
			t.Fatal(err)
		}
		p, err := l.Placement(PlacementOptions{ForwardTime: 1, InputTime: 1, WeightTime: 1, ForwardMemory: 1, WeightMemory: -1, SplitBackward: true})
		if err != nil {
			t.Fatal(err)
		}
		if p.Overlap, err = placement.ParseOverlapTime("0.7x"); err != nil {
			t.Fatal(err)
		}
		s, err := Order(spec.New(p, 4), OrderOptions{Overlap: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Pairs) == 0 {
			t.Fatal("no overlapped pairs")
		}
		_, err = Arguments(s, ArgsOptions{Layout: l, MoE: moe})
		return err
	}
	if err := overlapped("Et*2|t*2|t*2|t*2L", 8, nil); err != nil {
		t.Errorf("even MoE layers, no empty stage: %v", err)
	}
	for _, tc := range []struct {
		layout string
		layers int
		moe    []bool
		err    string
	}{
		{"Et*2|t*2||t*4L", 8, nil, `stage 2 ("") holds no transformer layer: with the all-to-all overlap (--overlap-moe-expert-parallel-comm) such stages deadlock in Megatron-LM's pipeline`},
		{"Et*2|t*3|t|t*2L", 8, nil, "stage 1 holds 3 MoE layers, an odd number"},
		{"Et*2|t*2|t*2|t*2L", 8, []bool{true, true, true, false, true, true, true, true}, "stage 1 holds 1 MoE layers, an odd number"},
	} {
		if err := overlapped(tc.layout, tc.layers, tc.moe); err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want %q", tc.layout, err, tc.err)
		}
	}
	l, err := ParseLayout("Et|t|t|tL", LayoutOptions{Layers: 4, PP: 2})
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Placement(PlacementOptions{ForwardTime: 1, InputTime: 1, WeightTime: 1, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Order(spec.New(p, 4), OrderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Arguments(s, ArgsOptions{Layout: l}); err == nil || !strings.Contains(err.Error(), "export it with --merge-bw") {
		t.Errorf("split backward without the overlap: %v", err)
	}
}

// A schedule under a per-stage recompute policy (recomputed layers
// recorded on its forward blocks) gets Megatron-Core's block recompute of
// the most layers any stage recomputes, with notes where Megatron-Core's
// one number recomputes more than the policy, or fewer (a stage whose
// policy counts more layers than its transformer layers).
func TestArgumentsPolicy(t *testing.T) {
	l, err := ParseLayout("Ettt|tttt|tttt|tttL", LayoutOptions{Layers: 14, PP: 4})
	if err != nil {
		t.Fatal(err)
	}
	p, err := l.Placement(PlacementOptions{ForwardTime: 2, BackwardTime: 4, ForwardMemory: 1, BackwardMemory: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ks   []int
		k    string
		note string
	}{
		{[]int{2, 2, 2, 2}, "2", ""},
		{[]int{3, 2, 0, 0}, "3", "stage 1 (3 instead of 2), stage 2 (3 instead of 0), stage 3 (3 instead of 0)"},
		{[]int{0, 0, 0, 4}, "4", "stage 3 (its 3 transformer layers; the policy: 4 layers)"},
	} {
		q := p.Clone()
		f := 0
		for i := range q.Blocks {
			if q.Blocks[i].Kind == placement.Forward {
				q.Blocks[i].RecomputedLayers = tc.ks[f]
				f++
			}
		}
		s, err := Order(spec.New(q, 8), OrderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a, err := Arguments(s, ArgsOptions{Layout: l})
		if err != nil {
			t.Fatalf("%v: %v", tc.ks, err)
		}
		got, err := ParseArgs(a.Text())
		if err != nil {
			t.Fatal(err)
		}
		if got["--recompute-granularity"] != "full" || got["--recompute-method"] != "block" || got["--recompute-num-layers"] != tc.k {
			t.Errorf("%v: %v", tc.ks, got)
		}
		text := string(a.Text())
		if !strings.Contains(text, "per-stage recompute policy") || tc.note != "" && !strings.Contains(text, tc.note) || tc.note == "" && strings.Contains(text, "instead of") {
			t.Errorf("%v: notes\n%s", tc.ks, text)
		}
	}
}

// A schedule path holding newlines stays in its comment: the arguments
// read back hold no flag of its text.
func TestArgumentsNotesStayComments(t *testing.T) {
	a := &Args{Notes: []string{"Megatron-Core arguments for x\n--evil-flag 1\n#.json: 8 micro-batches"},
		Flags: []Flag{{"--pipeline-model-parallel-size", "4"}}}
	text := string(a.Text())
	if strings.Count(text, "\n") != 2 {
		t.Errorf("a note of one line became several:\n%s", text)
	}
	got, err := ParseArgs(a.Text())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["--evil-flag"]; ok || len(got) != 1 {
		t.Errorf("the note's text became a flag: %v\n%s", got, text)
	}
}
