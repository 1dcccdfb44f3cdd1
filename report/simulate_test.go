package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
)

// tessel simulate's text of a schedule's two program sets: the header,
// one row per mode, and the gain of non-blocking in the figures the
// report holds.
func TestSimulate(t *testing.T) {
	s, err := schedule.Load("../schedule/testdata/schedules/v-shape-1f1b.json")
	if err != nil {
		t.Fatal(err)
	}
	var sets [][]*runtimegen.Program
	for _, mode := range runtimegen.Modes() {
		progs, err := runtimegen.Generate(s, mode)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, progs)
	}
	rep, err := runtimegen.SimulateAll(sets, runtimegen.SimOptions{CommTime: 1})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Simulate(&b, rep, nil); err != nil {
		t.Fatal(err)
	}
	nb, bl := rep.Runs[0], rep.Runs[1]
	for _, w := range []string{
		fmt.Sprintf("%s: %d devices, %d micro-batches\n%d transfers between devices, 1 time each\n\n", rep.Placement, rep.Devices, rep.MicroBatches, rep.Transfers),
		"MODE          MAKESPAN  BUBBLE RATE  IDLE PER DEVICE\n",
		fmt.Sprintf("non-blocking  %-8d  %.2f%%", nb.Makespan, 100*nb.BubbleRate),
		fmt.Sprintf("\nnon-blocking is %.2f× as fast as blocking (makespan %d instead of %d)\n", *rep.Speedup, nb.Makespan, bl.Makespan),
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, b.String())
		}
	}
}
