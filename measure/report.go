package measure

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
)

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
