package repetend

import (
	"context"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// A decided repetend (Qi et al., "OptPipe", Appendix C: keep, offload
// or recompute, the host channel one move at a time, memory with the
// moves counted) repeated exactly for N micro-batches is a schedule the
// independent verifier accepts: the encoding's steady state keeps every
// rule of placement's memory model. Where the budget binds below what a
// repetend that keeps every activation needs, it decides.
func TestDecidedRepetendVerifies(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithOffload(1).WithRecompute()
	for _, tc := range []struct {
		name               string
		memory, period     int
		offload, recompute bool
	}{
		{"offload, memory 4", 4, 8, true, false},
		{"recompute, memory 2", 2, 8, false, true},
		{"both, memory 4", 4, 8, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := SearchDecided(context.Background(), spec.Spec{Placement: p, Memory: tc.memory, Allowed: spec.Decisions{Offload: tc.offload, Recompute: tc.recompute}}, DecideOptions{MaxNR: 4, Effort: 2_000_000, MaxPeriod: tc.period})
			if err != nil {
				t.Fatal(err)
			}
			if d == nil {
				t.Fatalf("no decided repetend with period ≤ %d", tc.period)
			}
			decided := 0
			for _, a := range d.Actions {
				if a == placement.Offload || a == placement.Recompute {
					decided++
				}
			}
			if decided == 0 {
				t.Errorf("period %d keeps every activation at memory %d", d.Period, tc.memory)
			}
			s := d.Unroll(spec.Spec{Placement: p, MicroBatches: 12, Memory: tc.memory})
			if err := verify.Schedule(s); err != nil {
				t.Fatalf("period %d, actions %v: the unrolled repetend fails the verifier: %v", d.Period, d.Actions, err)
			}
		})
	}
}
