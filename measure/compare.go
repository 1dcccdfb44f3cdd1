package measure

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/runtimegen"
)

// Run is one schedule as it ran: its programs, every rank's trace and the
// costs its prediction charges.
type Run struct {
	Name   string // for people: the programs' directory, or the schedule's name
	Progs  []*runtimegen.Program
	Traces []*RankTrace
	Costs  Costs
	// Decoder is the model the programs ran (its layers per block), for
	// the costs of another model file (Calibrate).
	Decoder *runtimegen.Decoder
}

// Iterations are the measured iterations, each as a Timeline in ms after
// its start: where every rank ran on one host, on the host's clock from
// the first rank's start (a rank that left the barrier later starts
// later); otherwise each rank from its own start.
func (r *Run) Iterations() []Timeline {
	shared := true
	for _, t := range r.Traces {
		shared = shared && t.Host == r.Traces[0].Host && t.Clock == "time.perf_counter_ns"
	}
	out := make([]Timeline, len(r.Traces[0].Iterations))
	for k := range out {
		first := r.Traces[0].Iterations[k].Start
		for _, t := range r.Traces {
			first = min(first, t.Iterations[k].Start)
		}
		tl := make(Timeline, len(r.Traces))
		for d, t := range r.Traces {
			off := 0.0
			if shared {
				off = float64(t.Iterations[k].Start-first) / 1e6
			}
			tl[d] = make([]Span, len(t.Iterations[k].Ops))
			for i, s := range t.Iterations[k].Ops {
				tl[d][i] = Span{off + float64(s[0])/1e6, off + float64(s[1])/1e6}
			}
		}
		out[k] = tl
	}
	return out
}

// Least is the iteration of least time: the one the machine disturbed
// least. The profile counts each layer's time undisturbed (CPU time on
// CPU, CUDA events on a GPU), so the model predicts such an iteration;
// the others add what the machine took away (other processes, a slower
// core), which changes from one iteration to the next.
func (r *Run) Least() Timeline { return least(r.Iterations()) }

// least is the iteration of least time among its.
func least(its []Timeline) Timeline {
	k := 0
	for i, it := range its {
		if it.End() < its[k].End() {
			k = i
		}
	}
	return its[k]
}

// Figures are one iteration's: its time, each device's idle time (the
// iteration less its compute) and the bubble rate (the idle share of all
// devices' time), in ms.
type Figures struct {
	Iteration  float64   `json:"iteration_ms"`
	Idle       []float64 `json:"idle_ms"`
	BubbleRate float64   `json:"bubble_rate"`
}

func figuresOf(tl Timeline, progs []*runtimegen.Program) Figures {
	f := Figures{Iteration: tl.End(), Idle: make([]float64, len(progs))}
	idle := 0.0
	for d := range progs {
		f.Idle[d] = f.Iteration - tl.Busy(progs, d)
		idle += f.Idle[d]
	}
	if f.Iteration > 0 {
		f.BubbleRate = idle / (float64(len(progs)) * f.Iteration)
	}
	return f
}

