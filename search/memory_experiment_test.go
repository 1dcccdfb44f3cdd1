package search_test

// OptPipe's experiment (Qi et al., "OptPipe: Memory- and Scheduling-
// Optimized Pipeline Parallelism for LLM Training", §5.2 Table 1 and
// §5.3 Fig. 6), reproduced in shape on tessel's model: the makespan of
// every method as the memory budget goes from rich to tight, and the
// sweep over the number of micro-batches against PipeOffload.
//
//	go test ./search -run TestMemoryExperiment -memory-experiment
//
// rewrites the tables of docs/memory-experiment.md (between its
// "experiment" markers) and its charts in docs/img; without the flag the
// test checks the claims on the smallest cases only.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/bound"
	"github.com/tessel-pp/tessel/chart"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

var memoryExperiment = flag.Bool("memory-experiment", false, "run OptPipe's experiment in full and rewrite docs/memory-experiment.md's tables and charts")

// The setting: F = I = W = 1 per chunk (OptPipe takes them from profiling;
// the zero-bubble papers' F = I = W), two chunks per device, every chunk's
// activation 1 memory unit, and moving one chunk's activation to or from
// host memory takes experimentOffload (PCIe slower than the compute, the
// regime where PipeOffload cannot hide every move). Methods that run one
// stage per device (1F1B, ZB, 1F1B with recompute) run the same model cut
// in D stages: F = I = W = 2, activation 2, offload 2·experimentOffload.
const experimentOffload = 2

// The search's effort: deterministic caps on every solver call, so the
// table is the same on every machine.
var experimentSearch = search.Options{Effort: 20_000, PhaseEffort: 20_000, RefineEffort: -1, MaxNR: 2}

