package baseline

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

func builtin(t *testing.T, name string, d int, infer bool) *placement.Placement {
	t.Helper()
	return placementtest.Builtin(t, name, placement.Options{Devices: d, ForwardTime: 1, BackwardTime: 3, Inference: infer})
}

// applicable is which baseline fits which built-in shape, unsplit and
// with its backward split.
var applicable = map[string][]string{
	"v-shape":        {"gpipe", "1f1b", "1f1b-plus"},
	"x-shape":        {"gpipe", "chimera-direct"},
	"m-shape":        {"gpipe", "1f1b-plus"},
	"nn-shape":       {"gpipe", "1f1b-plus"},
	"k-shape":        {"gpipe"},
	"dualpipe":       {"gpipe", "chimera-direct", "dualpipe"},
	"v-shape-split":  {"gpipe", "1f1b", "1f1b-plus", "zb-h1", "zb-h2", "zb-auto"},
	"x-shape-split":  {"gpipe", "chimera-direct", "dualpipe"},
	"m-shape-split":  {"gpipe", "1f1b-plus"},
	"nn-shape-split": {"gpipe", "1f1b-plus"},
	"k-shape-split":  {"gpipe"},
	// the chunked placements: loop and V, 2 and 3 chunks
	"v-shape-loop2":       {"gpipe", "1f1b-interleaved", "looped-bfs"},
	"v-shape-loop3":       {"gpipe", "1f1b-interleaved", "looped-bfs"},
	"v-shape-loop2-split": {"gpipe", "1f1b-interleaved", "looped-bfs", "zb1p"},
	"v-shape-loop3-split": {"gpipe", "1f1b-interleaved", "looped-bfs", "zb1p"},
	"v-shape-v2":          {"gpipe", "1f1b-interleaved"},
	"v-shape-v3":          {"gpipe", "1f1b-interleaved"},
	"v-shape-v2-split":    {"gpipe", "1f1b-interleaved", "zb-v", "dualpipe-v", "v-half", "v-min"},
	"v-shape-v3-split":    {"gpipe", "1f1b-interleaved"},
	"x-shape-loop2-split": {"gpipe"},
	"x-shape-loop2":       {"gpipe"},
}

// fits says whether a baseline that applies to a placement's shape takes
// n micro-batches on d devices (the constructions' own conditions).
func fits(method string, d, n int, infer bool) bool {
	switch method {
	case "1f1b-interleaved": // whole groups of d micro-batches (Megatron-LM)
		return n%d == 0
	case "dualpipe": // at least d micro-batches per direction
		return n >= d && d%2 == 0
	case "dualpipe-v": // at least one micro-batch per stage
		return n >= 2*d
	case "zb1p": // whole rounds (PyTorch's ScheduleInterleavedZeroBubble)
		return n%max(1, n/d) == 0
	}
	return true
}

// variants are the built-in placements every baseline is tried on.
func variants(t *testing.T, d int, infer bool) []*placement.Placement {
	var out []*placement.Placement
	add := func(name string, o placement.Options) {
		o.Devices, o.ForwardTime, o.BackwardTime, o.Inference = d, 1, 3, infer
		p, err := placement.Builtin(name, o)
		if err != nil {
			if d%2 != 0 && (name == "nn-shape" || name == "k-shape") {
				return
			}
			t.Fatal(err)
		}
		out = append(out, p)
	}
	for _, name := range placement.BuiltinNames() {
		add(name, placement.Options{})
		if name != "dualpipe" {
			add(name, placement.Options{SplitBackward: true})
		}
	}
	for _, c := range []int{2, 3} {
		for _, o := range placement.Orders() {
			add("v-shape", placement.Options{Chunks: c, Order: o})
			add("v-shape", placement.Options{Chunks: c, Order: o, SplitBackward: true})
		}
	}
	add("x-shape", placement.Options{Chunks: 2, Order: placement.Loop, SplitBackward: true})
	return out
}

