package measure

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/internal/torchrun"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/profile"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// ExperimentOptions size the end-to-end experiment (docs/measured.md).
type ExperimentOptions struct {
	Config  profile.Config
	Devices int   // ranks, one CPU thread each (gloo)
	N       []int // micro-batches, one row each
	// Warmup iterations are dropped; Iterations are measured.
	Warmup, Iterations int
	// ProfileWarmup and ProfileRepeats are tessel profile's rounds.
	ProfileWarmup, ProfileRepeats int
	// CalibrateN is the N whose runs the calibration is fitted to, the
	// other N's then predicted out of sample; 0 fits it to every run.
	CalibrateN int
	Dir        string // where every file goes (a new directory)
	Python     string // "": profile.FindPython's choice
	Progress   io.Writer
}

// Methods are the experiment's schedules, in the order of its table (a
// new slice each call: no package state a caller could change).
func Methods() []string { return []string{"1f1b", "gpipe", "zb-h1", "tessel"} }

// Row is one schedule at one N: predicted before and after calibration,
// measured (the median iteration and the least and largest), and the
// bubble rates.
type Row struct {
	N                int        `json:"n"`
	Method           string     `json:"method"`
	Predicted        float64    `json:"predicted_ms"`
	Calibrated       float64    `json:"calibrated_ms"`
	Measured         float64    `json:"measured_ms"`
	Spread           [2]float64 `json:"spread_ms"`
	PredictedBubbles float64    `json:"predicted_bubble_rate"`
	MeasuredBubbles  float64    `json:"measured_bubble_rate"`
	// Replanned marks the runs after calibration: tessel's schedule
	// planned again from the calibrated file, and the first one run
	// again beside it (both predicted from the calibrated file only).
	Replanned bool `json:"replanned,omitempty"`
}

// ExperimentResult is the experiment's outcome.
type ExperimentResult struct {
	Options     ExperimentOptions    `json:"-"`
	Model       []byte               `json:"-"` // the model file profiled
	Profile     *profile.Result      `json:"-"`
	Calibration *profile.Calibration `json:"calibration"`
	Rows        []Row                `json:"rows"`
	// Load is /proc/loadavg at the start and the end.
	Load    [2]string `json:"load"`
	Seconds float64   `json:"seconds"`
}

