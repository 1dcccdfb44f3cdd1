package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/torchcsv"
)

// Simulate writes tessel simulate's report of out: the runs' table and,
// where PyTorch's runtime was run too (torch not nil), its receives early
// and deferred (TorchRecv).
func Simulate(w io.Writer, out *runtimegen.Report, torch *torchcsv.RecvComparison) error {
	text, err := simulationText(out)
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(text)
	if torch != nil {
		b.WriteString("\n")
		TorchRecv(&b, torch)
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// simulationText is tessel simulate's report of out: a header, a
// table, the gain.
func simulationText(out *runtimegen.Report) (string, error) {
	var b strings.Builder
	t := func(x int) string { return fmt.Sprint(x) }
	if u := out.Scale(); u != nil {
		t = func(x int) string { return u.Duration(float64(x)) }
	}
	ts := func(xs []int) string {
		if out.Scale() == nil {
			return textfmt.CommaInts(xs)
		}
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = t(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	fmt.Fprintf(&b, "%s: %d devices, %d micro-batches", out.Placement, out.Devices, out.MicroBatches)
	if out.ScheduleMakespan != nil {
		fmt.Fprintf(&b, ", schedule makespan %s", t(*out.ScheduleMakespan))
	}
	switch {
	case out.Cluster:
		fmt.Fprintf(&b, "\n%d transfers between devices, each its time on the cluster", out.Transfers)
	case out.Scale() != nil:
		fmt.Fprintf(&b, "\n%d transfers between devices, %s each", out.Transfers, t(out.CommTime))
	default:
		fmt.Fprintf(&b, "\n%d transfers between devices, %d time each", out.Transfers, out.CommTime)
	}
	if out.QueuedLinks {
		b.WriteString(", one at a time between two devices")
	}
	b.WriteString("\n\n")
	var rows [][]string
	for _, r := range out.Runs {
		rows = append(rows, []string{r.Mode.Name(), t(r.Makespan), fmt.Sprintf("%.2f%%", 100*r.BubbleRate), ts(r.Idle)})
	}
	table, err := textfmt.Plain([]string{"mode", "makespan", "bubble rate", "idle per device"}, rows)
	if err != nil {
		return "", err
	}
	b.WriteString(table)
	for _, r := range out.Runs {
		if r.Late != nil {
			fmt.Fprintf(&b, "%s: transfers waited %s for their links in total; the run ends %s later than without contention (%s)\n",
				r.Mode.Name(), t(*r.LinkWait), t(*r.Late), t(*r.FreeMakespan))
		}
		if r.ReloadWait != nil {
			fmt.Fprintf(&b, "%s: offloads and reloads take their time on the host channels; gradient blocks waited %s for reloads in total\n",
				r.Mode.Name(), t(*r.ReloadWait))
		}
	}
	if out.Speedup != nil {
		fmt.Fprintf(&b, "\nnon-blocking is %.2f× as fast as blocking (makespan %s instead of %s)\n",
			*out.Speedup, t(out.Runs[0].Makespan), t(out.Runs[1].Makespan))
	}
	return b.String(), nil
}
