package measure

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/profile"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// smallConfig is a decoder of 2 layers: embedding, decoder.0, decoder.1,
// head.
var smallConfig = profile.Config{Layers: 2, Hidden: 8, Heads: 2, FFN: 16, Seq: 4, Batch: 1, Vocab: 16, DType: "float64", Optimizer: "sgd", LR: 0.01}

// modelFile is a profile of smallConfig with the given times (ms) per
// layer: forward, input, weight.
func modelFile(t testing.TB, times [][3]float64) []byte {
	return modelFileOf(t, smallConfig, times)
}

func modelFileOf(t testing.TB, cfg profile.Config, times [][3]float64) []byte {
	t.Helper()
	res := &profile.Result{Meta: profile.Meta{Tool: "tessel profile", Model: "decoder", Config: &cfg, Device: "cpu",
		DType: cfg.DType, Torch: "test", Clock: "time.perf_counter_ns", Threads: 1, Warmup: 1, Repeats: 3, TimeUnit: "ms"}, DeviceBytes: 1 << 30}
	for i, name := range cfg.LayerNames() {
		p := func(x float64) profile.Pass { return profile.Pass{Median: x, P10: x * 0.9, P90: x * 1.1} }
		res.Layers = append(res.Layers, profile.Layer{Name: name, Forward: p(times[i][0]), Input: p(times[i][1]), Weight: p(times[i][2]),
			ActivationBytes: 100, CheckpointBytes: 10, ParamBytes: 1000, OutputBytes: 64})
	}
	data := res.ModelFile()
	if _, err := partition.Parse(data); err != nil {
		t.Fatal(err)
	}
	return data
}

var layerTimes = [][3]float64{{1, 0.5, 1}, {10, 9, 12}, {10, 9, 12}, {4, 3, 5}}

// zbh1 is ZB-H1 of n micro-batches on the 2-device split v-shape, its
// non-blocking programs and the decoder's layers on its blocks (two a
// block).
func zbh1(t testing.TB, n int) ([]*runtimegen.Program, *runtimegen.Decoder) {
	t.Helper()
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := baseline.ZBH1(spec.New(p, n))
	if err != nil {
		t.Fatal(err)
	}
	return programs(t, s)
}