// Experiment runs the loop end to end on this machine: profile the
// decoder of opts.Config, split it onto opts.Devices devices and plan
// (partition and search, as tessel plan does), then for every N build
// 1F1B, GPipe, ZB-H1 and tessel's schedule on that placement, run them
// with the generated workers (gloo, CPU, one thread per rank) and
// measure them against their prediction; fit a calibration to the runs of
// CalibrateN, predict every run again with it, plan tessel's schedule
// again from the calibrated model file, and run it where it changed.
func Experiment(ctx context.Context, opts ExperimentOptions) (*ExperimentResult, error) {
	t0 := time.Now()
	res := &ExperimentResult{Options: opts}
	res.Load[0] = loadavg()
	say := func(format string, args ...any) {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "experiment: "+format+"\n", args...)
		}
	}
	if len(opts.N) == 0 || opts.Devices < 2 || opts.Iterations < 1 {
		return nil, fmt.Errorf("experiment: want N, at least 2 devices and 1 iteration")
	}
	if opts.CalibrateN != 0 && !slices.Contains(opts.N, opts.CalibrateN) {
		return nil, fmt.Errorf("experiment: calibrate at N = %d, which is not among %v", opts.CalibrateN, opts.N)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	python, err := profile.FindPython(opts.Python)
	if err != nil {
		return nil, err
	}
	say("profiling the decoder %s", opts.Config.JSON())
	cfg := opts.Config
	prof, err := profile.Run(ctx, profile.Options{Config: &cfg, Warmup: opts.ProfileWarmup, Repeats: opts.ProfileRepeats,
		Python: python, Progress: opts.Progress})
	if err != nil {
		return nil, err
	}
	res.Profile, res.Model = prof, prof.ModelFile()
	if err := os.WriteFile(filepath.Join(opts.Dir, "model.json"), res.Model, 0o644); err != nil {
		return nil, err
	}
	pl, err := planSplit(ctx, res.Model, opts.Devices)
	if err != nil {
		return nil, err
	}
	say("split: %v", pl.stages)
	var jobs []expJob
	var runs []*Run
	// Every schedule at every N, in one launch, their iterations taking
	// turns: a change of the machine's load touches every one alike.
	for _, n := range opts.N {
		for _, m := range Methods() {
			s, err := build(ctx, pl.p, m, n)
			if err != nil {
				return nil, fmt.Errorf("experiment: %s, N = %d: %w", m, n, err)
			}
			j := expJob{n, m, filepath.Join(opts.Dir, fmt.Sprintf("n%d", n), m), s}
			if err := writeRuntime(j.s, pl.dec, j.dir); err != nil {
				return nil, err
			}
			jobs = append(jobs, j)
		}
	}
	say("running %s at N = %v, interleaved (%d iterations after %d warm-up)", strings.Join(Methods(), ", "), opts.N, opts.Iterations, opts.Warmup)
	var dirs []string
	for _, j := range jobs {
		dirs = append(dirs, j.dir)
	}
	if err := launch(ctx, python, dirs, opts.Warmup, opts.Iterations); err != nil {
		return nil, err
	}
	g, err := partition.Parse(res.Model)
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		r, err := Load(j.dir, filepath.Join(j.dir, "results"), g)
		if err != nil {
			return nil, err
		}
		r.Name = fmt.Sprintf("%s N=%d", j.method, j.n)
		runs = append(runs, r)
	}
	var fit []*Run
	for k, j := range jobs {
		if opts.CalibrateN == 0 || j.n == opts.CalibrateN {
			fit = append(fit, runs[k])
		}
	}
	cal, err := Calibrate(res.Model, fit)
	if err != nil {
		return nil, err
	}
	res.Calibration = cal.Calibration
	if err := os.WriteFile(filepath.Join(opts.Dir, "calibrated.json"), cal.Model, 0o644); err != nil {
		return nil, err
	}
	gc, err := partition.Parse(cal.Model)
	if err != nil {
		return nil, err
	}
	for k, j := range jobs {
		rep, err := Compare(runs[k], 0)
		if err != nil {
			return nil, err
		}
		costs, err := ModelCosts(gc, runs[k].Decoder, runs[k].Progs[0].Blocks)
		if err != nil {
			return nil, err
		}
		tl, err := Predict(runs[k].Progs, costs)
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, Row{N: j.n, Method: j.method, Predicted: rep.Predicted.Iteration, Calibrated: tl.End(),
			Measured: rep.Measured.Iteration, Spread: rep.Spread, PredictedBubbles: rep.Predicted.BubbleRate, MeasuredBubbles: rep.Measured.BubbleRate})
	}
	// Plan again from the calibrated file: where tessel's schedule
	// changes, run the new one too.
	plc, err := planSplit(ctx, cal.Model, opts.Devices)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(flat(plc.stages), flat(pl.stages)) || len(plc.stages) != len(pl.stages) {
		say("the calibrated file splits the model otherwise: %v", plc.stages)
	}
	rows, err := runReplanned(ctx, opts, python, jobs, [2]*planned{pl, plc}, gc)
	if err != nil {
		return nil, err
	}
	res.Rows = append(res.Rows, rows...)
	res.Load[1] = loadavg()
	res.Seconds = time.Since(t0).Seconds()
	return res, nil
}

// expJob is one schedule the experiment runs: at n micro-batches, by
// method, its runtime written into dir.
type expJob struct {
	n      int
	method string
	dir    string
	s      *schedule.Schedule
}

