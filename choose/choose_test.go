package choose_test

import (
	"testing"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/coarsen"
	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
)

// CheckedTarget: the automatic target for a graph of more than AutoBlocks
// operators with candidates (She et al. solve graphs "typically fewer
// than 100 nodes"), a given count, and the values --coarsen refuses.
func TestCheckedTarget(t *testing.T) {
	big := placementtest.DAG(t, 200, 2)
	for _, c := range []struct {
		flag, want int
	}{{-1, coarsen.DefaultTarget}, {0, 0}, {30, 30}} {
		if got, err := choose.CheckedTarget(big, c.flag); err != nil || got != c.want {
			t.Errorf("--coarsen %d: %d, %v; want %d", c.flag, got, err, c.want)
		}
	}
	if _, err := choose.CheckedTarget(big, -2); err == nil {
		t.Error("--coarsen -2: no error")
	}
	pinned, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := choose.CheckedTarget(pinned, 10); err == nil {
		t.Error("--coarsen 10 on a pinned placement: no error")
	}
	if got, err := choose.CheckedTarget(pinned, -1); err != nil || got != 0 {
		t.Errorf("--coarsen -1 on a pinned placement: %d, %v; want 0", got, err)
	}
}
