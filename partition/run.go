package partition

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/placement"
)

// Options configure Run.
type Options struct {
	// Chunks is the number of stages per accelerator: Chunks·k stages on
	// k accelerators, the interleaved placements (0 or 1: one stage each).
	// Chunked stages go on accelerators only.
	Chunks int
	// Order places chunked stages: placement.Loop (stage s on device
	// s mod k) or placement.V (down the devices and back up, 2 chunks).
	Order placement.Order
	// NonContiguous runs the max-load integer program (NonContiguous,
	// Z3) from the DP's split, for at most IPTimeLimit (0: until ctx
	// ends), reporting progress to IPProgress when set.
	NonContiguous bool
	IPTimeLimit   time.Duration
	IPProgress    func(best, lowerBound float64)
	// Expert is a given split to evaluate beside the others (an
	// Assignment's Split); nil: none.
	Expert *Split
	// TimeUnit and MemoryUnit convert the split to a placement
	// (PlacementOptions); 0: the defaults.
	TimeUnit, MemoryUnit float64
	// Capacities are the devices' memories in the model's unit (a
	// cluster's "memory_bytes"); nil: the model's cap on every device.
	Capacities []float64
	// EmptyStages lets chunked stages hold no layer, as Megatron-Core's
	// layouts allow (DPOptions.EmptyStages); without it there must be at
	// least as many layers as stages.
	EmptyStages bool
}

// Check says what is wrong with the options, in the words of tessel
// partition's flags, or nil: at least one chunk, the loop or V order (V
// with 2 chunks), chunks only with the DP, units ≥ 0 and a positive time
// limit of the integer program.
func (o Options) Check() error {
	switch {
	case o.Chunks < 1:
		return fmt.Errorf("--chunks must be at least 1, got %d", o.Chunks)
	case o.Chunks > limits.Chunks:
		return fmt.Errorf("--chunks: %w", limits.Check("chunks", o.Chunks, limits.Chunks))
	case o.Order != placement.Loop && o.Order != placement.V:
		return fmt.Errorf("--order must be loop or v, got %q", o.Order)
	case o.Order == placement.V && o.Chunks != 2:
		return fmt.Errorf("--order v takes --chunks 2, got %d", o.Chunks)
	case o.Chunks > 1 && o.NonContiguous:
		return fmt.Errorf("--chunks and --non-contiguous do not go together")
	case o.EmptyStages && o.Chunks < 2:
		return fmt.Errorf("--empty-stages goes with --chunks (stages per device) of 2 or more")
	case !(o.TimeUnit >= 0) || !(o.MemoryUnit >= 0) || math.IsInf(o.TimeUnit, 0) || math.IsInf(o.MemoryUnit, 0):
		return fmt.Errorf("--time-unit and --memory-unit must be ≥ 0 (and finite)")
	case o.IPTimeLimit <= 0:
		return fmt.Errorf("--ip-time-limit must be positive, got %v", o.IPTimeLimit)
	}
	return nil
}

// Report is a partition and what it is compared with; it is also the
// JSON form of tessel partition --json.
type Report struct {
	Model        string         `json:"model"`
	Accelerators int            `json:"accelerators"`
	CPUs         int            `json:"cpus"`
	MemoryCap    float64        `json:"memory_cap"`
	Training     bool           `json:"training"`
	Method       string         `json:"method"` // "dp" or "ip"
	Contiguous   bool           `json:"contiguous"`
	MaxLoad      float64        `json:"max_load"` // chunked: the largest device's
	SingleDevice float64        `json:"single_device"`
	Ideals       int            `json:"ideals,omitempty"`
	IP           *IPSummary     `json:"ip,omitempty"`
	Stages       []StageSummary `json:"stages"`
	// Baselines are every split's max load: the one found first, then
	// the even split and the greedy fill (unchunked), the DP's beside the
	// IP's, and the expert's.
	Baselines []SplitSummary    `json:"baselines"`
	Placement *PlacementSummary `json:"placement"`
	Seconds   float64           `json:"seconds"`

	// Split is the split found, Converted its placement and
	// StageDevices the device of every stage in pipeline order.
	Split        *Split     `json:"-"`
	Converted    *Converted `json:"-"`
	StageDevices []int      `json:"-"`
	// Graph is the model partitioned.
	Graph *Graph `json:"-"`
}

// IPSummary is the integer program's outcome.
type IPSummary struct {
	LowerBound float64 `json:"lower_bound"`
	Gap        float64 `json:"gap"`
	Proven     bool    `json:"proven"`
	Checks     int     `json:"solver_calls"`
}

