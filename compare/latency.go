package compare

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/inference"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// LatencyOptions configure LatencySweep.
type LatencyOptions struct {
	// MicroBatches are the N measured (ascending), Budgets the latency
	// budgets of the Tessel search (ascending; 0 is no budget).
	MicroBatches, Budgets []int
	// Inference configures the baselines (tensor-parallel efficiency).
	Inference inference.Options
	Seed      int
	// TimeLimit stops each Tessel search (0: none), which then keeps the
	// best schedule found.
	TimeLimit time.Duration
	Progress  func(done, total int)
}

// LatencyPoint is one schedule of the latency sweep: a method at N
// micro-batches (Tessel under a budget), its makespan, its throughput
// N / makespan in requests (micro-batches) per time unit, its latency per
// request (max and mean), and whether it meets the budget. It is also the
// JSON and CSV form.
type LatencyPoint struct {
	Method       string  `json:"method"`
	Placement    string  `json:"placement"`
	MicroBatches int     `json:"micro_batches"`
	Budget       int     `json:"budget,omitempty"` // Tessel's; 0: none
	Makespan     int     `json:"makespan"`
	Throughput   float64 `json:"throughput"`
	MaxLatency   int     `json:"max_latency"`
	MeanLatency  float64 `json:"mean_latency"`
	Proven       *bool   `json:"proven,omitempty"` // Tessel's
	// Schedule is the verified schedule.
	Schedule *schedule.Schedule `json:"-"`
}

// LatencyResult is the latency sweep: Tessel's points by budget then N,
// then each baseline's points by N.
type LatencyResult struct {
	Placement    string         `json:"placement"`
	Devices      int            `json:"devices"`
	Efficiency   float64        `json:"tp_efficiency"`
	MicroBatches []int          `json:"micro_batches"`
	Budgets      []int          `json:"budgets"`
	Points       []LatencyPoint `json:"points"`
}

// LatencySweep measures the latency-throughput trade-off of an inference
// placement (the Tessel paper's Fig. 15, §VI-D): for every N and every
// budget, the Tessel search under the budget (search.Run with Latency);
// for every N, the inference baselines (package inference: tensor
// parallelism, the 1F1B chain, GPipe) as they are. Every schedule is
// verified. A budget the search cannot meet is an error.
func LatencySweep(ctx context.Context, p *placement.Placement, opt LatencyOptions) (*LatencyResult, error) {
	if !p.Inference() {
		return nil, fmt.Errorf("sweep: placement %q is not an inference placement (every block a forward)", p.Name)
	}
	if err := opt.Inference.Check(); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	eff := opt.Inference.Efficiency
	if eff == 0 {
		eff = 1
	}
	out := &LatencyResult{Placement: p.Name, Devices: p.Devices, Efficiency: eff, MicroBatches: opt.MicroBatches, Budgets: opt.Budgets}
	total, done := len(opt.Budgets)*len(opt.MicroBatches)+len(inference.Baselines())*len(opt.MicroBatches), 0
	step := func() {
		done++
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	for _, b := range opt.Budgets {
		for _, n := range opt.MicroBatches {
			sctx, cancel := withLimit(ctx, opt.TimeLimit)
			res, err := choose.Devices(sctx, spec.Spec{Placement: p, MicroBatches: n, Latency: b}, choose.Options{Search: search.Options{Seed: opt.Seed}})
			cancel()
			if err != nil {
				return nil, fmt.Errorf("sweep: Tessel, %d micro-batches, latency budget %d: %w", n, b, err)
			}
			pt := latencyPoint("Tessel", res.Schedule)
			pt.Budget, pt.Proven = b, textfmt.Ptr(res.Proven())
			out.Points = append(out.Points, pt)
			step()
		}
	}
	for _, m := range inference.Baselines() {
		for _, n := range opt.MicroBatches {
			s, err := m.Build(p, n, opt.Inference)
			if err != nil {
				return nil, fmt.Errorf("sweep: %s: %w", m.Title, err)
			}
			out.Points = append(out.Points, latencyPoint(m.Title, s))
			step()
		}
	}
	if ctx.Err() != nil {
		return nil, errors.New("sweep: stopped")
	}
	return out, nil
}

func latencyPoint(method string, s *schedule.Schedule) LatencyPoint {
	st := schedule.MeasureLatency(s)
	ms := schedule.Makespan(s)
	return LatencyPoint{Method: method, Placement: s.Placement.Name, MicroBatches: s.MicroBatches, Makespan: ms,
		Throughput: textfmt.Round6(float64(s.MicroBatches) / float64(ms)), MaxLatency: st.Max, MeanLatency: textfmt.Round6(st.Mean), Schedule: s}
}
