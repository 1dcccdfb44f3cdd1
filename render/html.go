package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// HTML writes a self-contained HTML page (no external resources): the
// SVG chart of SVG and a table of the metrics, the lower bounds, the
// repetend when there is one, and the verifier's verdict. The page is also
// well-formed XML.
func HTML(s *schedule.Schedule, w io.Writer) error {
	if err := check(s); err != nil {
		return err
	}
	p := s.Placement
	m := schedule.Measure(s)
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n")
	fmt.Fprintf(&b, "<title>%s</title>\n", esc(title(s, m)))
	b.WriteString("<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin-top:1em}" +
		"td,th{border:1px solid #cccccc;padding:0.25em 0.75em;text-align:left}th{background:#f2f2f2}" +
		".chart{overflow-x:auto}.invalid{color:" + colourRepetend + "}</style>\n</head>\n<body>\n")
	fmt.Fprintf(&b, "<h1>%s</h1>\n<div class=\"chart\">\n", esc(title(s, m)))
	writeSVG(&b, s, m)
	b.WriteString("</div>\n<table class=\"metrics\">\n")
	row := func(k, v string) {
		fmt.Fprintf(&b, "<tr><th>%s</th><td>%s</td></tr>\n", esc(k), esc(v))
	}
	name := p.Name
	if name == "" {
		name = "(unnamed)"
	}
	row("placement", name)
	row("devices", strconv.Itoa(p.Devices))
	row("blocks per micro-batch", strconv.Itoa(len(p.Blocks)))
	row("micro-batches", strconv.Itoa(s.MicroBatches))
	row("memory budget", budgetText(s)[len("memory "):])
	// Times and memories in the model's units where the placement says
	// what its steps and memory units are.
	t, ts, mems := strconv.Itoa, intList, intList
	if u := p.Units; u.HasTime() {
		t = func(x int) string { return u.Duration(float64(x)) }
		ts = func(xs []int) string {
			parts := make([]string, len(xs))
			for i, x := range xs {
				parts[i] = t(x)
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
	}
	if u := p.Units; u.HasMemory() {
		mems = u.Memories
	}
	row("makespan", t(m.Makespan))
	if u := p.Units; u.HasTime() {
		row("time step", fmt.Sprintf("%s (makespan %d steps)", u.StepText(1), m.Makespan))
	}
	lb := rules.LowerBounds(s.Spec)
	row("lower bound of the makespan", t(lb.Makespan))
	row("bubble rate", fmt.Sprintf("%.2f%%", 100*m.BubbleRate))
	row("peak memory per device", mems(m.PeakMemory))
	row("busy time per device", ts(m.Loads))
	if schedule.ShowsLatency(s) {
		row("latency per micro-batch", schedule.LatencyText(s))
	}
	if len(s.Decisions) > 0 {
		off, rec := s.Count()
		row("activations offloaded", strconv.Itoa(off))
		row("activations recomputed", strconv.Itoa(rec))
	}
	if rp := s.Repetend; rp != nil {
		row("repetend", fmt.Sprintf("N_R %d, period %s (lower bound %s), %d %s from time %s",
			rp.Span(), t(rp.Period), t(lb.Period), rp.Iterations, plural(rp.Iterations, "iteration"), t(rp.Start)))
		rate := schedule.RepetendBubbleRate(p, rp.Period)
		if st := schedule.SteadyOf(s); len(s.Pairs) > 0 && st != nil {
			rate = st.BubbleRate // pairs save device time: the schedule's own
		}
		row("repetend bubble rate", fmt.Sprintf("%.2f%%", 100*rate))
	} else if st := schedule.Steady(s); st != nil {
		// No repetend: the steady state the start times show.
		period := t(st.Period)
		if st.PerPeriod > 1 {
			period = fmt.Sprintf("%s for %d micro-batches", t(st.Period), st.PerPeriod)
		}
		what := fmt.Sprintf("period %s, N_R %d", period, st.NR)
		if len(st.Stretches) > 1 {
			what += fmt.Sprintf(", over %d periodic stretches one after another", len(st.Stretches))
		}
		row("steady state", what)
		row("steady-state bubble rate", fmt.Sprintf("%.2f%%", 100*st.BubbleRate))
	}
	verdict := "valid"
	var ve *schedule.VerifyError
	if err := verify.Schedule(s); errors.As(err, &ve) {
		verdict = fmt.Sprintf("invalid: %d %s, first: %s", ve.Count(), plural(ve.Count(), "violation"), ve.Violations[0].Message)
	} else if err != nil {
		verdict = "invalid: " + err.Error()
	}
	if verdict == "valid" {
		row("verifier", verdict)
	} else {
		fmt.Fprintf(&b, "<tr><th>verifier</th><td class=\"invalid\">%s</td></tr>\n", esc(verdict))
	}
	b.WriteString("</table>\n</body>\n</html>\n")
	_, err := w.Write(b.Bytes())
	return err
}