// Median is the timeline of per-op medians: each op's median start and
// median end over the iterations.
func Median(its []Timeline) Timeline {
	tl := make(Timeline, len(its[0]))
	for d := range tl {
		tl[d] = make([]Span, len(its[0][d]))
		for i := range tl[d] {
			var s, e []float64
			for _, it := range its {
				s, e = append(s, it[d][i].Start), append(e, it[d][i].End)
			}
			tl[d][i] = Span{median(s), median(e)}
		}
	}
	return tl
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	n := len(xs)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// ActionDiff is one action measured (the median of the iterations) and
// predicted.
type ActionDiff struct {
	Device    int    `json:"device"`
	Index     int    `json:"index"` // in the device's program
	Op        string `json:"op"`
	Measured  Span   `json:"measured"`
	Predicted Span   `json:"predicted"`
}

// Term is one term of the model: what the run measured of it and what
// the prediction charged, per occurrence (a pass: per block instance;
// Count occurrences per iteration), and how far the predicted iteration
// moves when this term alone takes its measured value (Moves, ms).
type Term struct {
	Name      string  `json:"name"`
	Count     int     `json:"count"`
	Measured  float64 `json:"measured_ms"`
	Predicted float64 `json:"predicted_ms"`
	Samples   int     `json:"samples"` // for a transfer: the waits that show its time
	Moves     float64 `json:"moves_ms"`
}

// Report is a run measured against its prediction.
type Report struct {
	Name         string  `json:"name"`
	Placement    string  `json:"placement"`
	Devices      int     `json:"devices"`
	MicroBatches int     `json:"micro_batches"`
	Mode         string  `json:"mode"`
	Warmup       int     `json:"warmup"`
	Device       string  `json:"device"`
	Backend      string  `json:"backend"`
	DType        string  `json:"dtype"`
	Torch        string  `json:"torch"`
	Measured     Figures `json:"measured"` // of the median iteration's timeline
	// Iterations are the measured iteration times; Spread their least and
	// largest.
	Iterations []float64  `json:"iterations_ms"`
	Spread     [2]float64 `json:"spread_ms"`
	Predicted  Figures    `json:"predicted"`
	// Error is (predicted − measured) / measured, of the median
	// iteration time; ErrorLeast of the least (Run.Least: the iteration
	// the machine disturbed least, the one the profile's times model);
	// Outside says the prediction lies outside Spread.
	Error      float64      `json:"error"`
	ErrorLeast float64      `json:"error_least"`
	Outside    bool         `json:"outside_spread"`
	Actions    []ActionDiff `json:"actions"` // the actions that differ most, largest first
	Terms      []Term       `json:"terms"`

	median, predicted Timeline
}

// Compare measures a run against its prediction: the measured figures of
// the median iteration, every iteration's time, the predicted figures,
// the top actions by how far their measured duration differs from the
// predicted one, and the terms of the model (each pass's time, a
// transfer's, the overhead per action) as measured and as charged.
func Compare(r *Run, top int) (*Report, error) {
	pred, err := Predict(r.Progs, r.Costs)
	if err != nil {
		return nil, err
	}
	its := r.Iterations()
	t0 := r.Traces[0]
	rep := &Report{Name: r.Name, Placement: r.Progs[0].Placement, Devices: len(r.Progs), MicroBatches: r.Progs[0].MicroBatches,
		Mode: string(r.Progs[0].Mode), Warmup: t0.Warmup, Device: t0.Device, Backend: t0.Backend, DType: t0.DType, Torch: t0.Torch,
		predicted: pred}
	for _, it := range its {
		rep.Iterations = append(rep.Iterations, it.End())
	}
	rep.Spread = [2]float64{slices.Min(rep.Iterations), slices.Max(rep.Iterations)}
	// The iteration of median time, as it ran (its figures are those of
	// one real iteration, not of a mix).
	k := medianIndex(rep.Iterations)
	rep.median = its[k]
	rep.Measured = figuresOf(its[k], r.Progs)
	rep.Measured.Iteration = median(rep.Iterations)
	rep.Predicted = figuresOf(pred, r.Progs)
	if rep.Measured.Iteration > 0 {
		rep.Error = (rep.Predicted.Iteration - rep.Measured.Iteration) / rep.Measured.Iteration
	}
	if rep.Spread[0] > 0 {
		rep.ErrorLeast = (rep.Predicted.Iteration - rep.Spread[0]) / rep.Spread[0]
	}
	rep.Outside = rep.Predicted.Iteration < rep.Spread[0] || rep.Predicted.Iteration > rep.Spread[1]
	med := Median(its)
	var diffs []ActionDiff
	for d, prog := range r.Progs {
		for i, o := range prog.Ops {
			diffs = append(diffs, ActionDiff{Device: d, Index: i, Op: o.String(), Measured: med[d][i], Predicted: pred[d][i]})
		}
	}
	dur := func(s Span) float64 { return s.End - s.Start }
	slices.SortStableFunc(diffs, func(a, b ActionDiff) int {
		return cmp.Compare(math.Abs(dur(b.Measured)-dur(b.Predicted)), math.Abs(dur(a.Measured)-dur(a.Predicted)))
	})
	rep.Actions = diffs[:min(top, len(diffs))]
	// The terms as the calibration fits them: of the least iteration.
	rep.Terms, err = terms(r, []Timeline{least(its)}, pred)
	return rep, err
}

func medianIndex(xs []float64) int {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	return idx[(len(idx)-1)/2]
}

// passOf is the pass of a compute op's time: its block's kind (a
// recompute is its forward block's forward).
func passOf(prog *runtimegen.Program, o runtimegen.Op) string {
	if o.Kind == runtimegen.Recompute {
		return string(placement.Forward)
	}
	return string(prog.Block(o.Block).Kind)
}

// observed is what the iterations show of the terms.
type observed struct {
	passMeasured, passPredicted map[string]float64 // per pass: total per iteration
	passCount                   map[string]int     // per pass: ops per iteration
	overhead                    float64            // per action
	actions                     int                // per iteration, all devices
	transfers                   []float64          // samples, ms
	transferCount               int                // per iteration
}

// observe measures the terms of a run: every pass's measured time
// against the costs', the runtime's time between actions, and the time
// of the transfers that a wait shows.
func observe(r *Run, its []Timeline) observed {
	o := observed{passMeasured: map[string]float64{}, passPredicted: map[string]float64{}, passCount: map[string]int{}}
	n := float64(len(its))
	between := 0.0
	sendAt := map[int][2]int{} // tag -> device, op index of its send
	for d, prog := range r.Progs {
		for i, op := range prog.Ops {
			if op.Kind == runtimegen.Send {
				sendAt[op.Tag] = [2]int{d, i}
			}
		}
	}
	recvAt := map[int]int{} // tag -> op index of the posted receive
	for d, prog := range r.Progs {
		blocking := prog.Mode == runtimegen.Blocking
		for i, op := range prog.Ops {
			o.actions++
			if op.Kind == runtimegen.Send {
				o.transferCount++
			}
			if op.Kind == runtimegen.Recv {
				recvAt[op.Tag] = i
			}
			for _, it := range its {
				s := it[d][i]
				prev := 0.0
				if i > 0 {
					prev = it[d][i-1].End
				}
				between += s.Start - prev
				switch op.Kind {
				case runtimegen.Compute, runtimegen.Recompute:
					p := passOf(prog, op)
					o.passMeasured[p] += (s.End - s.Start) / n
				case runtimegen.Send, runtimegen.Recv, runtimegen.Offload, runtimegen.Reload:
					if !blocking {
						between += s.End - s.Start
					}
				}
			}
			if op.Kind == runtimegen.Compute || op.Kind == runtimegen.Recompute {
				p := passOf(prog, op)
				o.passPredicted[p] += r.Costs.Block[op.Block]
				o.passCount[p]++
			}
			// A wait for a receive (or a blocking receive) that blocked
			// shows the transfer's time: from both ends posted to its end.
			waits := op.Kind == runtimegen.Wait && op.Peer >= 0 && isRecvWait(prog, i) || blocking && op.Kind == runtimegen.Recv
			if !waits {
				continue
			}
			snd, ok := sendAt[op.Tag]
			if !ok {
				continue
			}
			post := i
			if op.Kind == runtimegen.Wait {
				post = recvAt[op.Tag]
			}
			for _, it := range its {
				s := it[d][i]
				if s.End-s.Start < blockedMS {
					continue // did not block: the tensor was there already
				}
				posted := max(it[d][post].Start, it[snd[0]][snd[1]].Start)
				if s.End > posted {
					o.transfers = append(o.transfers, s.End-posted)
				}
			}
		}
	}
	if o.actions > 0 {
		o.overhead = between / n / float64(o.actions)
	}
	return o
}

// blockedMS is how long a wait must take to count as blocked (the
// runtime's own time for a wait is a few microseconds).
const blockedMS = 0.05

// isRecvWait says whether the wait at index i waits for a receive: the
// program posted a receive of its tag before it.
func isRecvWait(prog *runtimegen.Program, i int) bool {
	tag := prog.Ops[i].Tag
	for _, o := range prog.Ops[:i] {
		if o.Kind == runtimegen.Recv && o.Tag == tag {
			return true
		}
	}
	return false
}

// terms lists the model's terms as run r measured and predicted them,
// each with how far it moves the predicted iteration alone.
func terms(r *Run, its []Timeline, pred Timeline) ([]Term, error) {
	o := observe(r, its)
	base := pred.End()
	moved := func(c Costs) (float64, error) {
		tl, err := Predict(r.Progs, c)
		if err != nil {
			return 0, err
		}
		return tl.End() - base, nil
	}
	var ts []Term
	for _, p := range []string{"forward", "backward", "input", "weight"} {
		cnt := o.passCount[p]
		if cnt == 0 {
			continue
		}
		t := Term{Name: p, Count: cnt, Measured: o.passMeasured[p] / float64(cnt), Predicted: o.passPredicted[p] / float64(cnt)}
		if o.passPredicted[p] > 0 {
			c := scaled(r, p, o.passMeasured[p]/o.passPredicted[p])
			m, err := moved(c)
			if err != nil {
				return nil, err
			}
			t.Moves = m
		}
		ts = append(ts, t)
	}
	tr := Term{Name: "transfer", Count: o.transferCount, Predicted: r.Costs.Transfer, Samples: len(o.transfers), Measured: r.Costs.Transfer}
	if len(o.transfers) > 0 {
		tr.Measured = median(o.transfers)
		c := r.Costs
		c.Transfer = tr.Measured
		m, err := moved(c)
		if err != nil {
			return nil, err
		}
		tr.Moves = m
	}
	ov := Term{Name: "overhead", Count: o.actions, Measured: o.overhead, Predicted: r.Costs.Overhead}
	c := r.Costs
	c.Overhead = o.overhead
	m, err := moved(c)
	if err != nil {
		return nil, err
	}
	ov.Moves = m
	return append(ts, tr, ov), nil
}

// scaled is r's costs with every block of pass p (and, for the forward,
// recomputes) scaled by f.
func scaled(r *Run, p string, f float64) Costs {
	c := r.Costs
	c.Block = map[string]float64{}
	for _, b := range r.Progs[0].Blocks {
		t := r.Costs.Block[b.ID]
		if string(b.Kind) == p {
			t *= f
		}
		c.Block[b.ID] = t
	}
	return c
}

// String names the report's run in one line.
func (rep *Report) String() string {
	return fmt.Sprintf("%s: %d devices, %d micro-batches", rep.Placement, rep.Devices, rep.MicroBatches)
}