// runReplanned runs tessel's schedules planned again from the calibrated
// model file (plans[1]) where they differ from the first ones (plans[0],
// jobs), and returns their rows, measured against the calibrated model
// gc.
func runReplanned(ctx context.Context, opts ExperimentOptions, python string, jobs []expJob, plans [2]*planned, gc *partition.Graph) ([]Row, error) {
	pl, plc := plans[0], plans[1]
	// Where the plan changed, run the new schedule beside the old one
	// (interleaved, where both cut the model alike), and measure both.
	var again []expJob
	for _, n := range opts.N {
		s, err := build(ctx, plc.p, "tessel", n)
		if err != nil {
			return nil, err
		}
		old := jobs[slices.IndexFunc(jobs, func(j expJob) bool { return j.n == n && j.method == "tessel" })]
		if sameOrders(s, old.s) && plc.sameSplit(pl) {
			continue
		}
		j := expJob{n, "tessel re-planned", filepath.Join(opts.Dir, fmt.Sprintf("n%d", n), "tessel-replanned"), s}
		if err := writeRuntime(s, plc.dec, j.dir); err != nil {
			return nil, err
		}
		again = append(again, j)
		if plc.sameSplit(pl) {
			k := expJob{n, "tessel again", filepath.Join(opts.Dir, fmt.Sprintf("n%d", n), "tessel-again"), old.s}
			if err := writeRuntime(k.s, pl.dec, k.dir); err != nil {
				return nil, err
			}
			again = append(again, k)
		}
	}
	if len(again) == 0 {
		return nil, nil
	}
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, "experiment: running tessel's schedules planned again from the calibrated file beside the first ones\n")
	}
	var together, alone []string
	for _, j := range again {
		if plc.sameSplit(pl) {
			together = append(together, j.dir)
		} else {
			alone = append(alone, j.dir)
		}
	}
	for _, dirs := range [][]string{together, alone} {
		if len(dirs) == 0 {
			continue
		}
		if err := launch(ctx, python, dirs, opts.Warmup, opts.Iterations); err != nil {
			return nil, err
		}
	}
	var rows []Row
	for _, j := range again {
		r, err := Load(j.dir, filepath.Join(j.dir, "results"), gc)
		if err != nil {
			return nil, err
		}
		rep, err := Compare(r, 0)
		if err != nil {
			return nil, err
		}
		rows = append(rows, Row{N: j.n, Method: j.method, Predicted: rep.Predicted.Iteration, Calibrated: rep.Predicted.Iteration,
			Measured: rep.Measured.Iteration, Spread: rep.Spread, PredictedBubbles: rep.Predicted.BubbleRate,
			MeasuredBubbles: rep.Measured.BubbleRate, Replanned: true})
	}
	return rows, nil
}

// planned is a model split onto the devices as tessel plan splits it: the
// placement (its implied dependencies dropped, so that every baseline
// recognises its chain) and the decoder's layers per forward block.
type planned struct {
	p      *placement.Placement
	stages [][]string
	dec    *runtimegen.Decoder
}

func (pl *planned) sameSplit(o *planned) bool {
	if len(pl.stages) != len(o.stages) {
		return false
	}
	for i := range pl.stages {
		if !slices.Equal(pl.stages[i], o.stages[i]) {
			return false
		}
	}
	return true
}

func flat(xs [][]string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}

func planSplit(ctx context.Context, model []byte, devices int) (*planned, error) {
	g, err := partition.Parse(model)
	if err != nil {
		return nil, err
	}
	g.Accelerators = devices
	rep, err := partition.Run(ctx, g, partition.Options{})
	if err != nil {
		return nil, err
	}
	j, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	names, devs, err := partition.ReadStages(j)
	if err != nil {
		return nil, err
	}
	p := withoutImplied(rep.Converted.Placement)
	if g.Profile == nil || g.Profile.Config == nil {
		return nil, fmt.Errorf("the model file has no decoder config")
	}
	dec, err := runtimegen.NewDecoder(p, *g.Profile.Config, names, devs)
	if err != nil {
		return nil, err
	}
	return &planned{p: p, stages: names, dec: dec}, nil
}

