package partition

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// SampleLatencyOptions configure RunSampleLatency.
type SampleLatencyOptions struct {
	// Subgraphs is q of Tarnawski et al.'s §4.1: contiguous subgraphs per
	// accelerator (0 or 1: a contiguous split).
	Subgraphs int
	// TimeLimit bounds the integer program (0: until ctx ends); the
	// baselines are not counted.
	TimeLimit time.Duration
	Seed      int
	Progress  func(best, lowerBound float64)
	// Expert is a given split to evaluate beside the others; nil: none.
	Expert *Split
}

// SampleLatencyReport is the split of least single-sample latency and the
// baselines of Tarnawski et al.'s Table 4 beside it; it is also the JSON
// form of tessel partition --objective latency --json.
type SampleLatencyReport struct {
	Model        string  `json:"model"`
	Accelerators int     `json:"accelerators"`
	CPUs         int     `json:"cpus"`
	MemoryCap    float64 `json:"memory_cap"`
	Objective    string  `json:"objective"` // "latency"
	Subgraphs    int     `json:"subgraphs_per_accelerator"`
	Contiguous   bool    `json:"contiguous"`
	// Latency is the best split's, exact; LowerBound is proven, Gap =
	// (Latency − LowerBound) / Latency.
	Latency    float64 `json:"latency"`
	LowerBound float64 `json:"lower_bound"`
	Gap        float64 `json:"gap"`
	Proven     bool    `json:"proven"`
	ProvenBy   string  `json:"proven_by,omitempty"` // "relaxation" or "solver"
	Checks     int     `json:"solver_calls"`
	// Found says where the best split comes from: "ip" (Z3), "chain" or
	// "local search" (MinSampleLatency's primal heuristics), or the baseline it
	// started from when nothing better was found.
	Found     string                  `json:"found"`
	Steps     []SampleSubgraphSummary `json:"subgraphs"`
	CPUNodes  []string                `json:"cpu_nodes"`
	Baselines []SampleLatencySummary  `json:"baselines"`
	Seconds   float64                 `json:"seconds"`

	Split    *Split          `json:"-"`
	Schedule *SampleSchedule `json:"-"`
}

// SampleSubgraphSummary is one subgraph of the best split.
type SampleSubgraphSummary struct {
	Device  int      `json:"device"`
	Piece   int      `json:"piece"`
	Start   float64  `json:"start"`
	Finish  float64  `json:"finish"`
	CommIn  float64  `json:"comm_in"`
	Compute float64  `json:"compute"`
	CommOut float64  `json:"comm_out"`
	Memory  float64  `json:"memory"`
	Nodes   []string `json:"nodes"`
}

// SampleLatencySummary is one split's single-sample latency (a column of
// Table 4), with its max load for comparison.
type SampleLatencySummary struct {
	Method     string  `json:"method"`
	Latency    float64 `json:"latency"`
	MaxLoad    float64 `json:"max_load"`
	Fits       bool    `json:"fits"`
	Contiguous bool    `json:"contiguous"`
}

// RunSampleLatency finds the split of least single-sample latency (MinSampleLatency,
// from the better of the greedy fill and the max-load DP's split) and
// evaluates the baselines of Tarnawski et al.'s Table 4 beside it: the
// greedy fill (GreedyFill), the max-load DP's split (Contiguous) and, when
// given, an expert split. Errors that the model causes are
// ErrUnsplittable.
func RunSampleLatency(ctx context.Context, g *Graph, opt SampleLatencyOptions) (*SampleLatencyReport, error) {
	t0 := time.Now()
	if err := g.Validate(); err != nil {
		return nil, err
	}
	if g.Training() {
		return nil, unsplittable{errors.New("the latency objective is for inference graphs: this one has backward nodes")}
	}
	if g.Accelerators == 0 {
		return nil, unsplittable{errors.New("the latency objective needs at least one accelerator")}
	}
	q := max(opt.Subgraphs, 1)
	res := &SampleLatencyReport{Model: g.Name, Accelerators: g.Accelerators, CPUs: g.CPUs, MemoryCap: g.Memory, Objective: "latency", Subgraphs: q}
	type cand struct {
		name   string
		split  *Split
		lat    float64
		pieces int
	}
	var cands []cand
	add := func(name string, s *Split) error {
		sc, err := SplitSampleLatency(s)
		if err != nil {
			return fmt.Errorf("%s split: %v", name, err)
		}
		cands = append(cands, cand{name, s, sc.Latency, sc.MaxPieces()})
		res.Baselines = append(res.Baselines, SampleLatencySummary{Method: name, Latency: round6(sc.Latency), MaxLoad: round6(s.MaxLoad), Fits: s.Fits(), Contiguous: sc.MaxPieces() <= 1})
		return nil
	}
	if gs, err := GreedyFill(g); err == nil {
		if err := add("greedy", gs); err != nil {
			return nil, err
		}
	}
	dp, err := Contiguous(ctx, g, DPOptions{})
	if err != nil && ctx.Err() != nil {
		return nil, err
	}
	if err == nil {
		if err := add("max-load dp", dp.Split); err != nil {
			return nil, err
		}
	}
	if opt.Expert != nil {
		if err := add("expert", opt.Expert); err != nil {
			return nil, err
		}
	}
	var start *cand
	for i, c := range cands {
		if c.split.Fits() && c.split.Colocated && c.pieces <= q && (start == nil || c.lat < start.lat) {
			start = &cands[i]
		}
	}
	ictx, cancel := ctx, context.CancelFunc(func() {})
	if opt.TimeLimit > 0 {
		ictx, cancel = context.WithTimeout(ctx, opt.TimeLimit)
	}
	ipOpt := MinSampleLatencyOptions{Subgraphs: q, Seed: opt.Seed, Progress: opt.Progress}
	if start != nil {
		ipOpt.Start = start.split
	}
	ip, err := MinSampleLatency(ictx, g, ipOpt)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, unsplittable{err}
	}
	res.Found = "ip"
	switch {
	case !ip.Improved && start != nil:
		res.Found = start.name
	case ip.Heuristic != "":
		res.Found = ip.Heuristic
	}
	res.Split, res.Schedule = ip.Split, ip.Schedule
	res.Latency, res.LowerBound, res.Gap = round6(ip.Latency), round6(ip.LowerBound), round6(ip.Gap)
	res.Proven, res.ProvenBy, res.Checks = ip.Proven, ip.ProvenBy, ip.Checks
	res.Contiguous = ip.Schedule.MaxPieces() <= 1
	for _, st := range ip.Schedule.Subgraphs {
		ss := SampleSubgraphSummary{Device: st.Device, Piece: st.Piece, Start: round6(st.Start), Finish: round6(st.Finish),
			CommIn: round6(st.CommIn), Compute: round6(st.Compute), CommOut: round6(st.CommOut), Memory: round6(st.Memory)}
		for _, v := range st.Nodes {
			ss.Nodes = append(ss.Nodes, g.NodeName(v))
		}
		res.Steps = append(res.Steps, ss)
	}
	res.CPUNodes = []string{}
	for _, v := range ip.Schedule.CPUNodes {
		res.CPUNodes = append(res.CPUNodes, g.NodeName(v))
	}
	ipRow := SampleLatencySummary{Method: "ip", Latency: res.Latency, MaxLoad: round6(ip.Split.MaxLoad), Fits: ip.Split.Fits(), Contiguous: res.Contiguous}
	res.Baselines = append([]SampleLatencySummary{ipRow}, res.Baselines...)
	res.Seconds = round6(time.Since(t0).Seconds())
	return res, nil
}
