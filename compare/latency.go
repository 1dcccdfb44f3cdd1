package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/tessel-pp/tessel/chart"
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
	total, done := len(opt.Budgets)*len(opt.MicroBatches)+len(inference.Methods())*len(opt.MicroBatches), 0
	step := func() {
		done++
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	for _, b := range opt.Budgets {
		for _, n := range opt.MicroBatches {
			sctx, cancel := withLimit(ctx, opt.TimeLimit)
			res, err := search.Run(sctx, spec.Spec{Placement: p, MicroBatches: n, Latency: b}, search.Options{Seed: opt.Seed})
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
	for _, m := range inference.Methods() {
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

// Write renders the sweep: "table" (with a title and a legend),
// "markdown", "csv" or "json". A row per point: method, N, budget,
// makespan, throughput, max and mean latency, and whether the point
// meets the largest budget asked (every Tessel point meets its own).
func (r *LatencyResult) Write(w io.Writer, format string) error {
	if format == "json" {
		return textfmt.JSON(w, r)
	}
	limit := 0
	for _, b := range r.Budgets {
		limit = max(limit, b)
	}
	within := func(pt LatencyPoint) string {
		switch {
		case pt.Budget > 0:
			return "yes"
		case limit == 0:
			return "-"
		}
		return textfmt.YesNo(pt.MaxLatency <= limit)
	}
	proven := func(pt LatencyPoint) string {
		if pt.Proven == nil {
			return "-"
		}
		return textfmt.YesNo(*pt.Proven)
	}
	budget := func(pt LatencyPoint) string {
		if pt.Budget > 0 {
			return strconv.Itoa(pt.Budget)
		}
		return "-"
	}
	if format == "csv" {
		rows := [][]string{{"method", "placement", "micro_batches", "budget", "makespan", "throughput", "max_latency", "mean_latency", "within_budget", "proven"}}
		for _, pt := range r.Points {
			rows = append(rows, []string{pt.Method, pt.Placement, strconv.Itoa(pt.MicroBatches), budget(pt), strconv.Itoa(pt.Makespan),
				strconv.FormatFloat(pt.Throughput, 'f', -1, 64), strconv.Itoa(pt.MaxLatency), strconv.FormatFloat(pt.MeanLatency, 'f', -1, 64), within(pt), proven(pt)})
		}
		return textfmt.CSV(w, rows)
	}
	header := []string{"method", "placement", "N", "latency budget", "makespan", "throughput", "max latency", "mean latency", "within budget", "proven"}
	var rows [][]string
	for _, pt := range r.Points {
		rows = append(rows, []string{pt.Method, pt.Placement, strconv.Itoa(pt.MicroBatches), budget(pt), strconv.Itoa(pt.Makespan),
			strconv.FormatFloat(pt.Throughput, 'f', 6, 64), strconv.Itoa(pt.MaxLatency), strconv.FormatFloat(pt.MeanLatency, 'f', -1, 64), within(pt), proven(pt)})
	}
	if format == "table" {
		fmt.Fprintf(w, "%s\n\n", r.title())
	}
	if err := textfmt.Table(w, format, header, rows); err != nil {
		return err
	}
	if format == "table" {
		fmt.Fprintln(w, "\nthroughput: N / makespan, requests per time unit. latency: a request's first block's start to its last block's end.")
		fmt.Fprintf(w, "TP: every block on all %d devices (efficiency %g per doubling); 1F1B: the blocks as a chain of stages; GPipe: on the placement.\n", r.Devices, r.Efficiency)
		fmt.Fprintln(w, "Tessel meets its latency budget; a baseline is within budget when it meets the largest one. proven: Tessel's makespan is optimal")
		fmt.Fprintln(w, "under the budget (the lower bound, or the time-optimal search of all N under it). Every schedule passed the verifier.")
	}
	return nil
}

func (r *LatencyResult) title() string {
	return fmt.Sprintf("tessel sweep --latency: %s, %d devices", r.Placement, r.Devices)
}

// Chart draws the sweep. With several budgets: throughput against the
// latency budget, one line of Tessel per N, each baseline a point at its
// largest latency (the trade-off). With one budget: throughput against
// N, one line per method (the Tessel paper's Fig. 15).
func (r *LatencyResult) Chart() *chart.Line {
	c := &chart.Line{Title: r.title(), YLabel: "throughput (requests per time unit)"}
	series := map[string]*chart.Series{}
	var order []string
	add := func(name string, x, y float64) {
		s, ok := series[name]
		if !ok {
			s = &chart.Series{Name: name}
			series[name] = s
			order = append(order, name)
		}
		s.Points = append(s.Points, chart.Point{X: x, Y: y})
	}
	if len(r.Budgets) > 1 {
		c.XLabel = "latency (Tessel: its budget; a baseline: its largest)"
		for _, pt := range r.Points {
			name := fmt.Sprintf("%s, N=%d", pt.Method, pt.MicroBatches)
			x := float64(pt.MaxLatency)
			if pt.Budget > 0 {
				x = float64(pt.Budget)
			}
			add(name, x, pt.Throughput)
		}
	} else {
		c.XLabel = "N (requests)"
		c.IntegerX = true
		for _, pt := range r.Points {
			add(pt.Method, float64(pt.MicroBatches), pt.Throughput)
		}
	}
	for _, name := range order {
		c.Series = append(c.Series, *series[name])
	}
	return c
}

// LatencyChart draws each method's largest latency against N, the
// budget as a line of its own (one budget; the other half of the Tessel
// paper's Fig. 15). nil with several budgets.
func (r *LatencyResult) LatencyChart() *chart.Line {
	if len(r.Budgets) > 1 {
		return nil
	}
	c := &chart.Line{Title: r.title(), XLabel: "N (requests)", YLabel: "largest latency of a request", IntegerX: true}
	series := map[string]*chart.Series{}
	var order []string
	for _, pt := range r.Points {
		s, ok := series[pt.Method]
		if !ok {
			s = &chart.Series{Name: pt.Method}
			series[pt.Method] = s
			order = append(order, pt.Method)
		}
		s.Points = append(s.Points, chart.Point{X: float64(pt.MicroBatches), Y: float64(pt.MaxLatency)})
	}
	for _, name := range order {
		c.Series = append(c.Series, *series[name])
	}
	if len(r.Budgets) == 1 && r.Budgets[0] > 0 {
		b := chart.Series{Name: fmt.Sprintf("budget %d", r.Budgets[0])}
		for _, n := range r.MicroBatches {
			b.Points = append(b.Points, chart.Point{X: float64(n), Y: float64(r.Budgets[0])})
		}
		c.Series = append(c.Series, b)
	}
	return c
}
