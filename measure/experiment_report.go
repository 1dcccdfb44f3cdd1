package measure

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/chart"
)

// Markdown writes the experiment's table: per N and schedule, the
// iteration predicted before calibration, measured (median, least and
// largest) and predicted after; then per N whether the order by
// prediction is the order by measurement, and tessel's margin.
func (res *ExperimentResult) Markdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("| N | schedule | predicted | error: median / least | measured: median [least–largest] | calibrated | error: median / least | bubbles predicted / measured |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range res.Rows {
		before := fmt.Sprintf("%.0f ms | %+.1f%% / %+.1f%%", r.Predicted, ErrorPct(r.Predicted, r.Measured), ErrorPct(r.Predicted, r.Spread[0]))
		if r.Replanned {
			before = "– | –" // planned and predicted from the calibrated file only
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %.0f ms [%.0f–%.0f] | %.0f ms | %+.1f%% / %+.1f%% | %.1f%% / %.1f%% |\n",
			r.N, r.Method, before, r.Measured, r.Spread[0], r.Spread[1],
			r.Calibrated, ErrorPct(r.Calibrated, r.Measured), ErrorPct(r.Calibrated, r.Spread[0]), 100*r.PredictedBubbles, 100*r.MeasuredBubbles)
	}
	b.WriteString("\n")
	for _, n := range res.Options.N {
		b.WriteString(res.orderLine(n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ErrorPct is how far pred is from meas, in percent of meas (0 for no
// measurement).
func ErrorPct(pred, meas float64) float64 {
	if meas == 0 {
		return 0
	}
	return 100 * (pred - meas) / meas
}

// rowsOf are the rows of N n of the four methods (not the re-planned).
func (res *ExperimentResult) rowsOf(n int) []Row {
	var rs []Row
	for _, r := range res.Rows {
		if r.N == n && !r.Replanned {
			rs = append(rs, r)
		}
	}
	return rs
}

// orderLine says, for N n, the schedules by calibrated prediction and by
// measurement, which pairs disagree beyond the measured spread, the
// largest calibrated error, and tessel's measured margin over the best
// baseline.
func (res *ExperimentResult) orderLine(n int) string {
	rs := res.rowsOf(n)
	byPred, byMeas := slices.Clone(rs), slices.Clone(rs)
	slices.SortStableFunc(byPred, func(a, b Row) int { return cmp.Compare(a.Calibrated, b.Calibrated) })
	slices.SortStableFunc(byMeas, func(a, b Row) int { return cmp.Compare(a.Measured, b.Measured) })
	// names joins the methods in order, "=" between two whose times
	// round to the same ms (the table's precision).
	names := func(rs []Row, time func(Row) float64) string {
		var b strings.Builder
		for i, r := range rs {
			if i > 0 {
				if math.Round(time(rs[i-1])) == math.Round(time(r)) {
					b.WriteString(" = ")
				} else {
					b.WriteString(" < ")
				}
			}
			b.WriteString(r.Method)
		}
		return b.String()
	}
	calibrated := func(r Row) float64 { return r.Calibrated }
	measured := func(r Row) float64 { return r.Measured }
	var bad []string
	for i := range rs {
		for j := range rs {
			a, c := rs[i], rs[j]
			// a predicted faster, measured slower, by more than the
			// spread of the two measurements.
			if a.Calibrated < c.Calibrated && a.Measured > c.Measured && a.Spread[0] > c.Spread[1] {
				bad = append(bad, fmt.Sprintf("%s and %s", a.Method, c.Method))
			}
		}
	}
	order := "the same order"
	if names(byPred, calibrated) != names(byMeas, measured) {
		order = "measured " + names(byMeas, measured)
		if len(bad) == 0 {
			order += " (every swap within the measured spread)"
		} else {
			order += "; outside the spread: " + strings.Join(bad, ", ")
		}
	}
	worst, worstLeast := 0.0, 0.0
	for _, r := range rs {
		worst = math.Max(worst, math.Abs(ErrorPct(r.Calibrated, r.Measured)))
		worstLeast = math.Max(worstLeast, math.Abs(ErrorPct(r.Calibrated, r.Spread[0])))
	}
	margin := ""
	if t := slices.IndexFunc(rs, func(r Row) bool { return r.Method == "tessel" }); t >= 0 {
		best := -1
		for i, r := range rs {
			if r.Method != "tessel" && (best < 0 || r.Measured < rs[best].Measured) {
				best = i
			}
		}
		if best >= 0 {
			least := -1
			for i, r := range rs {
				if r.Method != "tessel" && (least < 0 || r.Spread[0] < rs[least].Spread[0]) {
					least = i
				}
			}
			margin = fmt.Sprintf("; tessel measured %+.1f%% against the best baseline (%s) by the median, %+.1f%% (%s) by the least, predicted %+.1f%%",
				ErrorPct(rs[t].Measured, rs[best].Measured), rs[best].Method, ErrorPct(rs[t].Spread[0], rs[least].Spread[0]), rs[least].Method,
				ErrorPct(rs[t].Calibrated, rs[best].Calibrated))
		}
	}
	return fmt.Sprintf("- N = %d: by calibrated prediction %s; %s; largest calibrated error %.1f%% of the median, %.1f%% of the least%s.\n", n, names(byPred, calibrated), order, worst, worstLeast, margin)
}

// Chart draws every schedule's time per micro-batch against N, measured
// and predicted after calibration.
func (res *ExperimentResult) Chart(w io.Writer) error {
	c := chart.Line{Title: "Time per micro-batch, measured and predicted (calibrated)", XLabel: "micro-batches N",
		YLabel: "ms per micro-batch", IntegerX: true}
	for _, m := range Methods() {
		meas, pred := chart.Series{Name: m + " measured"}, chart.Series{Name: m + " predicted"}
		for _, n := range res.Options.N {
			for _, r := range res.rowsOf(n) {
				if r.Method == m {
					meas.Points = append(meas.Points, chart.Point{X: float64(n), Y: r.Measured / float64(n)})
					pred.Points = append(pred.Points, chart.Point{X: float64(n), Y: r.Calibrated / float64(n)})
				}
			}
		}
		c.Series = append(c.Series, meas, pred)
	}
	return c.WriteSVG(w)
}
