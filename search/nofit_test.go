package search

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// A budget under what one micro-batch needs is refused at once, naming
// the device, what it needs and the least budget any schedule needs (not
// N_R, which cannot help); that budget is not refused.
func TestNoFitNamesTheLeastBudget(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Memory: 1}, Options{})
	var nf *NoFitError
	if !errors.As(err, &nf) || errors.Is(err, ErrNoRepetend) {
		t.Fatalf("memory 1: %v, want a NoFitError", err)
	}
	if least, exact := nf.Least(); least != 2 || !exact {
		t.Errorf("least budget %d (exact %v), want 2", least, exact)
	}
	for _, want := range []string{"device 0 needs 2 per micro-batch", "1 left", "the least budget any schedule needs is 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
	if e := noFit(spec.Spec{Placement: p, MicroBatches: 8, Memory: 2}, true); e != nil {
		t.Errorf("memory 2 refused: %v", e)
	}
}