// withoutImplied drops every dependency that other dependencies imply
// (a path of two or more), the transitive reduction: the schedules of the
// placement are the same, and the baselines find the chain they know.
func withoutImplied(p *placement.Placement) *placement.Placement {
	q := *p
	q.Deps = nil
	succ := make([][]int, len(p.Blocks))
	for _, d := range p.Deps {
		succ[d.From] = append(succ[d.From], d.To)
	}
	reach := func(from, to int, skip placement.Dep) bool {
		seen := make([]bool, len(p.Blocks))
		stack := []int{from}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, w := range succ[v] {
				if (placement.Dep{From: v, To: w}) == skip || seen[w] {
					continue
				}
				if w == to {
					return true
				}
				seen[w] = true
				stack = append(stack, w)
			}
		}
		return false
	}
	for _, d := range p.Deps {
		if !reach(d.From, d.To, d) {
			q.Deps = append(q.Deps, d)
		}
	}
	return &q
}

// build is method's schedule of n micro-batches on p: a baseline, or
// tessel's search (no memory budget: the CPU's memory holds them all).
func build(ctx context.Context, p *placement.Placement, method string, n int) (*schedule.Schedule, error) {
	if method == "tessel" {
		res, err := search.Run(ctx, spec.New(p, n), search.Options{})
		if err != nil {
			return nil, err
		}
		return res.Schedule, nil
	}
	m, ok := baseline.Lookup(method)
	if !ok {
		return nil, fmt.Errorf("no baseline %q", method)
	}
	return m.Build(spec.New(p, n))
}

func sameOrders(a, b *schedule.Schedule) bool {
	if len(a.Instances) != len(b.Instances) {
		return false
	}
	ga, gb := runtimegen.GlobalOrder(a), runtimegen.GlobalOrder(b)
	for i := range ga {
		if ga[i].Block != gb[i].Block || ga[i].Micro != gb[i].Micro {
			return false
		}
	}
	return true
}

// writeRuntime writes s's non-blocking programs and the decoder's workers
// into dir.
func writeRuntime(s *schedule.Schedule, dec *runtimegen.Decoder, dir string) error {
	progs, err := runtimegen.Generate(s, runtimegen.NonBlocking)
	if err != nil {
		return err
	}
	files, err := runtimegen.DecoderFiles(progs, "gloo", dec)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return runtimegen.WriteFiles(dir, files)
}

// launch runs the programs of dirs in one launch of the first's launch.sh
// (the others' programs too, with the first's workers: one decoder), their
// iterations taking turns, each saving and tracing into its results
// directory.
func launch(ctx context.Context, python string, dirs []string, warmup, iterations int) error {
	args := []string{filepath.Join(dirs[0], "launch.sh"), "--out", "results", "--warmup", strconv.Itoa(warmup),
		"--iterations", strconv.Itoa(iterations), "--trace", "--interleave"}
	for _, d := range dirs[1:] {
		abs, err := filepath.Abs(d)
		if err != nil {
			return err
		}
		args = append(args, "--programs", abs, "--out", filepath.Join(abs, "results"))
	}
	port, err := torchrun.FreePort()
	if err != nil {
		return err
	}
	cmd := torchrun.Command(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "PYTHON="+python, "MASTER_PORT="+strconv.Itoa(port), "OMP_NUM_THREADS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("experiment: launch of %s: %v\n%s", dirs[0], err, lastLines(string(out), 20))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// ExperimentConfig is the decoder of the page's experiment: 8 decoder
// layers whose forward takes tens of ms on this machine's CPU with one
// thread (Debian's PyTorch).
func ExperimentConfig() profile.Config { return profile.DefaultConfig() }

// CalibratedAt says which runs the calibration was fitted to.
func (res *ExperimentResult) CalibratedAt() string {
	if res.Options.CalibrateN != 0 {
		return fmt.Sprintf("the runs of N = %d (the others predicted out of sample)", res.Options.CalibrateN)
	}
	return "every run of 1F1B, GPipe, ZB-H1 and tessel at every N"
}
