package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tessel-pp/tessel/timeline"
)

// Timeline writes tessel replan --timeline's report of r: a line for the
// old schedule, then a table of the steps.
func Timeline(w io.Writer, r *timeline.Report) {
	memory := "unlimited"
	if r.Memory > 0 {
		memory = r.Units.Memory(float64(r.Memory))
	}
	fmt.Fprintf(w, "tessel replan: %s, %d devices, %d micro-batches, memory %s, a timeline of %d steps\n\n", r.Placement, r.Devices, r.MicroBatches, memory, len(r.Steps))
	// A makespan in the placement's time unit where it has one (a
	// placement split from a model file), else its integer as before.
	span := func(steps int) string {
		if r.Units.HasTime() {
			return r.Units.Duration(float64(steps))
		}
		return fmt.Sprint(steps)
	}
	fmt.Fprintf(w, "old schedule  makespan %s\n\n", span(r.Old))
	fresh := false
	for _, st := range r.Steps {
		fresh = fresh || st.Fresh != nil
	}
	head := []string{"step", "iteration", "devices", "replanned", "lower bound", "replan time"}
	if fresh {
		head = append(head, "fresh search", "fresh time")
	}
	head = append(head, "changes")
	rows := [][]string{head}
	for k, st := range r.Steps {
		row := []string{fmt.Sprint(k + 1), fmt.Sprint(st.Iteration), fmt.Sprint(st.Devices), span(st.Makespan), span(st.LowerBound), fmt.Sprintf("%.3fs", st.Seconds)}
		if fresh {
			if st.Fresh != nil {
				row = append(row, span(*st.Fresh), fmt.Sprintf("%.3fs", *st.FreshSeconds))
			} else {
				row = append(row, "-", "-")
			}
		}
		ch := strings.Join(st.Changes, "; ")
		if st.Repartition != "" {
			ch += " (" + st.Repartition + ")"
		}
		rows = append(rows, append(row, ch))
	}
	width := make([]int, len(head))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, c := range row {
			if i == len(row)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", width[i]-len([]rune(c))+2))
		}
		fmt.Fprintln(w, b.String())
	}
	fmt.Fprintf(w, "\nverified      yes (every step)\n")
	if r.Stopped != "" {
		fmt.Fprintf(w, "stopped       %s\n", r.Stopped)
	}
}
