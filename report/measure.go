package report

import (
	"bytes"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tessel-pp/tessel/measure"
)

// Measure writes tessel measure's report of s: every run's (MeasureRun)
// and, with a calibration, what it is, the file it went to (calibrated)
// and every run predicted again; then the Perfetto file written, if any.
func Measure(w io.Writer, s measure.Summary, calibrated, perfetto string) error {
	var b bytes.Buffer
	for k, rep := range s.Reports {
		if k > 0 {
			b.WriteByte('\n')
		}
		if err := MeasureRun(&b, rep); err != nil {
			return err
		}
	}
	if cal := s.Calibrated; cal != nil {
		fmt.Fprintf(&b, "\ncalibration: %s\nwrote %s (tessel plan --model %s)\n", measure.Text(cal.Calibration), calibrated, calibrated)
		for k, rep := range s.Reports {
			fmt.Fprintf(&b, "  %s: predicted %.1f ms calibrated (%.1f before), measured %.1f ms (least %.1f): %+.1f%% (%+.1f%% of the least)\n", rep.Name, cal.Predicted[k],
				rep.Predicted.Iteration, rep.Measured.Iteration, rep.Spread[0], measure.ErrorPct(cal.Predicted[k], rep.Measured.Iteration), measure.ErrorPct(cal.Predicted[k], rep.Spread[0]))
		}
	}
	if perfetto != "" {
		fmt.Fprintf(&b, "wrote %s (open it in ui.perfetto.dev)\n", perfetto)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// MeasureRun writes tessel measure's report of one run, rep: the measured
// figures beside the predicted, the actions that differ most, and the
// terms of the model.
func MeasureRun(w io.Writer, rep *measure.Report) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s (%s): %d devices, %d micro-batches, %s programs; %d iterations after %d warm-up (%s, %s, %s, torch %s)\n",
		rep.Placement, rep.Name, rep.Devices, rep.MicroBatches, rep.Mode, len(rep.Iterations), rep.Warmup, rep.Device, rep.Backend, rep.DType, rep.Torch)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\tmeasured\tpredicted\t\n")
	where := "within the measured spread"
	if rep.Outside {
		where = "outside the measured spread"
	}
	fmt.Fprintf(tw, "iteration\t%.1f ms [%.1f–%.1f]\t%.1f ms\t%+.1f%% of the median, %+.1f%% of the least, %s\n", rep.Measured.Iteration, rep.Spread[0], rep.Spread[1],
		rep.Predicted.Iteration, 100*rep.Error, 100*rep.ErrorLeast, where)
	for d := range rep.Measured.Idle {
		fmt.Fprintf(tw, "device %d idle\t%.1f ms\t%.1f ms\t\n", d, rep.Measured.Idle[d], rep.Predicted.Idle[d])
	}
	fmt.Fprintf(tw, "bubble rate\t%.1f%%\t%.1f%%\t\n", 100*rep.Measured.BubbleRate, 100*rep.Predicted.BubbleRate)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Actions) > 0 {
		b.WriteString("actions that differ most (measured: the median of the iterations; ms after the iteration's start)\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		for _, a := range rep.Actions {
			fmt.Fprintf(tw, "  device %d\t%s\tmeasured %.2f ms at %.1f\tpredicted %.2f ms at %.1f\t\n", a.Device, a.Op,
				a.Measured.End-a.Measured.Start, a.Measured.Start, a.Predicted.End-a.Predicted.Start, a.Predicted.Start)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	b.WriteString("terms of the model (the least iteration measured against charged; what the measured value alone moves the prediction)\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, t := range rep.Terms {
		what := fmt.Sprintf("%d per iteration", t.Count)
		switch {
		case t.Name == "transfer" && t.Samples == 0:
			what += ", no wait blocked: not observed"
		case t.Name == "transfer":
			what += fmt.Sprintf(", %d blocked waits", t.Samples)
		case t.Name == "overhead":
			what = fmt.Sprintf("per action, %d actions per iteration", t.Count)
		default:
			what = fmt.Sprintf("per block, %d per iteration", t.Count)
		}
		fmt.Fprintf(tw, "  %s\t%.3f ms\tagainst %.3f ms\t%s\tmoves %+.1f ms\t\n", t.Name, t.Measured, t.Predicted, what, t.Moves)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if rep.Outside {
		fmt.Fprintf(&b, "off by %+.1f ms: %s\n", rep.Predicted.Iteration-rep.Measured.Iteration, rep.Culprit())
	}
	_, err := w.Write(b.Bytes())
	return err
}
