package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/partition"
)

// partitionOptions are the flags of tessel partition (and the partition
// half of tessel plan).
type partitionOptions struct {
	Model         string
	Devices       int      // 0: the model's
	CPUs          int      // -1: the model's
	Memory        *float64 // nil: the model's
	Order         string
	Chunks        int
	NonContiguous bool
	IPTimeLimit   time.Duration
	Expert        string
	TimeUnit      float64
	MemoryUnit    float64
	Out           string // the placement file
	Force, JSON   bool
}

func partitionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Usage: "the model: a layer profile or a graph in Tarnawski et al.'s format (JSON `FILE`, see docs/formats.md)"},
		&cli.IntFlag{Name: "devices", Aliases: []string{"d"}, Usage: "accelerators k", DefaultText: "the model's \"devices\" or maxFPGAs"},
		&cli.IntFlag{Name: "cpus", Usage: "CPU cores ℓ (graphs in Tarnawski et al.'s format only)", Value: -1, DefaultText: "the model's maxCPUs"},
		&cli.Float64Flag{Name: "memory", Aliases: []string{"m"}, Usage: "memory cap of one accelerator, in the model's unit (0: none)", DefaultText: "the model's"},
		&cli.StringFlag{Name: "order", Usage: "with --chunks: stage s on device s mod D (loop) or down and back up (v, 2 chunks)", Value: "loop"},
		&cli.IntFlag{Name: "chunks", Usage: "stages per device C (interleaved placements: C·D stages)", Value: 1},
		&cli.BoolFlag{Name: "non-contiguous", Usage: "the max-load integer program (Z3) instead of the DP: stages need not be contiguous"},
		&cli.DurationFlag{Name: "ip-time-limit", Usage: "time limit of --non-contiguous; the best split found and its gap are reported", Value: 60 * time.Second},
		&cli.StringFlag{Name: "expert", Usage: "also evaluate a given split, a JSON `FILE` in Tarnawski et al.'s expert format (node ids per accelerator)"},
		&cli.Float64Flag{Name: "time-unit", Usage: "model time of one placement time step", DefaultText: "the smallest block time over the least k ≤ 10 that keeps every block within 5%"},
		&cli.Float64Flag{Name: "memory-unit", Usage: "activation memory of one placement memory unit", DefaultText: "1 per stage, the Tessel paper's convention"},
	}
}

func partitionOptionsFrom(c *cli.Context) partitionOptions {
	o := partitionOptions{
		Model: c.String("model"), Devices: c.Int("devices"), CPUs: c.Int("cpus"), Order: c.String("order"), Chunks: c.Int("chunks"),
		NonContiguous: c.Bool("non-contiguous"), IPTimeLimit: c.Duration("ip-time-limit"), Expert: c.String("expert"),
		TimeUnit: c.Float64("time-unit"), MemoryUnit: c.Float64("memory-unit"), Force: c.Bool("force"), JSON: c.Bool("json"),
	}
	if c.IsSet("memory") {
		m := c.Float64("memory")
		o.Memory = &m
	}
	return o
}