// StageSummary is one stage of the split.
type StageSummary struct {
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

// SplitSummary is one split's max load.
type SplitSummary struct {
	Method     string  `json:"method"`
	MaxLoad    float64 `json:"max_load"`
	Fits       bool    `json:"fits"`
	Contiguous bool    `json:"contiguous"`
}

// PlacementSummary describes the placement the split converts to.
type PlacementSummary struct {
	File          string  `json:"file,omitempty"` // where the caller wrote it
	Devices       int     `json:"devices"`
	Blocks        int     `json:"blocks"`
	TimeUnit      float64 `json:"time_unit"`
	RoundingError float64 `json:"rounding_error"`
	MaxLoadError  float64 `json:"max_load_error"`
}

// ErrUnsplittable marks a model that cannot be split as asked: the DP
// finds no split under the memory cap, too few layers for the chunks, or
// chunks over a device's cap (errors.Is).
var ErrUnsplittable = errors.New("cannot be split as asked")

type unsplittable struct{ error }

func (e unsplittable) Is(target error) bool { return target == ErrUnsplittable }
func (e unsplittable) Unwrap() error        { return e.error }

// ChunkMemoryError says that the chunks on one device need more memory
// than its cap together, though each fits alone.
type ChunkMemoryError struct {
	Chunks, Device int
	Memory, Cap    float64
}

func (e *ChunkMemoryError) Error() string {
	return fmt.Sprintf("the %d chunks on device %d need memory %g, over the cap %g", e.Chunks, e.Device, e.Memory, e.Cap)
}

// Is makes a ChunkMemoryError ErrUnsplittable.
func (e *ChunkMemoryError) Is(target error) bool { return target == ErrUnsplittable }

// ChunkDevice is the device of stage i of an interleaved placement on d
// devices: i mod d in loop order; down 0..d−1 and back up d−1..0 in V
// order.
func ChunkDevice(order placement.Order, i, d int) int {
	if order == placement.V && i/d%2 == 1 {
		return d - 1 - i%d
	}
	return i % d
}

// Run partitions g: the contiguous split of least max load by the DP
// (Contiguous) — with Chunks, Chunks·k stages, each under a Chunks-th of
// the cap, retried with the whole cap per stage where that finds none
// (each device's stages are then checked together) — or, with
// NonContiguous, the integer program's from it; the baselines beside it,
// and the placement it converts to (ToPlacement). Errors that the model
// and options cause are ErrUnsplittable.
func Run(ctx context.Context, g *Graph, opt Options) (*Report, error) {
	chunks := max(opt.Chunks, 1)
	res := &Report{Model: g.Name, Accelerators: g.Accelerators, CPUs: g.CPUs, MemoryCap: g.Memory, Training: g.Training()}
	t0 := time.Now()
	dpOpt := DPOptions{}
	if chunks > 1 {
		if g.CPUs > 0 {
			return nil, unsplittable{fmt.Errorf("chunked stages go on accelerators only: the model has %d CPUs", g.CPUs)}
		}
		dpOpt.Stages = chunks * g.Accelerators
		// Each device holds C stages: a stage gets a C-th of the cap.
		dpOpt.MemoryPerStage = g.Memory / float64(chunks)
		dpOpt.DeviceMemory = g.Memory
		dpOpt.EmptyStages = opt.EmptyStages
		for i := range dpOpt.Stages {
			dpOpt.StageDevices = append(dpOpt.StageDevices, ChunkDevice(opt.Order, i, g.Accelerators))
		}
		if err := g.Validate(); err != nil {
			return nil, err
		}
		u, err := contract(g)
		if err != nil {
			return nil, err
		}
		if u.n < dpOpt.Stages && !opt.EmptyStages {
			return nil, unsplittable{fmt.Errorf("%d layers cannot make %d stages (%d chunks on %d devices): every stage holds a layer unless --empty-stages lets some hold none, as Megatron-Core's layouts do",
				u.n, dpOpt.Stages, chunks, g.Accelerators)}
		}
	}
	dp, err := Contiguous(ctx, g, dpOpt)
	if err != nil && chunks > 1 && g.Memory > 0 {
		// A C-th of the cap per stage is safe but may be too strict: try
		// the whole cap per stage and check the devices' sums below.
		dpOpt.MemoryPerStage = g.Memory
		dp, err = Contiguous(ctx, g, dpOpt)
	}
	if err != nil && g.Bytes {
		// No split fits the devices' bytes: split by time alone, and
		// the memory model below names the device that does not fit.
		uncapped := *g
		uncapped.Memory = 0
		dpOpt.MemoryPerStage, dpOpt.DeviceMemory = 0, 0
		dp, err = Contiguous(ctx, &uncapped, dpOpt)
		if err == nil {
			dp.Split.Graph = g
		}
	}
	if err != nil {
		return nil, unsplittable{err}
	}
	if chunks > 1 && len(dp.Split.Stages) < dpOpt.Stages {
		return nil, unsplittable{fmt.Errorf("%d layers cannot make %d stages (%d chunks on %d devices)", dp.Units, dpOpt.Stages, chunks, g.Accelerators)}
	}
	res.Method, res.Split, res.Ideals, res.Contiguous = "dp", dp.Split, dp.Ideals, true
	if opt.NonContiguous {
		ictx, cancel := ctx, context.CancelFunc(func() {})
		if opt.IPTimeLimit > 0 {
			ictx, cancel = context.WithTimeout(ctx, opt.IPTimeLimit)
		}
		ip, err := NonContiguous(ictx, g, IPOptions{Start: dp.Split, Progress: opt.IPProgress})
		cancel()
		if err != nil {
			return nil, err
		}
		res.Method, res.Split, res.Contiguous = "ip", ip.Split.Ordered(), ip.Split.Contiguous
		res.IP = &IPSummary{LowerBound: round6(ip.LowerBound), Gap: round6(ip.Gap), Proven: ip.Proven, Checks: ip.Checks}
	}
	res.Seconds = round6(time.Since(t0).Seconds())
	s := res.Split
	res.MaxLoad, res.SingleDevice = round6(s.MaxLoad), round6(SingleDevice(g))
	// Stage devices in pipeline order: chunked orders map C·D stages onto
	// D devices.
	D := g.Accelerators
	for i, st := range s.Stages {
		d := i
		if chunks > 1 {
			d = ChunkDevice(opt.Order, i, D)
		}
		res.StageDevices = append(res.StageDevices, d)
		ss := StageSummary{Stage: i, Device: d, CPU: st.CPU, Load: round6(st.Load), Compute: round6(st.Compute), Comm: round6(st.Comm),
			Forward: round6(st.ForwardLoad), Backward: round6(st.BackwardLoad), Memory: round6(st.Memory)}
		for _, v := range st.Nodes {
			if g.Nodes[v].Backward && g.Nodes[v].Layer >= 0 {
				continue // a profile layer's backward is named by its forward
			}
			ss.Nodes = append(ss.Nodes, g.NodeName(v))
		}
		res.Stages = append(res.Stages, ss)
	}
	if chunks > 1 && g.Memory > 0 {
		mem := make([]float64, D)
		for i, st := range s.Stages {
			mem[res.StageDevices[i]] += st.Memory
		}
		for d, m := range mem {
			if m > g.Memory*(1+1e-12) {
				return nil, &ChunkMemoryError{Chunks: chunks, Device: d, Memory: m, Cap: g.Memory}
			}
		}
	}
	if chunks > 1 {
		// A device runs its C stages one after the other: its load is
		// their sum, and the pipeline's time per sample the largest sum.
		load := make([]float64, D)
		for i, st := range s.Stages {
			load[res.StageDevices[i]] += st.Load
		}
		res.MaxLoad = 0
		for _, l := range load {
			res.MaxLoad = math.Max(res.MaxLoad, round6(l))
		}
	}
	res.Baselines = append(res.Baselines, SplitSummary{Method: res.Method, MaxLoad: res.MaxLoad, Fits: s.Fits(), Contiguous: s.Contiguous})
	if chunks == 1 {
		for _, b := range []struct {
			name string
			fn   func(*Graph) (*Split, error)
		}{{"even", Even}, {"greedy", Greedy}} {
			bs, err := b.fn(g)
			if err != nil {
				return nil, err
			}
			res.Baselines = append(res.Baselines, SplitSummary{Method: b.name, MaxLoad: round6(bs.MaxLoad), Fits: bs.Fits(), Contiguous: bs.Contiguous})
		}
		if res.Method == "ip" {
			res.Baselines = append(res.Baselines, SplitSummary{Method: "dp", MaxLoad: round6(dp.Split.MaxLoad), Fits: true, Contiguous: true})
		}
	}
	if es := opt.Expert; es != nil {
		res.Baselines = append(res.Baselines, SplitSummary{Method: "expert", MaxLoad: round6(es.MaxLoad), Fits: es.Fits(), Contiguous: es.Contiguous})
	}
	conv, err := ToPlacement(s, PlacementOptions{Name: g.Name, TimeUnit: opt.TimeUnit, MemoryUnit: opt.MemoryUnit, Devices: res.StageDevices})
	if err != nil {
		return nil, err
	}
	res.Converted = conv
	if g.Bytes {
		// The memory model: a device that cannot run its stages under
		// any schedule, even offloading or recomputing every activation.
		if _, err := conv.Memory(s, opt.Capacities); err != nil {
			return nil, err
		}
	}
	res.Graph = g
	p := conv.Placement
	res.Placement = &PlacementSummary{Devices: p.Devices, Blocks: len(p.Blocks), TimeUnit: round6(conv.TimeUnit),
		RoundingError: round6(conv.RoundingError), MaxLoadError: round6(conv.MaxLoadError)}
	return res, nil
}

// NodeName is node v's name: its id in a graph of Tarnawski et al.'s
// format, its layer name in a profile.
func (g *Graph) NodeName(v int) string {
	if g.IDs != nil {
		return fmt.Sprint(g.IDs[v])
	}
	return g.Nodes[v].Name
}

func round6(x float64) float64 { return float64(int64(x*1e6+0.5)) / 1e6 }
