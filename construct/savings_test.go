package construct

import (
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

func TestListSavingsProbe(t *testing.T) {
	v2 := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true})
	v := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4, SplitBackward: true})
	for _, tc := range []struct {
		p      *placement.Placement
		memory int
	}{{v2, 1}, {v2, 2}, {v, 2}, {v, 1}} {
		for _, sv := range []Savings{{Offload: true}, {Recompute: true}, {Offload: true, Always: true}, {Recompute: true, Always: true}} {
			for _, rule := range Rules() {
				for _, w := range []int{0, 2, 4, 8} {
					p := tc.p.WithOffload(1).WithRecompute()
					s, err := List(p, 16, ListOptions{Rule: rule, Window: w, Memory: tc.memory, Savings: sv})
					if err != nil {
						t.Logf("%s m%d %s %s w%d: %v", p.Name, tc.memory, sv, rule, w, err)
						continue
					}
					o, r := s.Count()
					t.Logf("%s m%d %s %s w%d: makespan %d offloaded %d recomputed %d peak %v", p.Name, tc.memory, sv, rule, w, schedule.Makespan(s), o, r, schedule.Measure(s).PeakMemory)
				}
			}
		}
	}
}