func partitionCommand() *cli.Command {
	return &cli.Command{
		Name:  "partition",
		Usage: "cut a model into pipeline stages of least time per sample (Tarnawski et al.'s DP or IP) and write a placement",
		UsageText: "tessel partition --model gpt.json --devices 4 --out gpt-placement.json\n" +
			"   tessel partition --model bert24_training.json            (a graph in Tarnawski et al.'s format: its own k, ℓ and cap)\n" +
			"   tessel partition --model gpt.json --devices 4 --chunks 2 --order v --out p.json\n" +
			"   tessel partition --model bert_l-3_inference.json --non-contiguous --ip-time-limit 30s",
		Description: "Finds the contiguous split of least maximum load onto k accelerators and ℓ CPU cores under the\n" +
			"memory cap by dynamic programming over the ideals of the graph (Tarnawski et al., §5.1.1; a layer's\n" +
			"forward and backward on one device, appendix B), or, with --non-contiguous, any split by the\n" +
			"max-load integer program solved with Z3 (the best found within --ip-time-limit, with its gap).\n" +
			"The max load is the time per sample of a pipeline without bubbles. Beside it: the even split by\n" +
			"layer count, a greedy fill and, with --expert, a given split. --out writes a placement for\n" +
			"tessel search: stages become blocks on their devices, times in --time-unit steps.",
		Flags: append(partitionFlags(),
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the placement to a JSON `FILE` (for tessel search --placement-file)"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite --out if it exists"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON summary instead of text"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("partition: unexpected argument %q", c.Args().First())
			}
			o := partitionOptionsFrom(c)
			o.Out = c.String("out")
			return runPartition(c.Context, o, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// partitionResult is what tessel partition computes, and its --json.
type partitionResult struct {
	Model        string          `json:"model"`
	Accelerators int             `json:"accelerators"`
	CPUs         int             `json:"cpus"`
	MemoryCap    float64         `json:"memory_cap"`
	Training     bool            `json:"training"`
	Method       string          `json:"method"`
	Contiguous   bool            `json:"contiguous"`
	MaxLoad      float64         `json:"max_load"`
	SingleDevice float64         `json:"single_device"`
	Ideals       int             `json:"ideals,omitempty"`
	IP           *ipSummary      `json:"ip,omitempty"`
	Stages       []stageSummary  `json:"stages"`
	Baselines    []splitRow      `json:"baselines"`
	Placement    *placementBrief `json:"placement"`
	Seconds      float64         `json:"seconds"`
	split        *partition.Split
	converted    *partition.Converted
	graph        *partition.Graph
	stageDevices []int
}

type ipSummary struct {
	LowerBound float64 `json:"lower_bound"`
	Gap        float64 `json:"gap"`
	Proven     bool    `json:"proven"`
	Checks     int     `json:"solver_calls"`
}

type stageSummary struct {
	Stage    int      `json:"stage"`
	Device   int      `json:"device"`
	CPU      bool     `json:"cpu,omitempty"`
	Nodes    []string `json:"nodes"`
	Load     float64  `json:"load"`
	Compute  float64  `json:"compute"`
	Comm     float64  `json:"comm"`
	Forward  float64  `json:"forward"`
	Backward float64  `json:"backward"`
	Memory   float64  `json:"memory"`
}

type splitRow struct {
	Method     string  `json:"method"`
	MaxLoad    float64 `json:"max_load"`
	Fits       bool    `json:"fits"`
	Contiguous bool    `json:"contiguous"`
}

type placementBrief struct {
	File          string  `json:"file,omitempty"`
	Devices       int     `json:"devices"`
	Blocks        int     `json:"blocks"`
	TimeUnit      float64 `json:"time_unit"`
	RoundingError float64 `json:"rounding_error"`
	MaxLoadError  float64 `json:"max_load_error"`
}

// loadModel reads the model and applies the device flags; every failure
// is a usage error.
func (o partitionOptions) loadModel() (*partition.Graph, error) {
	if o.Model == "" {
		return nil, usageErrorf("no model: give --model FILE (a layer profile or a graph in Tarnawski et al.'s format)")
	}
	g, err := partition.Load(o.Model)
	if err != nil {
		return nil, &usageError{err}
	}
	if o.Devices < 0 {
		return nil, usageErrorf("--devices must be at least 1, got %d", o.Devices)
	}
	if o.Devices > 0 {
		g.Accelerators = o.Devices
	}
	if g.Accelerators == 0 {
		return nil, usageErrorf("%s: no device count: give --devices or \"devices\" in the model", o.Model)
	}
	if o.CPUs < -1 {
		return nil, usageErrorf("--cpus must be at least 0, got %d", o.CPUs)
	}
	if o.CPUs > 0 && g.IDs == nil {
		return nil, usageErrorf("%s: a layer profile has no CPU times: --cpus applies to graphs in Tarnawski et al.'s format", o.Model)
	}
	if o.CPUs >= 0 {
		g.CPUs = o.CPUs
	}
	if o.Memory != nil {
		if *o.Memory < 0 || math.IsNaN(*o.Memory) || math.IsInf(*o.Memory, 0) {
			return nil, usageErrorf("--memory must be a finite number ≥ 0, got %v", *o.Memory)
		}
		g.Memory = *o.Memory
	}
	if g.Name == "" {
		g.Name = strings.TrimSuffix(filepath.Base(o.Model), filepath.Ext(o.Model))
	}
	return g, nil
}

func (o partitionOptions) check() error {
	if err := checkAtLeast("chunks", o.Chunks, 1); err != nil {
		return err
	}
	if o.Order != "loop" && o.Order != "v" {
		return usageErrorf("--order must be loop or v, got %q", o.Order)
	}
	if o.Order == "v" && o.Chunks != 2 {
		return usageErrorf("--order v takes --chunks 2, got %d", o.Chunks)
	}
	if o.Chunks > 1 && o.NonContiguous {
		return usageErrorf("--chunks and --non-contiguous do not go together")
	}
	if o.TimeUnit < 0 || o.MemoryUnit < 0 {
		return usageErrorf("--time-unit and --memory-unit must be ≥ 0")
	}
	if o.IPTimeLimit <= 0 {
		return usageErrorf("--ip-time-limit must be positive, got %v", o.IPTimeLimit)
	}
	if o.Out != "" && !o.Force {
		if _, err := os.Stat(o.Out); err == nil {
			return usageErrorf("%s exists (use --force to overwrite it)", o.Out)
		}
	}
	return nil
}

// partitionModel runs the partition the options ask for, with the
// baselines, and converts the split to a placement.
func partitionModel(ctx context.Context, o partitionOptions, stderr io.Writer) (*partitionResult, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	g, err := o.loadModel()
	if err != nil {
		return nil, err
	}
	if o.CPUs < 0 && o.Chunks > 1 {
		g.CPUs = 0
	}
	res := &partitionResult{Model: g.Name, Accelerators: g.Accelerators, CPUs: g.CPUs, MemoryCap: g.Memory, Training: g.Training(), graph: g}
	t0 := time.Now()
	dpOpt := partition.DPOptions{}
	if o.Chunks > 1 {
		if g.CPUs > 0 {
			return nil, usageErrorf("--chunks places stages on accelerators only: give --cpus 0")
		}
		dpOpt.Stages = o.Chunks * g.Accelerators
		// Each device holds C stages: a stage gets a C-th of the cap.
		dpOpt.MemoryPerStage = g.Memory / float64(o.Chunks)
		dpOpt.DeviceMemory = g.Memory
		for i := range dpOpt.Stages {
			dpOpt.StageDevices = append(dpOpt.StageDevices, chunkDevice(o.Order, i, g.Accelerators))
		}
	}
	dp, err := partition.Contiguous(ctx, g, dpOpt)
	if err != nil && o.Chunks > 1 && g.Memory > 0 {
		// A C-th of the cap per stage is safe but may be too strict: try
		// the whole cap per stage and check the devices' sums below.
		dpOpt.MemoryPerStage = g.Memory
		dp, err = partition.Contiguous(ctx, g, dpOpt)
	}
	if err != nil && g.Bytes {
		// No split fits the devices' bytes: split by time alone, and
		// the memory model below names the device that does not fit.
		uncapped := *g
		uncapped.Memory = 0
		dpOpt.MemoryPerStage, dpOpt.DeviceMemory = 0, 0
		dp, err = partition.Contiguous(ctx, &uncapped, dpOpt)
		if err == nil {
			dp.Split.Graph = g
		}
	}
	if err != nil {
		return nil, &usageError{fmt.Errorf("%s: %w", o.Model, err)}
	}
	if o.Chunks > 1 && len(dp.Split.Stages) < dpOpt.Stages {
		return nil, usageErrorf("%s: %d layers cannot make %d stages (%d chunks on %d devices)", o.Model, dp.Units, dpOpt.Stages, o.Chunks, g.Accelerators)
	}
	res.Method, res.split, res.Ideals, res.Contiguous = "dp", dp.Split, dp.Ideals, true
	if o.NonContiguous {
		ictx, cancel := context.WithTimeout(ctx, o.IPTimeLimit)
		bar := newProgress(stderr)
		ip, err := partition.NonContiguous(ictx, g, partition.IPOptions{Start: dp.Split, Progress: func(best, lb float64) {
			bar.show("partition (IP): best %.4f, lower bound %.4f, %s", best, lb, time.Since(t0).Round(time.Second))
		}})
		bar.done()
		cancel()
		if err != nil {
			return nil, err
		}
		res.Method, res.split, res.Contiguous = "ip", ip.Split.Ordered(), ip.Split.Contiguous
		res.IP = &ipSummary{LowerBound: round6(ip.LowerBound), Gap: round6(ip.Gap), Proven: ip.Proven, Checks: ip.Checks}
	}
	res.Seconds = secs(time.Since(t0))
	s := res.split
	res.MaxLoad, res.SingleDevice = round6(s.MaxLoad), round6(partition.SingleDevice(g))
	// Stage devices in pipeline order: chunked orders map C·D stages onto
	// D devices.
	D := g.Accelerators
	for i, st := range s.Stages {
		d := i
		if o.Chunks > 1 {
			d = chunkDevice(o.Order, i, D)
		}
		res.stageDevices = append(res.stageDevices, d)
		ss := stageSummary{Stage: i, Device: d, CPU: st.CPU, Load: round6(st.Load), Compute: round6(st.Compute), Comm: round6(st.Comm),
			Forward: round6(st.ForwardLoad), Backward: round6(st.BackwardLoad), Memory: round6(st.Memory)}
		for _, v := range st.Nodes {
			if g.Nodes[v].Backward && g.Nodes[v].Layer >= 0 {
				continue // a profile layer's backward is named by its forward
			}
			ss.Nodes = append(ss.Nodes, nodeName(g, v))
		}
		res.Stages = append(res.Stages, ss)
	}
	if o.Chunks > 1 && g.Memory > 0 {
		mem := make([]float64, D)
		for i, st := range s.Stages {
			mem[res.stageDevices[i]] += st.Memory
		}
		for d, m := range mem {
			if m > g.Memory*(1+1e-12) {
				return nil, usageErrorf("%s: the %d chunks on device %d need memory %g, over the cap %g (fewer --chunks or a larger --memory)", o.Model, o.Chunks, d, m, g.Memory)
			}
		}
	}
	if o.Chunks > 1 {
		// A device runs its C stages one after the other: its load is
		// their sum, and the pipeline's time per sample the largest sum.
		load := make([]float64, D)
		for i, st := range s.Stages {
			load[res.stageDevices[i]] += st.Load
		}
		res.MaxLoad = 0
		for _, l := range load {
			res.MaxLoad = math.Max(res.MaxLoad, round6(l))
		}
	}
	res.Baselines = append(res.Baselines, splitRow{Method: res.Method, MaxLoad: res.MaxLoad, Fits: s.Fits(), Contiguous: s.Contiguous})
	if o.Chunks == 1 {
		for _, b := range []struct {
			name string
			fn   func(*partition.Graph) (*partition.Split, error)
		}{{"even", partition.Even}, {"greedy", partition.Greedy}} {
			bs, err := b.fn(g)
			if err != nil {
				return nil, err
			}
			res.Baselines = append(res.Baselines, splitRow{Method: b.name, MaxLoad: round6(bs.MaxLoad), Fits: bs.Fits(), Contiguous: bs.Contiguous})
		}
		if res.Method == "ip" {
			res.Baselines = append(res.Baselines, splitRow{Method: "dp", MaxLoad: round6(dp.Split.MaxLoad), Fits: true, Contiguous: true})
		}
	}
	if o.Expert != "" {
		data, err := os.ReadFile(o.Expert)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		a, err := partition.ParseAssignment(data)
		if err != nil {
			return nil, usageErrorf("%s: %v", o.Expert, err)
		}
		es, err := a.Split(g)
		if err != nil {
			return nil, usageErrorf("%s: %v", o.Expert, err)
		}
		res.Baselines = append(res.Baselines, splitRow{Method: "expert", MaxLoad: round6(es.MaxLoad), Fits: es.Fits(), Contiguous: es.Contiguous})
	}
	conv, err := partition.ToPlacement(s, partition.PlacementOptions{Name: g.Name, TimeUnit: o.TimeUnit, MemoryUnit: o.MemoryUnit, Devices: res.stageDevices})
	if err != nil {
		return nil, err
	}
	res.converted = conv
	if g.Bytes {
		// The memory model: a device that cannot run its stages under
		// any schedule, even offloading or recomputing every activation.
		if _, err := conv.Memory(s, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", o.Model, err)
		}
	}
	p := conv.Placement
	res.Placement = &placementBrief{File: o.Out, Devices: p.Devices, Blocks: len(p.Blocks), TimeUnit: round6(conv.TimeUnit),
		RoundingError: round6(conv.RoundingError), MaxLoadError: round6(conv.MaxLoadError)}
	if o.Out != "" {
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			return nil, err
		}
		if err := writeNew(o.Out, o.Force, buf.Bytes()); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func nodeName(g *partition.Graph, v int) string {
	if g.IDs != nil {
		return fmt.Sprint(g.IDs[v])
	}
	return g.Nodes[v].Name
}

func runPartition(ctx context.Context, o partitionOptions, stdout, stderr io.Writer) error {
	res, err := partitionModel(ctx, o, stderr)
	if err != nil {
		return err
	}
	if o.JSON {
		return printJSON(stdout, res)
	}
	printPartition(stdout, res)
	return nil
}

// names shortens a stage's node list for the terminal.
func names(ns []string) string {
	if len(ns) <= 4 {
		return strings.Join(ns, " ")
	}
	return fmt.Sprintf("%s %s … %s (%d)", ns[0], ns[1], ns[len(ns)-1], len(ns))
}

func printPartition(w io.Writer, res *partitionResult) {
	kind := "inference"
	if res.Training {
		kind = "training (a layer's forward and backward on one device)"
	}
	bytes := res.graph != nil && res.graph.Bytes
	cap := "none"
	if res.MemoryCap > 0 {
		cap = fmt.Sprintf("%g", res.MemoryCap)
		if bytes {
			cap = partition.FormatMemory(res.MemoryCap, true)
		}
	}
	method := "contiguous split by the DP over ideals (Tarnawski et al., §5.1.1)"
	if res.Method == "ip" {
		method = "any split by the max-load integer program (Tarnawski et al., Fig. 6), Z3"
	}
	fmt.Fprintf(w, "tessel partition: %s, %d accelerators, %d CPUs, memory cap %s, %s\n", res.Model, res.Accelerators, res.CPUs, cap, kind)
	fmt.Fprintf(w, "method: %s\n\n", method)
	fmt.Fprintf(w, "%-6s %-9s %10s %10s %10s %10s %10s %12s  %s\n", "stage", "device", "load", "compute", "comm", "forward", "backward", "memory", "layers")
	for _, st := range res.Stages {
		dev := fmt.Sprint(st.Device)
		if st.CPU {
			dev += " (cpu)"
		}
		mem := fmt.Sprintf("%.4g", st.Memory)
		if bytes {
			mem = partition.FormatMemory(st.Memory, true)
		}
		fmt.Fprintf(w, "%-6d %-9s %10.2f %10.2f %10.2f %10.2f %10.2f %12s  %s\n", st.Stage, dev, st.Load, st.Compute, st.Comm, st.Forward, st.Backward, mem, names(st.Nodes))
	}
	fmt.Fprintf(w, "\nmax load       %.2f per sample (the time per sample of a pipeline without bubbles)\n", res.MaxLoad)
	fmt.Fprintf(w, "single device  %.2f (%.2f× the max load)\n", res.SingleDevice, res.SingleDevice/math.Max(res.MaxLoad, 1e-300))
	if res.IP != nil {
		status := "proven optimal"
		if !res.IP.Proven {
			status = fmt.Sprintf("not proven: lower bound %.2f, gap %.1f%% (time limit)", res.IP.LowerBound, 100*res.IP.Gap)
		}
		fmt.Fprintf(w, "IP             %s, %d solver calls, contiguous: %s\n", status, res.IP.Checks, yesNo(res.Contiguous))
	}
	fmt.Fprintf(w, "ideals         %d\n", res.Ideals)
	fmt.Fprintf(w, "time           %v\n\n", time.Duration(res.Seconds*float64(time.Second)).Round(time.Microsecond))
	fmt.Fprintf(w, "%-8s %10s %8s %5s %11s\n", "split", "max load", "vs best", "fits", "contiguous")
	for _, b := range res.Baselines {
		fmt.Fprintf(w, "%-8s %10.2f %7.2f× %5s %11s\n", b.Method, b.MaxLoad, b.MaxLoad/math.Max(res.MaxLoad, 1e-300), yesNo(b.Fits), yesNo(b.Contiguous))
	}
	p := res.Placement
	fmt.Fprintf(w, "\nplacement      %d devices, %d blocks, time unit %.4g (rounding moves a block by up to %.1f%% of the max load, the max load by %.1f%%)\n",
		p.Devices, p.Blocks, p.TimeUnit, 100*p.RoundingError, 100*p.MaxLoadError)
	if p.File != "" {
		fmt.Fprintf(w, "written        %s (tessel search --placement-file %s)\n", p.File, p.File)
	}
}

// chunkDevice is the device of stage i of an interleaved placement on D
// devices: s mod D in loop order; down 0..D-1 and back up D-1..0 in V
// order (docs/design.md, "Placements of the zero-bubble family").
func chunkDevice(order string, i, D int) int {
	if order == "v" {
		if i/D%2 == 1 {
			return D - 1 - i%D
		}
		return i % D
	}
	return i % D
}