// TestBuiltinsVerify builds every baseline on every built-in and checks that
// the applicable ones pass the verifier and the others say ×.
func TestBuiltinsVerify(t *testing.T) {
	for _, d := range []int{2, 3, 4, 8} {
		for _, infer := range []bool{false, true} {
			for _, p := range variants(t, d, infer) {
				shape := strings.TrimSuffix(p.Name, "-infer")
				if _, ok := applicable[shape]; !ok {
					t.Fatalf("no applicable baselines listed for %s", shape)
				}
				for _, m := range All() {
					for _, n := range []int{1, 4, 8, 16, 32} {
						want := contains(applicable[shape], m.Name) && fits(m.Name, d, n, infer)
						if infer && (m.Split || strings.HasPrefix(m.Name, "zb-") || strings.HasPrefix(m.Name, "dualpipe")) {
							want = false // no backward to split
						}
						t.Run(fmt.Sprintf("%s/D%d/infer=%v/%s/N%d", p.Name, d, infer, m.Name, n), func(t *testing.T) {
							s, err := m.Build(spec.New(p, n))
							if !want {
								if !errors.Is(err, ErrNotApplicable) {
									t.Fatalf("want not applicable, got %v", err)
								}
								return
							}
							if err != nil {
								t.Fatal(err)
							}
							if s.MicroBatches != n || len(s.Instances) != n*p.K() {
								t.Fatalf("%d micro-batches, %d instances; want %d, %d", s.MicroBatches, len(s.Instances), n, n*p.K())
							}
							if err := verify.Schedule(s); err != nil {
								t.Fatal(err)
							}
						})
					}
				}
			}
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// interleavedChain is a pipeline whose chain visits devices 0..d-1 v times.
func interleavedChain(d, v int) *placement.Placement {
	p := &placement.Placement{Name: fmt.Sprintf("interleaved-%dx%d", d, v), Devices: d}
	var chain []int
	for j := range d * v {
		p.Blocks = append(p.Blocks, placement.Block{ID: fmt.Sprint("f", j), Kind: placement.Forward, Devices: []int{j % d}, Time: 1, Memory: 1})
		chain = append(chain, j)
	}
	for j := d*v - 1; j >= 0; j-- {
		p.Blocks = append(p.Blocks, placement.Block{ID: fmt.Sprint("b", j), Kind: placement.Backward, Devices: []int{j % d}, Time: 2, Memory: -1})
		chain = append(chain, len(p.Blocks)-1)
	}
	for k := 1; k < len(chain); k++ {
		p.Deps = append(p.Deps, placement.Dep{From: chain[k-1], To: chain[k]})
	}
	return p
}

func TestInterleaved(t *testing.T) {
	for _, c := range []struct{ d, v int }{{2, 2}, {4, 2}, {4, 3}, {3, 2}} {
		p := interleavedChain(c.d, c.v)
		for n := 1; n <= 13; n++ {
			s, err := Interleaved(spec.New(p, n))
			if n%c.d != 0 {
				if !errors.Is(err, ErrNotApplicable) {
					t.Errorf("%s N=%d: want not applicable, got %v", p.Name, n, err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s N=%d: %v", p.Name, n, err)
			}
			if err := verify.Schedule(s); err != nil {
				t.Fatalf("%s N=%d: %v", p.Name, n, err)
			}
		}
		// 1F1B proper does not apply: a device holds several stages.
		if _, err := OneFOneB(spec.New(p, 4)); !errors.Is(err, ErrNotApplicable) {
			t.Errorf("%s: 1f1b: want not applicable, got %v", p.Name, err)
		}
	}
	// Interleaving beats plain 1F1B's warmup: with more micro-batches than
	// stages the steady state has no bubble either.
	rate, _, err := SteadyBubbleRate(Baseline{Name: "1f1b-interleaved", Build: Interleaved}, interleavedChain(4, 2))
	if err != nil || rate != 0 {
		t.Errorf("interleaved steady bubble rate %v, %v; want 0", rate, err)
	}
}

// TestOneFOneBOrder pins the order of 1F1B on a v-shape: stage s warms up
// with D−s forwards, then alternates backward and forward.
func TestOneFOneBOrder(t *testing.T) {
	p := builtin(t, "v-shape", 4, false)
	s, err := OneFOneB(spec.New(p, 6))
	if err != nil {
		t.Fatal(err)
	}
	orders := schedule.Orders(s)
	for d, order := range orders {
		var got []string
		for _, r := range order {
			got = append(got, fmt.Sprintf("%s%d", p.Blocks[r.Block].Kind[:1], r.Micro))
		}
		var want []string
		w := 4 - d
		for m := range w {
			want = append(want, fmt.Sprint("f", m))
		}
		for m := range 6 {
			want = append(want, fmt.Sprint("b", m))
			if w+m < 6 {
				want = append(want, fmt.Sprint("f", w+m))
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("device %d: %v, want %v", d, got, want)
		}
	}
	peak := schedule.Measure(s).PeakMemory
	if want := []int{4, 3, 2, 1}; !reflect.DeepEqual(peak, want) {
		t.Errorf("peak memory %v, want %v", peak, want)
	}
}

// TestOverBudget: a baseline does not adapt to the budget; it returns its
// schedule, valid without a budget, and says the budget was not respected.
func TestOverBudget(t *testing.T) {
	p := builtin(t, "v-shape", 4, false)
	cases := []struct {
		method     Baseline
		memory     int
		overBudget bool
		wantMemory int
	}{
		{Baseline{Name: "gpipe", Build: GPipe}, 8, false, 8},
		{Baseline{Name: "gpipe", Build: GPipe}, 7, true, 0},
		{Baseline{Name: "1f1b", Build: OneFOneB}, 4, false, 4},
		{Baseline{Name: "1f1b", Build: OneFOneB}, 3, true, 0},
	}
	for _, c := range cases {
		s, err := c.method.Build(spec.Spec{Placement: p, MicroBatches: 8, Memory: c.memory})
		if got := errors.Is(err, ErrOverBudget); got != c.overBudget {
			t.Errorf("%s memory %d: err %v, over budget %v want %v", c.method.Name, c.memory, err, got, c.overBudget)
		}
		if s == nil {
			t.Fatalf("%s memory %d: no schedule", c.method.Name, c.memory)
		}
		if s.Memory != c.wantMemory {
			t.Errorf("%s memory %d: schedule budget %d, want %d", c.method.Name, c.memory, s.Memory, c.wantMemory)
		}
		if err := verify.Schedule(s); err != nil {
			t.Errorf("%s memory %d: %v", c.method.Name, c.memory, err)
		}
	}
}

func TestBadArguments(t *testing.T) {
	p := builtin(t, "v-shape", 4, false)
	for _, m := range All() {
		for _, c := range []struct {
			p         *placement.Placement
			n, memory int
		}{{nil, 4, 0}, {p, 0, 0}, {p, 4, -1}} {
			if s, err := m.Build(spec.Spec{Placement: c.p, MicroBatches: c.n, Memory: c.memory}); err == nil || errors.Is(err, ErrNotApplicable) || s != nil {
				t.Errorf("%s(%v, %d, %d): want an argument error, got %v", m.Name, c.p != nil, c.n, c.memory, err)
			}
		}
	}
}

// TestShapeByStructure: recognition does not depend on block ids or on the
// order of the block list.
func TestShapeByStructure(t *testing.T) {
	p := builtin(t, "m-shape", 4, false)
	q := &placement.Placement{Name: "renamed", Devices: p.Devices}
	k := p.K()
	perm := make([]int, k) // old index → new index: reversed
	for i := range perm {
		perm[i] = k - 1 - i
	}
	q.Blocks = make([]placement.Block, k)
	for i, b := range p.Blocks {
		b.ID = fmt.Sprint("x", i*7%k)
		q.Blocks[perm[i]] = b
	}
	for _, d := range p.Deps {
		q.Deps = append(q.Deps, placement.Dep{From: perm[d.From], To: perm[d.To]})
	}
	r1, _, err1 := SteadyBubbleRate(Baseline{Name: "1f1b-plus", Build: OneFOneBPlus}, p)
	r2, _, err2 := SteadyBubbleRate(Baseline{Name: "1f1b-plus", Build: OneFOneBPlus}, q)
	if err1 != nil || err2 != nil || r1 != r2 {
		t.Errorf("1f1b-plus: %v (%v) on m-shape, %v (%v) renamed and reordered", r1, err1, r2, err2)
	}
	if _, err := OneFOneB(spec.New(q, 4)); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("1f1b on m-shape: want not applicable, got %v", err)
	}
}

func TestDeterministic(t *testing.T) {
	for _, p := range variants(t, 4, false) {
		for _, m := range All() {
			a, errA := m.Build(spec.New(p, 9))
			b, errB := m.Build(spec.New(p, 9))
			if fmt.Sprint(errA) != fmt.Sprint(errB) || !reflect.DeepEqual(a, b) {
				t.Errorf("%s %s: two builds differ", p.Name, m.Name)
			}
		}
	}
}

// TestZeroBubbleByStructure: the zero-bubble baselines read the shape from
// the blocks' structure, not their ids or order in the file.
func TestZeroBubbleByStructure(t *testing.T) {
	for _, c := range []struct {
		name   string
		o      placement.Options
		method string
	}{
		{"v-shape", placement.Options{SplitBackward: true}, "zb-h1"},
		{"v-shape", placement.Options{SplitBackward: true}, "zb-h2"},
		{"v-shape", placement.Options{SplitBackward: true, Chunks: 2, Order: placement.V}, "zb-v"},
		{"v-shape", placement.Options{SplitBackward: true, Chunks: 2, Order: placement.V}, "dualpipe-v"},
		{"dualpipe", placement.Options{}, "dualpipe"},
	} {
		c.o.Devices = 4
		p, err := placement.Builtin(c.name, c.o)
		if err != nil {
			t.Fatal(err)
		}
		k := p.K()
		q := &placement.Placement{Name: "renamed", Devices: p.Devices, Blocks: make([]placement.Block, k)}
		for i, b := range p.Blocks {
			b.ID = fmt.Sprint("x", i*7%k)
			q.Blocks[k-1-i] = b
		}
		for _, d := range p.Deps {
			q.Deps = append(q.Deps, placement.Dep{From: k - 1 - d.From, To: k - 1 - d.To})
		}
		m, _ := Lookup(c.method)
		a, errA := m.Build(spec.New(p, 8))
		b, errB := m.Build(spec.New(q, 8))
		if errA != nil || errB != nil || schedule.Makespan(a) != schedule.Makespan(b) {
			t.Errorf("%s on %s: %v (%v), renamed and reordered %v (%v)", c.method, p.Name, a, errA, b, errB)
		}
	}
}

func TestMethodsStable(t *testing.T) {
	var names []string
	for _, m := range All() {
		names = append(names, m.Name)
		if got, ok := Lookup(m.Name); !ok || got.Name != m.Name {
			t.Errorf("Lookup(%q) = %v, %v", m.Name, got.Name, ok)
		}
	}
	want := []string{"gpipe", "1f1b", "1f1b-interleaved", "chimera-direct", "1f1b-plus", "zb-h1", "zb-h2", "zb-v", "dualpipe", "dualpipe-v", "dualpipe-v-overlap",
		"looped-bfs", "zb1p", "v-half", "v-min", "zb-auto", "pipeoffload", "adaoffload", "1f1b-recompute"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("All() = %v, want %v", names, want)
	}
	if _, ok := Lookup("pipedream"); ok {
		t.Error("Lookup found an unknown method")
	}
}
