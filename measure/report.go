package measure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"text/tabwriter"
)

// WriteText prints the report: the measured figures beside the
// predicted, the actions that differ most, and the terms of the model.
func (rep *Report) WriteText(w io.Writer) error {
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

// Culprit names the term whose measured value moves the prediction
// furthest toward the measurement, in words.
func (rep *Report) Culprit() string {
	gap := rep.Measured.Iteration - rep.Predicted.Iteration
	best, bestName := 0.0, ""
	for _, t := range rep.Terms {
		if t.Moves*gap > 0 && math.Abs(t.Moves) > math.Abs(best) {
			best, bestName = t.Moves, t.Name
		}
	}
	if bestName == "" {
		return "no single term of the model explains it"
	}
	what := map[string]string{"transfer": "the transfers' time", "overhead": "the runtime's time per action"}[bestName]
	if what == "" {
		what = "the " + bestName + " times of the layers"
	}
	return fmt.Sprintf("%s (%+.1f ms of it)", what, best)
}

// JSON is the report as indented JSON.
func (rep *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(rep, "", "  ")
	return append(b, '\n'), err
}

// traceEvent is one event of the Chrome trace event format (Perfetto
// reads it).
type traceEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  float64        `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// Perfetto writes the reports' runs as Chrome trace event JSON for
// Perfetto: per run, a process of the measured iteration (the one of
// median time) and one of the prediction, a thread per device each, an
// event per action (µs).
func Perfetto(w io.Writer, runs []*Run, reps []*Report) error {
	var evs []traceEvent
	for k, rep := range reps {
		for j, lane := range []struct {
			name string
			tl   Timeline
		}{{fmt.Sprintf("%s: measured (%.1f ms)", rep.Name, rep.Measured.Iteration), rep.median},
			{fmt.Sprintf("%s: predicted (%.1f ms)", rep.Name, rep.Predicted.Iteration), rep.predicted}} {
			pid := 2*k + j
			evs = append(evs, traceEvent{Name: "process_name", Ph: "M", Pid: pid, Args: map[string]any{"name": lane.name}},
				traceEvent{Name: "process_sort_index", Ph: "M", Pid: pid, Args: map[string]any{"sort_index": pid}})
			for d, prog := range runs[k].Progs {
				evs = append(evs, traceEvent{Name: "thread_name", Ph: "M", Pid: pid, Tid: d, Args: map[string]any{"name": fmt.Sprintf("device %d", d)}})
				for i, o := range prog.Ops {
					s := lane.tl[d][i]
					name := o.String()
					if computes(o.Kind) {
						name = fmt.Sprintf("%s@%d", o.Block, o.Micro)
						if o.Kind == "recompute" {
							name = "recompute " + name
						}
					}
					evs = append(evs, traceEvent{Name: name, Cat: string(o.Kind), Ph: "X", Ts: round3(s.Start * 1000),
						Dur: round3((s.End - s.Start) * 1000), Pid: pid, Tid: d, Args: map[string]any{"op": i}})
				}
			}
		}
	}
	var b bytes.Buffer
	b.WriteString("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n")
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "f0->f1" as written
	for i, e := range evs {
		if err := enc.Encode(e); err != nil { // one event and a newline
			return err
		}
		if i < len(evs)-1 {
			b.Truncate(b.Len() - 1)
			b.WriteString(",\n")
		}
	}
	b.WriteString("]}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// Summary is tessel measure --json: every run's report and, with
// --calibrate, the calibration and the runs predicted again.
type Summary struct {
	Reports    []*Report   `json:"reports"`
	Calibrated *Calibrated `json:"calibrated,omitempty"`
}

// WriteText prints every report and, with a calibration, what it is, the
// file it went to (calibrated) and every run predicted again; then the
// Perfetto file written, if any.
func (s Summary) WriteText(w io.Writer, calibrated, perfetto string) error {
	var b bytes.Buffer
	for k, rep := range s.Reports {
		if k > 0 {
			b.WriteByte('\n')
		}
		if err := rep.WriteText(&b); err != nil {
			return err
		}
	}
	if cal := s.Calibrated; cal != nil {
		fmt.Fprintf(&b, "\ncalibration: %s\nwrote %s (tessel plan --model %s)\n", Text(cal.Calibration), calibrated, calibrated)
		for k, rep := range s.Reports {
			fmt.Fprintf(&b, "  %s: predicted %.1f ms calibrated (%.1f before), measured %.1f ms (least %.1f): %+.1f%% (%+.1f%% of the least)\n", rep.Name, cal.Predicted[k],
				rep.Predicted.Iteration, rep.Measured.Iteration, rep.Spread[0], pct(cal.Predicted[k], rep.Measured.Iteration), pct(cal.Predicted[k], rep.Spread[0]))
		}
	}
	if perfetto != "" {
		fmt.Fprintf(&b, "wrote %s (open it in ui.perfetto.dev)\n", perfetto)
	}
	_, err := w.Write(b.Bytes())
	return err
}
