package report

import (
	"fmt"
	"io"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/render"
	"github.com/tessel-pp/tessel/search"
)

// Builtins writes every built-in placement under o, as tessel
// placements lists them: its summary, its blocks and the picture of one
// micro-batch (OneMicroBatch). A built-in that o does not allow is one
// line saying why.
func Builtins(w io.Writer, o placement.Options) error {
	for k, name := range placement.BuiltinNames() {
		if k > 0 {
			fmt.Fprintln(w)
		}
		p, err := placement.Builtin(name, o)
		if err != nil {
			fmt.Fprintf(w, "%s: not available with these options: %v\n", name, err)
			continue
		}
		summary := placement.BuiltinSummary(name)
		if o.SplitBackward && !o.Inference {
			summary += "; every backward b split into input i and weight w"
		}
		if o.Chunks > 1 {
			summary += fmt.Sprintf("; %d stages, %d per device, order %s", o.Chunks*o.Devices, o.Chunks, o.Order)
		}
		fmt.Fprintf(w, "%s — %s\n", p.Name, summary)
		fmt.Fprintf(w, "%d blocks on %d devices, device loads %v, critical path %d\n", p.K(), p.Devices, p.Loads(), p.CriticalPath())
		s, err := search.OneMicroBatch(p)
		if err != nil {
			return err
		}
		if err := render.Text(s, w); err != nil {
			return err
		}
	}
	return nil
}