// vPlacement is the V placement (ZB-V's, PipeOffload's and OptPipe's):
// 2D chunks down the devices and back up, backward split.
func vPlacement(t testing.TB, devices int) *placement.Placement {
	t.Helper()
	p, err := placement.Builtin("v-shape", placement.Options{Devices: devices, Chunks: 2, Order: placement.V, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	return p.WithOffload(experimentOffload).WithRecompute()
}

// vOffloadOnly is vPlacement whose blocks may be offloaded, not
// recomputed: the lower bound of schedules that offload only.
func vOffloadOnly(t testing.TB, devices int) *placement.Placement {
	t.Helper()
	p, err := placement.Builtin("v-shape", placement.Options{Devices: devices, Chunks: 2, Order: placement.V, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	return p.WithOffload(experimentOffload)
}

// stagePlacement is the same model in D stages, one per device: each
// stage twice a chunk in time, memory and offload time.
func stagePlacement(t testing.TB, devices int) *placement.Placement {
	t.Helper()
	p, err := placement.Builtin("v-shape", placement.Options{Devices: devices, ForwardTime: 2, InputTime: 2, WeightTime: 2, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Blocks {
		p.Blocks[i].Memory *= 2
	}
	return p.WithOffload(2 * experimentOffload).WithRecompute()
}

// experimentMethod is one column of the table.
type experimentMethod struct {
	name string
	run  func(t testing.TB, devices, n, memory int) (*schedule.Schedule, error)
}

func onStages(b func(spec.Spec) (*schedule.Schedule, error)) func(testing.TB, int, int, int) (*schedule.Schedule, error) {
	return func(t testing.TB, d, n, m int) (*schedule.Schedule, error) {
		return b(spec.Spec{Placement: stagePlacement(t, d), MicroBatches: n, Memory: m})
	}
}

func onV(b func(spec.Spec) (*schedule.Schedule, error)) func(testing.TB, int, int, int) (*schedule.Schedule, error) {
	return func(t testing.TB, d, n, m int) (*schedule.Schedule, error) {
		return b(spec.Spec{Placement: vPlacement(t, d), MicroBatches: n, Memory: m})
	}
}

func tesselRun(t testing.TB, d, n, m int) (*schedule.Schedule, error) {
	return tesselWith(t, d, n, m, true)
}

func tesselOffloadRun(t testing.TB, d, n, m int) (*schedule.Schedule, error) {
	return tesselWith(t, d, n, m, false)
}

func tesselWith(t testing.TB, d, n, m int, recompute bool) (*schedule.Schedule, error) {
	sp := spec.Spec{Placement: vPlacement(t, d), MicroBatches: n, Memory: m, Allowed: spec.Decisions{Offload: true, Recompute: recompute}}
	res, err := search.Run(context.Background(), sp, experimentSearch)
	if err != nil {
		return nil, err
	}
	return res.Schedule, nil
}

var experimentMethods = []experimentMethod{
	{"1F1B", onStages(baseline.OneFOneB)},
	{"ZB", onStages(baseline.ZBH1)},
	{"ZB-V", onV(baseline.ZBV)},
	{"PipeOffload", onV(baseline.PipeOffload)},
	{"AdaOffload", onV(baseline.AdaOffload)},
	{"recompute", onStages(baseline.OneFOneBRecompute)},
	{"tessel, offload only", tesselOffloadRun},
	{"tessel", tesselRun},
}

// The columns of the two tessel runs, and of the offload baselines.
const (
	colPipeOffload = 3
	colAdaOffload  = 4
	colOffloadOnly = 6
	colTessel      = 7
)

// result is one cell: a verified makespan under the budget, or none.
type result struct {
	makespan            int
	fits                bool
	offloaded, recomput int
}

func (r result) String() string {
	if !r.fits {
		return "does not fit"
	}
	return fmt.Sprint(r.makespan)
}

func runCell(t testing.TB, m experimentMethod, devices, n, memory int) result {
	t.Helper()
	s, err := m.run(t, devices, n, memory)
	if err != nil {
		if errors.Is(err, baseline.ErrOverBudget) || errors.Is(err, baseline.ErrNoSchedule) || errors.Is(err, search.ErrNoRepetend) || errors.Is(err, search.ErrNoFit) {
			return result{}
		}
		t.Fatalf("%s, D=%d, N=%d, memory %d: %v", m.name, devices, n, memory, err)
	}
	if s.Memory != memory {
		t.Fatalf("%s: schedule under budget %d, want %d", m.name, s.Memory, memory)
	}
	if err := verify.Schedule(s); err != nil {
		t.Fatalf("%s, D=%d, N=%d, memory %d: %v", m.name, devices, n, memory, err)
	}
	off, rec := s.Count()
	return result{makespan: schedule.Makespan(s), fits: true, offloaded: off, recomput: rec}
}

// checkRow pins the claims on one row: tessel always fits where any
// method does and is never slower than a baseline that fits; with offload
// alone it is never slower than PipeOffload and AdaOffload.
func checkRow(t testing.TB, label string, row []result) {
	t.Helper()
	no := func(k, j int) {
		if row[j].fits && (!row[k].fits || row[k].makespan > row[j].makespan) {
			t.Errorf("%s: %s %v, %s %v: want %s no slower", label, experimentMethods[k].name, row[k], experimentMethods[j].name, row[j], experimentMethods[k].name)
		}
	}
	for j := range colOffloadOnly {
		no(colTessel, j)
	}
	no(colOffloadOnly, colPipeOffload)
	no(colOffloadOnly, colAdaOffload)
}

// TestMemoryExperiment: the quick claims by default; the full tables and
// charts with -memory-experiment.
func TestMemoryExperiment(t *testing.T) {
	if !*memoryExperiment {
		// The smallest rows: 4 devices, 16 micro-batches, memory 1 (one
		// chunk's activation: only offload and recompute on the V
		// placement fit; a stage of the one-stage-per-device methods
		// needs 2) and 4.
		for _, mem := range []int{1, 4} {
			var row []result
			for _, m := range experimentMethods {
				row = append(row, runCell(t, m, 4, 16, mem))
			}
			checkRow(t, fmt.Sprintf("D=4, N=16, memory %d", mem), row)
			if mem == 1 && (row[0].fits || row[1].fits || row[2].fits || row[5].fits) {
				t.Errorf("memory 1: 1F1B, ZB or ZB-V fits: %v", row[:3])
			}
			t.Logf("D=4, N=16, memory %d: %v", mem, row)
		}
		return
	}
	var table bytes.Buffer
	fmt.Fprintf(&table, "| devices | N | memory |")
	for _, m := range experimentMethods {
		fmt.Fprintf(&table, " %s |", m.name)
	}
	fmt.Fprintf(&table, " lower bound |\n|---|---|---|")
	for range experimentMethods {
		table.WriteString("---|")
	}
	table.WriteString("---|\n")
	var budgetChart *chart.Line
	// Offload alone against PipeOffload where memory is tightest.
	var gain bytes.Buffer
	gain.WriteString(gainHeader)
	for _, c := range []struct {
		devices, n int
		budgets    []int
	}{
		{4, 16, []int{8, 6, 4, 3, 2, 1}},
		{8, 16, []int{16, 12, 8, 6, 4, 3, 2}},
		{8, 64, []int{16, 12, 8, 6, 4, 2}},
	} {
		series := make([]chart.Series, len(experimentMethods))
		for k, m := range experimentMethods {
			series[k].Name = m.name
		}
		for _, mem := range c.budgets {
			row := make([]result, len(experimentMethods))
			for k, m := range experimentMethods {
				row[k] = runCell(t, m, c.devices, c.n, mem)
				y := math.NaN()
				if row[k].fits {
					y = float64(row[k].makespan)
				}
				series[k].Points = append(series[k].Points, chart.Point{X: float64(mem), Y: y})
			}
			label := fmt.Sprintf("D=%d, N=%d, memory %d", c.devices, c.n, mem)
			checkRow(t, label, row)
			if c.devices == 8 && c.n == 16 && mem <= 4 && row[colPipeOffload].fits && row[colOffloadOnly].fits {
				po, off := row[colPipeOffload].makespan, row[colOffloadOnly].makespan
				gain.WriteString(gainRow(t, mem, po, off))
			}
			lb := rules.LowerBounds(spec.Spec{Placement: vPlacement(t, c.devices), MicroBatches: c.n, Memory: mem}).Makespan
			fmt.Fprintf(&table, "| %d | %d | %d |", c.devices, c.n, mem)
			for k, r := range row {
				cell := r.String()
				if k >= colOffloadOnly && r.fits {
					cell = fmt.Sprintf("%d (%d off, %d rec)", r.makespan, r.offloaded, r.recomput)
				}
				fmt.Fprintf(&table, " %s |", cell)
			}
			fmt.Fprintf(&table, " %d |\n", lb)
			t.Logf("%s: %v", label, row)
		}
		if c.devices == 8 && c.n == 64 {
			budgetChart = &chart.Line{Title: "8 devices, 64 micro-batches: makespan as the budget shrinks", XLabel: "memory budget (chunk activations per device)",
				YLabel: "makespan (time steps)", IntegerX: true, Series: series}
		}
	}
	// Fig. 6: the sweep over micro-batches, 8 devices, memory 4.
	var sweep bytes.Buffer
	sweep.WriteString("| N | PipeOffload | AdaOffload | tessel, offload only | tessel | offload only vs PipeOffload | tessel vs PipeOffload | lower bound |\n|---|---|---|---|---|---|---|---|\n")
	sweepChart := &chart.Line{Title: "8 devices, memory 4: time per micro-batch", XLabel: "micro-batches N", YLabel: "makespan / N (time steps)",
		Series: []chart.Series{{Name: "PipeOffload"}, {Name: "AdaOffload"}, {Name: "tessel, offload"}, {Name: "tessel"}, {Name: "lower bound"}}}
	for _, n := range []int{16, 32, 64, 128, 256} {
		var row []result
		for _, k := range []int{colPipeOffload, colAdaOffload, colOffloadOnly, colTessel} {
			row = append(row, runCell(t, experimentMethods[k], 8, n, 4))
		}
		for _, k := range []int{2, 3} {
			if !row[k].fits || row[k].makespan > row[0].makespan {
				t.Errorf("N=%d: tessel %v, PipeOffload %v", n, row[k], row[0])
			}
		}
		lb := rules.LowerBounds(spec.Spec{Placement: vPlacement(t, 8), MicroBatches: n, Memory: 4}).Makespan
		for k, r := range append(row, result{makespan: lb, fits: true}) {
			sweepChart.Series[k].Points = append(sweepChart.Series[k].Points, chart.Point{X: float64(n), Y: float64(r.makespan) / float64(n)})
		}
		vs := func(r result) float64 { return 100 * (float64(r.makespan)/float64(row[0].makespan) - 1) }
		fmt.Fprintf(&sweep, "| %d | %d | %d | %d | %d | %+.1f%% | %+.1f%% | %d |\n", n, row[0].makespan, row[1].makespan, row[2].makespan, row[3].makespan,
			vs(row[2]), vs(row[3]), lb)
		t.Logf("sweep N=%d: %v", n, row)
	}
	for name, c := range map[string]*chart.Line{"memory-budget.svg": budgetChart, "memory-sweep.svg": sweepChart} {
		var b bytes.Buffer
		if err := c.WriteSVG(&b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "docs", "img", name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc := filepath.Join("..", "docs", "memory-experiment.md")
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := replaceBetween(t, string(data), "budgets", table.String())
	text = replaceBetween(t, text, "sweep", sweep.String())
	text = replaceBetween(t, text, "offload-gain", gain.String())
	if err := os.WriteFile(doc, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

var offloadGain = flag.Bool("offload-gain", false, "run the offload-gain rows of OptPipe's experiment alone and rewrite that table of docs/memory-experiment.md")

// The offload-gain table: offload alone against PipeOffload, 8 devices,
// 16 micro-batches, memory 4 to 2 (its rows are the full experiment's).
const gainHeader = "| memory | PipeOffload | 20 % mark | tessel, offload only | with a SAT solver | gain | lower bound, offload only | host-channel bound | 20 % |\n|---|---|---|---|---|---|---|---|---|\n"

// gainSAT is the makespan of the schedule a SAT solver found at memory
// mem (testdata/offload-gain-memory<mem>-sat.json: tessel optimal --cnf,
// CaDiCaL, tessel optimal --answer; docs/memory-experiment.md), verified
// as the table's problem; 0 where there is none. The solver took 20
// minutes and more, so the table reads its answer rather than run it.
func gainSAT(t testing.TB, mem int) int {
	t.Helper()
	path := filepath.Join("testdata", fmt.Sprintf("offload-gain-memory%d-sat.json", mem))
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0
	}
	s, err := schedule.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if !s.Placement.Equal(vOffloadOnly(t, 8)) || s.MicroBatches != 16 || s.Memory != mem {
		t.Fatalf("%s: %s, %d micro-batches, memory %d: not the table's problem at memory %d", path, s.Placement.Name, s.MicroBatches, s.Memory, mem)
	}
	if off, rec := s.Count(); rec > 0 || off == 0 {
		t.Fatalf("%s: %d offloads, %d recomputes: not offload alone", path, off, rec)
	}
	return schedule.Makespan(s)
}

// gainVerdict says whether a makespan 20 % shorter than PipeOffload's po
// is reached by off or ruled out by the bound lb (mark: the longest
// makespan 20 % shorter).
func gainVerdict(po, off, lb int) (mark int, verdict string) {
	mark = 4 * po / 5
	switch {
	case off <= mark:
		return mark, "reached"
	case lb > mark:
		return mark, "ruled out"
	}
	return mark, "open"
}

// gainRow is the table's row at memory mem, PipeOffload's makespan po
// and tessel's with offload alone off (the search's, and a SAT solver's
// where it found one: gainSAT), with the bounds of schedules that offload
// only. The gain is the shorter one's.
func gainRow(t testing.TB, mem, po, off int) string {
	sp := spec.Spec{Placement: vOffloadOnly(t, 8), MicroBatches: 16, Memory: mem, Allowed: spec.Decisions{Offload: true}}
	lb, hc := rules.LowerBounds(sp).Makespan, bound.HostChannel(sp)
	best, satCell := off, "—"
	if sat := gainSAT(t, mem); sat > 0 {
		best, satCell = min(off, sat), fmt.Sprint(sat)
	}
	mark, verdict := gainVerdict(po, best, max(lb, hc))
	return fmt.Sprintf("| %d | %d | %d | %d | %s | %.1f %% | %d | %d | %s |\n", mem, po, mark, off, satCell, 100*float64(po-best)/float64(po), lb, hc, verdict)
}

// TestOffloadGain: at memory 2, where tessel's offload alone is 151 and
// PipeOffload's 171, the host-channel bound rules 20 % out; at memory 3
// the SAT solver's schedule reaches it (docs/memory-experiment.md). With
// -offload-gain it runs the table's rows (tessel's searches included) and
// rewrites the table, as the full experiment does.
func TestOffloadGain(t *testing.T) {
	if !*offloadGain {
		po3, err := baseline.PipeOffload(spec.Spec{Placement: vPlacement(t, 8), MicroBatches: 16, Memory: 3})
		if err != nil {
			t.Fatal(err)
		}
		if sat := gainSAT(t, 3); sat == 0 {
			t.Error("memory 3: no SAT solver's schedule")
		} else if _, v := gainVerdict(schedule.Makespan(po3), sat, 0); v != "reached" {
			t.Errorf("memory 3: PipeOffload %d, the SAT solver's schedule %d: %s, want reached", schedule.Makespan(po3), sat, v)
		}
		sp := spec.Spec{Placement: vPlacement(t, 8), MicroBatches: 16, Memory: 2}
		po, err := baseline.PipeOffload(sp)
		if err != nil {
			t.Fatal(err)
		}
		lb := bound.HostChannel(spec.Spec{Placement: vOffloadOnly(t, 8), MicroBatches: 16, Memory: 2, Allowed: spec.Decisions{Offload: true}})
		// Any schedule above the mark (PipeOffload's own) is not 20 %
		// shorter; the question is whether the bound rules the rest out.
		if _, v := gainVerdict(schedule.Makespan(po), schedule.Makespan(po), lb); v != "ruled out" {
			t.Errorf("memory 2: PipeOffload %d, host-channel bound %d: %s, want ruled out", schedule.Makespan(po), lb, v)
		}
		return
	}
	gain := gainHeader
	for _, mem := range []int{4, 3, 2} {
		po := runCell(t, experimentMethods[colPipeOffload], 8, 16, mem)
		off := runCell(t, experimentMethods[colOffloadOnly], 8, 16, mem)
		if !po.fits || !off.fits {
			t.Fatalf("memory %d: PipeOffload %v, offload only %v", mem, po, off)
		}
		gain += gainRow(t, mem, po.makespan, off.makespan)
	}
	doc := filepath.Join("..", "docs", "memory-experiment.md")
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(doc, []byte(replaceBetween(t, string(data), "offload-gain", gain)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replaceBetween replaces what lies between the lines
// "<!-- experiment: name -->" and "<!-- experiment: end -->" after it.
func replaceBetween(t testing.TB, text, name, body string) string {
	t.Helper()
	begin := "<!-- experiment: " + name + " -->\n"
	i := strings.Index(text, begin)
	if i < 0 {
		t.Fatalf("docs/memory-experiment.md: no %q", begin)
	}
	i += len(begin)
	j := strings.Index(text[i:], "<!-- experiment: end -->")
	if j < 0 {
		t.Fatalf("docs/memory-experiment.md: no end after %q", begin)
	}
	return text[:i] + body + text[i+j:]
}

// OptPipe's gain over PipeOffload (Qi et al., "OptPipe", §5.2: "more than
// 20 %" where memory is limited) in this page's setting — 8 devices, the
// V placement in 16 chunks, every move 2 — with offload alone: where the
// budget leaves room for more than PipeOffload keeps (4, 6 and 8 chunk
// activations, 16 micro-batches), tessel's makespan is at most 80 % of
// PipeOffload's.
func TestOptPipeGainOverPipeOffload(t *testing.T) {
	for _, mem := range []int{4, 6, 8} {
		po, err := baseline.PipeOffload(spec.Spec{Placement: vPlacement(t, 8), MicroBatches: 16, Memory: mem})
		if err != nil {
			t.Fatal(err)
		}
		s, err := tesselOffloadRun(t, 8, 16, mem)
		if err != nil {
			t.Fatal(err)
		}
		if err := verify.Schedule(s); err != nil {
			t.Fatal(err)
		}
		got, ref := schedule.Makespan(s), schedule.Makespan(po)
		if 5*got > 4*ref {
			t.Errorf("memory %d: tessel %d, PipeOffload %d: less than 20 %% shorter", mem, got, ref)
		}
	}
}

// Where 20 % is out of reach (docs/memory.md, "8 devices"): one stage per
// device, F = I = W = 1 and every move 1, PipeOffload is within 20 % of
// the lower bound at every budget from 2 to 2·D activations, N = 16 and
// 64, so no schedule, searched or not, can be 20 % shorter.
func TestOptPipeGainBoundOneStage(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 8, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithOffload(1)
	for _, n := range []int{16, 64} {
		for mem := 2; mem <= 16; mem++ {
			po, err := baseline.PipeOffload(spec.Spec{Placement: p, MicroBatches: n, Memory: mem})
			if err != nil {
				t.Fatalf("N=%d, memory %d: %v", n, mem, err)
			}
			lb := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: n, Memory: mem}).Makespan
			if ref := schedule.Makespan(po); 5*lb <= 4*ref {
				t.Errorf("N=%d, memory %d: lower bound %d, PipeOffload %d: 20 %% is not ruled out", n, mem, lb, ref)
			}
		}
	}
}
