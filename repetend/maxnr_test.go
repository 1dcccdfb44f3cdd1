package repetend

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// fitsByEnumeration is fitsSome without the cut: every candidate.
func fitsByEnumeration(p *placement.Placement, nr, memory int) bool {
	fits := false
	Enumerate(context.Background(), p, nr, func(c Assignment) bool {
		fits = withinBudget(p, EntryMemory(p, c.Offsets), memory)
		return !fits
	})
	return fits
}

// The cut only leaves out branches in which nothing fits: on every
// built-in shape small enough to enumerate, at every budget and N_R, the
// answer is the enumeration's.
func TestFitsSomeAgreesWithEnumeration(t *testing.T) {
	opts := []placement.Options{{}, {SplitBackward: true}, {Devices: 2, Chunks: 2, Order: placement.V, SplitBackward: true}, {Devices: 2, Chunks: 2, Order: placement.Loop}}
	checked := 0
	for _, name := range placement.BuiltinNames() {
		for _, o := range opts {
			p, err := placement.Builtin(name, o)
			if err != nil || len(p.Blocks) > 24 {
				continue
			}
			for memory := 1; memory <= 2*p.Devices; memory++ {
				for nr := 1; nr <= 4; nr++ {
					want := fitsByEnumeration(p, nr, memory)
					if got := fitsSome(context.Background(), p, nr, memory); got != want {
						t.Errorf("%s %+v memory %d N_R %d: fits %v, the enumeration says %v", name, o, memory, nr, got, want)
					}
					checked++
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("only %d cases compared", checked)
	}
}

// Where nothing fits, the cut proves it without walking every candidate:
// the chunked, split-backward x-shape at memory 4 took minutes.
func TestMaxNRChunkedXShape(t *testing.T) {
	p := placementtest.Builtin(t, "x-shape", placement.Options{Chunks: 2, Order: placement.V, SplitBackward: true})
	got := MaxNR(context.Background(), spec.Spec{Placement: p, Memory: 4}, DefaultNRLimit(p))
	for nr := 1; nr <= got; nr++ {
		if !fitsSome(context.Background(), p, nr, 4) {
			t.Fatalf("N_R %d below the maximum %d does not fit", nr, got)
		}
	}
	if got < DefaultNRLimit(p) && fitsSome(context.Background(), p, got+1, 4) {
		t.Errorf("max N_R %d, but %d fits", got, got+1)
	}
	t.Logf("max N_R %d", got)
}
