package render

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenNames are the golden schedules package schedule writes (its
// testdata/schedules), which these tests draw.
var goldenNames = []string{"v-shape-1f1b", "m-shape-greedy", "k-shape-greedy", "v-shape-long", "dualpipe-greedy"}

// goldenSchedules reads the golden schedules of package schedule: the
// schedules its tests build (1F1B with its repetend, list schedules of
// the m-, k- and dualpipe shapes, a long 1F1B) as it writes them.
func goldenSchedules(t testing.TB) map[string]*schedule.Schedule {
	t.Helper()
	out := map[string]*schedule.Schedule{}
	for _, name := range goldenNames {
		s, err := schedule.Load(filepath.Join("..", "schedule", "testdata", "schedules", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = s
	}
	return out
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./render -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test ./render -update and review the diff):\n%s", path, got)
	}
}

// compacted is the schedule of orders on p, compacted, and verified.
func compacted(t *testing.T, p *placement.Placement, n int, orders [][]schedule.Ref) *schedule.Schedule {
	t.Helper()
	c, err := compact.Compact(spec.New(p, n), compact.Keep{Orders: orders})
	if err != nil {
		t.Fatal(err)
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: n}, Instances: c.Instances}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// splitGroup is a placement with a block on the non-contiguous devices 0
// and 2, drawn as one bar on each.
func splitGroup(t *testing.T) *schedule.Schedule {
	p := &placement.Placement{Name: "split", Devices: 3, Blocks: []placement.Block{
		{ID: "g", Kind: placement.Forward, Devices: []int{0, 2}, Time: 2, Memory: 1},
		{ID: "h", Kind: placement.Backward, Devices: []int{1}, Time: 1, Memory: -1},
	}, Deps: []placement.Dep{{From: 0, To: 1}}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	g := []schedule.Ref{{Block: 0, Micro: 0}, {Block: 0, Micro: 1}, {Block: 0, Micro: 2}}
	h := []schedule.Ref{{Block: 1, Micro: 0}, {Block: 1, Micro: 1}, {Block: 1, Micro: 2}}
	return compacted(t, p, 3, [][]schedule.Ref{g, h, g})
}

// moePaired is placement/testdata/overlap.json (two stages; a forward and
// a whole backward of two micro-batches on one device may overlap) with
// f1^1 and b1^0 overlapped on device 1.
func moePaired(t *testing.T) *schedule.Schedule {
	t.Helper()
	p, err := placement.Load("../placement/testdata/overlap.json")
	if err != nil {
		t.Fatal(err)
	}
	orders := [][]schedule.Ref{
		{{Block: 0, Micro: 0}, {Block: 0, Micro: 1}, {Block: 3, Micro: 0}, {Block: 3, Micro: 1}},
		{{Block: 1, Micro: 0}, {Block: 1, Micro: 1}, {Block: 2, Micro: 0}, {Block: 2, Micro: 1}},
	}
	pairs := []schedule.Pair{{Forward: schedule.Ref{Block: 1, Micro: 1}, Backward: schedule.Ref{Block: 2, Micro: 0}}}
	c, err := compact.Compact(spec.New(p, 2), compact.Keep{Orders: orders, Pairs: pairs})
	if err != nil {
		t.Fatal(err)
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 2}, Instances: c.Instances, Pairs: pairs}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// chosenFork is a -> b, a -> c, every block choosing between devices 0
// and 1, with a on 0, b on 0, c on 1 and every transfer taking 3.
func chosenFork(t *testing.T, channels bool) *schedule.Schedule {
	t.Helper()
	cands := [][]int{{0}, {1}}
	p := &placement.Placement{Name: "fork", Devices: 2, Blocks: []placement.Block{
		{ID: "a", Kind: placement.Forward, Candidates: cands, Time: 2},
		{ID: "b", Kind: placement.Forward, Candidates: cands, Time: 1},
		{ID: "c", Kind: placement.Forward, Candidates: cands, Time: 1},
	}, Deps: []placement.Dep{{From: 0, To: 1}, {From: 0, To: 2}},
		Timing: placement.Timing{Costs: &placement.Costs{Times: [][]int{{2, 2}, {1, 1}, {1, 1}}, Transfers: map[placement.Dep][][]int{
			{From: 0, To: 1}: {{0, 3}, {3, 0}}, {From: 0, To: 2}: {{0, 3}, {3, 0}}}}}}
	q, err := placement.Choose(p, []int{0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	q.QueuedLinks = channels
	r := func(b, m int) schedule.Ref { return schedule.Ref{Block: b, Micro: m} }
	return compacted(t, q, 2, [][]schedule.Ref{{r(0, 0), r(0, 1), r(1, 0), r(1, 1)}, {r(2, 0), r(2, 1)}})
}

// She et al. §V-B, Fig. 7: the links as rows of the trace and the SVG,
// a bar per transfer, with and without links that carry one at a time.
func TestLinkRows(t *testing.T) {
	for _, channels := range []bool{false, true} {
		s := chosenFork(t, channels)
		var tr, svg bytes.Buffer
		if err := Trace(s, &tr); err != nil {
			t.Fatal(err)
		}
		if err := SVG(s, &svg); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(tr.String(), `"name":"link 0→1"`) || strings.Count(tr.String(), `"cat":"transfer"`) != 2 {
			t.Fatalf("trace without the link row:\n%s", tr.String())
		}
		if strings.Count(svg.String(), `<rect class="transfer"`) != 2 || !strings.Contains(svg.String(), "link 0&gt;1") {
			t.Fatalf("SVG without the link row:\n%s", svg.String())
		}
	}
}

// A pinned placement draws no link rows, transfers or not: its renderings
// stay as they were.
func TestNoLinkRowsPinned(t *testing.T) {
	s := chosenFork(t, false)
	for i := range s.Placement.Blocks {
		s.Placement.Blocks[i].Candidates = nil
	}
	s.Placement.Costs = nil
	var tr, svg bytes.Buffer
	if err := Trace(s, &tr); err != nil {
		t.Fatal(err)
	}
	if err := SVG(s, &svg); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tr.String(), "transfer") || strings.Contains(svg.String(), "transfer") {
		t.Fatal("a pinned placement got link rows")
	}
}

func TestRenderPairs(t *testing.T) {
	s := moePaired(t)
	var text, svg, trace bytes.Buffer
	if err := Text(s, &text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "f1+b0 ") || !strings.Contains(text.String(), "f3+b1 forward of micro-batch 3 overlapped") {
		t.Errorf("text without the pair:\n%s", text.String())
	}
	if err := SVG(s, &svg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "f1^1+b1^0 overlapped [4,9)") {
		t.Error("SVG without the pair")
	}
	if err := Trace(s, &trace); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(trace.String(), `"name":"f1^1+b1^0","cat":"overlapped"`) {
		t.Errorf("trace without the pair:\n%s", trace.String())
	}
}

// FuzzRender: whatever schedule.Parse accepts, every rendering draws
// without error. The seed corpus is testdata/fuzz/FuzzRender (schedule's
// FuzzParseSchedule corpus) plus schedule's golden schedule files.
func FuzzRender(f *testing.F) {
	dir := filepath.Join("..", "schedule", "testdata")
	files, _ := filepath.Glob(filepath.Join(dir, "schedules", "*.json"))
	for _, path := range append(files, filepath.Join(dir, "link-order.json")) {
		if data, err := os.ReadFile(path); err == nil && len(data) < 4000 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := schedule.Parse(data)
		if err != nil {
			return
		}
		for _, r := range []func(*schedule.Schedule, io.Writer) error{Text, SVG, HTML, Trace} {
			if err := r(s, io.Discard); err != nil {
				t.Errorf("rendering: %v", err)
			}
		}
	})
}

// refName names an instance in test messages: "f3^2".
func refName(s *schedule.Schedule, r schedule.Ref) string {
	return fmt.Sprintf("%s^%d", s.Placement.Blocks[r.Block].ID, r.Micro)
}
