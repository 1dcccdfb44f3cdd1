package construct

import (
	"testing"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// BenchmarkLatencyList: the list schedule under a latency budget, nn-shape
// inference, 128 micro-batches, the budget one above the critical path.
func BenchmarkLatencyList(b *testing.B) {
	p, err := placement.Builtin("nn-shape", placement.Options{Devices: 4, Inference: true})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := LatencyList(spec.Spec{Placement: p, MicroBatches: 128, Latency: p.CriticalPath() + 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompactLatency: the device orders of the latency list schedule
// of m-shape inference, 128 micro-batches, compacted under its budget
// (one above the critical path) by compact.Compact.
func BenchmarkCompactLatency(b *testing.B) {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4, Inference: true})
	if err != nil {
		b.Fatal(err)
	}
	budget := p.CriticalPath() + 1
	s, err := LatencyList(spec.Spec{Placement: p, MicroBatches: 128, Latency: budget})
	if err != nil {
		b.Fatal(err)
	}
	orders := schedule.Orders(s)
	for b.Loop() {
		if _, err := compact.Compact(spec.Spec{Placement: p, MicroBatches: 128, Latency: budget}, compact.Keep{Orders: orders}); err != nil {
			b.Fatal(err)
		}
	}
}