func programs(t testing.TB, s *schedule.Schedule) ([]*runtimegen.Program, *runtimegen.Decoder) {
	t.Helper()
	progs, err := runtimegen.Generate(s, runtimegen.NonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := runtimegen.NewDecoder(s.Placement, smallConfig, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return progs, dec
}

// fakeRun turns timelines into the traces a run would write.
func fakeRun(progs []*runtimegen.Program, its []Timeline) []*RankTrace {
	ts := make([]*RankTrace, len(progs))
	for d, prog := range progs {
		t := &RankTrace{Rank: d, Placement: prog.Placement, MicroBatches: prog.MicroBatches, Ops: len(prog.Ops), Host: "h",
			Device: "cpu", Backend: "gloo", DType: "float64", Torch: "test", Threads: 1, Clock: "time.perf_counter_ns", Warmup: 1}
		for k, tl := range its {
			it := IterationTrace{Start: int64(k) * 1e12}
			for _, s := range tl[d] {
				it.Ops = append(it.Ops, [2]int64{int64(math.Round(s.Start * 1e6)), int64(math.Round(s.End * 1e6))})
			}
			t.Iterations = append(t.Iterations, it)
		}
		ts[d] = t
	}
	return ts
}

// A run whose every pass, transfer and action took other times than the
// model file says: Compare names the terms as measured, Fit recovers the
// true times (forward ×1.5, weight ×0.8, a transfer 2 ms, 0.25 ms per
// action), and the calibrated file predicts the run to the microsecond.
func TestFitRecoversTheTerms(t *testing.T) {
	data := modelFile(t, layerTimes)
	g, err := partition.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	progs, dec := zbh1(t, 4)
	costs, err := ModelCosts(g, dec, progs[0].Blocks)
	if err != nil {
		t.Fatal(err)
	}
	if got := costs.Block["f0"]; math.Abs(got-11) > 1e-9 {
		t.Fatalf("f0 costs %v, want the embedding's and decoder.0's forward, 11", got)
	}
	if got := costs.Block["w1"]; math.Abs(got-17) > 1e-9 {
		t.Fatalf("w1 costs %v, want decoder.1's and the head's weight gradient, 17", got)
	}
	// The first stage takes the model's input: the workers ask autograd
	// for no input gradient there (its weight block walks the graph).
	if got, ok := costs.Block["i0"]; !ok || got != 0 {
		t.Fatalf("i0 costs %v (%v), want 0: the first stage's input needs no gradient", got, ok)
	}
	truth := Costs{Block: map[string]float64{}, Transfer: 2, Overhead: 0.25}
	for _, b := range progs[0].Blocks {
		f := 1.0
		switch b.Kind {
		case placement.Forward:
			f = 1.5
		case placement.Weight:
			f = 0.8
		}
		truth.Block[b.ID] = costs.Block[b.ID] * f
	}
	real, err := Predict(progs, truth)
	if err != nil {
		t.Fatal(err)
	}
	// One iteration the machine slowed (every action 30 % longer): the
	// median is the undisturbed one, and the fit takes the least.
	slow := make(Timeline, len(real))
	for d := range real {
		for _, sp := range real[d] {
			slow[d] = append(slow[d], Span{sp.Start * 1.3, sp.End * 1.3})
		}
	}
	run := &Run{Name: "zb-h1", Progs: progs, Traces: fakeRun(progs, []Timeline{real, slow, real}), Costs: costs, Decoder: dec}
	rep, err := Compare(run, 3)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(rep.Measured.Iteration-real.End()) > 1e-3 || !rep.Outside || rep.Error >= 0 {
		t.Fatalf("measured %v (want %v), predicted %v, outside %v", rep.Measured.Iteration, real.End(), rep.Predicted.Iteration, rep.Outside)
	}
	want := map[string][2]float64{"forward": {18.75, 12.5}, "input": {6, 6}, "weight": {12, 15}, "transfer": {2, 0}, "overhead": {0.25, 0}}
	for _, term := range rep.Terms {
		w, ok := want[term.Name]
		if !ok {
			t.Errorf("unexpected term %q", term.Name)
			continue
		}
		if math.Abs(term.Measured-w[0]) > 1e-3 || math.Abs(term.Predicted-w[1]) > 1e-6 {
			t.Errorf("%s: measured %v against %v, want %v against %v", term.Name, term.Measured, term.Predicted, w[0], w[1])
		}
		delete(want, term.Name)
	}
	if len(want) > 0 {
		t.Errorf("terms missing: %v", want)
	}
	if !strings.Contains(rep.Culprit(), "forward") {
		t.Errorf("culprit %q: want the forward times", rep.Culprit())
	}
	cal, err := Calibrate(data, []*Run{run})
	if err != nil {
		t.Fatal(err)
	}
	c := cal.Calibration
	if math.Abs(c.ScaleOf("forward")-1.5) > 1e-4 || math.Abs(c.ScaleOf("weight")-0.8) > 1e-4 || math.Abs(c.ScaleOf("input")-1) > 1e-4 ||
		math.Abs(c.Transfer-2) > 1e-4 || math.Abs(c.ActionOverhead-0.25) > 1e-4 {
		t.Fatalf("calibration %s", Text(c))
	}
	if math.Abs(cal.Predicted[0]-real.End()) > 0.01 {
		t.Errorf("calibrated prediction %v, measured %v", cal.Predicted[0], real.End())
	}
	// Fitting again on top of the calibration keeps it (the costs of the
	// calibrated file already charge what the run measured).
	g2, err := partition.Parse(cal.Model)
	if err != nil {
		t.Fatal(err)
	}
	run.Costs, err = ModelCosts(g2, dec, progs[0].Blocks)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Fit([]*Run{run}, g2.Calibration)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(again.ScaleOf("forward")-1.5) > 1e-3 || math.Abs(again.ScaleOf("weight")-0.8) > 1e-3 {
		t.Errorf("fitted again: %s", Text(again))
	}
	// What the report prints (package report's MeasureRun): the
	// prediction outside the spread, every device's idle time, the
	// actions that differ most.
	if !rep.Outside || len(rep.Measured.Idle) < 2 || len(rep.Predicted.Idle) != len(rep.Measured.Idle) || len(rep.Actions) == 0 {
		t.Errorf("report: outside %v, idle %v measured, %v predicted, %d actions", rep.Outside, rep.Measured.Idle, rep.Predicted.Idle, len(rep.Actions))
	}
	var trace bytes.Buffer
	if err := Perfetto(&trace, []*Run{run}, []*Report{rep}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(trace.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	lanes := map[int]int{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "X" {
			lanes[e.Pid]++
		}
	}
	ops := len(progs[0].Ops) + len(progs[1].Ops)
	if len(lanes) != 2 || lanes[0] != ops || lanes[1] != ops {
		t.Errorf("trace: %v actions per process, want %d in each of 2", lanes, ops)
	}
}

// Predict times a blocking program's send and receive as a rendezvous,
// and a non-blocking one's as posts: the same schedule ends later
// blocking when transfers take time.
func TestPredictModes(t *testing.T) {
	data := modelFile(t, layerTimes)
	g, _ := partition.Parse(data)
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := baseline.ZBH1(spec.New(p, 4))
	if err != nil {
		t.Fatal(err)
	}
	var ends [2]float64
	for k, mode := range []runtimegen.Mode{runtimegen.NonBlocking, runtimegen.Blocking} {
		progs, err := runtimegen.Generate(s, mode)
		if err != nil {
			t.Fatal(err)
		}
		dec, _ := runtimegen.NewDecoder(p, smallConfig, nil, nil)
		c, err := ModelCosts(g, dec, progs[0].Blocks)
		if err != nil {
			t.Fatal(err)
		}
		c.Transfer = 3
		tl, err := Predict(progs, c)
		if err != nil {
			t.Fatal(err)
		}
		ends[k] = tl.End()
	}
	if !(ends[1] > ends[0]) {
		t.Errorf("blocking %v, non-blocking %v: want blocking later", ends[1], ends[0])
	}
}

// Traces that do not belong to the programs, or are malformed, are
// refused in one line naming the file.
func TestLoadTracesRefuses(t *testing.T) {
	progs, _ := zbh1(t, 2)
	good := fakeRun(progs, []Timeline{mustPredict(t, progs)})
	cases := map[string]func(ts []*RankTrace) []byte{
		"not json":        func([]*RankTrace) []byte { return []byte("{") },
		"unknown field":   func([]*RankTrace) []byte { return []byte(`{"rank": 0, "bogus": 1}`) },
		"other placement": func(ts []*RankTrace) []byte { ts[0].Placement = "x"; return marshal(t, ts[0]) },
		"ops": func(ts []*RankTrace) []byte {
			ts[0].Ops--
			ts[0].Iterations[0].Ops = ts[0].Iterations[0].Ops[1:]
			return marshal(t, ts[0])
		},
		"unordered": func(ts []*RankTrace) []byte {
			ts[0].Iterations[0].Ops[1] = [2]int64{5, 1}
			return marshal(t, ts[0])
		},
		"no iterations": func(ts []*RankTrace) []byte { ts[0].Iterations = nil; return marshal(t, ts[0]) },
	}
	for name, mk := range cases {
		dir := t.TempDir()
		ts := fakeRun(progs, []Timeline{mustPredict(t, progs)})
		if err := os.WriteFile(filepath.Join(dir, TraceName(0)), mk(ts), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, TraceName(1)), marshal(t, good[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := LoadTraces(dir, progs)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), TraceName(0)) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := LoadTraces(t.TempDir(), progs); err == nil || !strings.Contains(err.Error(), "--trace") {
		t.Errorf("no traces: %v", err)
	}
}

func mustPredict(t *testing.T, progs []*runtimegen.Program) Timeline {
	t.Helper()
	c := Costs{Block: map[string]float64{}}
	for _, b := range progs[0].Blocks {
		c.Block[b.ID] = 1
	}
	tl, err := Predict(progs, c)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
