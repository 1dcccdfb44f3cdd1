package baseline

import (
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// Every applicable baseline stays valid when dependencies between devices
// carry a transfer time: its orders are compacted and verified under the
// placement's one dependency rule, and the timed 1F1B pipelines it is
// built from carry the transfers of their links.
func TestBaselinesWithTransfers(t *testing.T) {
	for _, name := range placement.BuiltinNames() {
		for _, method := range applicable[name] {
			for _, c := range []int{1, 4} {
				t.Run(fmt.Sprintf("%s/%s/transfer=%d", name, method, c), func(t *testing.T) {
					p := placementtest.WithTransfers(builtin(t, name, 4, false), c, false)
					m, _ := Lookup(method)
					n := 8
					s, err := m.Build(spec.New(p, n))
					if err != nil {
						t.Fatal(err)
					}
					if err := verify.Schedule(s); err != nil {
						t.Fatal(err)
					}
					if mk, lb := schedule.Makespan(s), rules.LowerBounds(spec.New(p, n)).Makespan; mk < lb {
						t.Errorf("makespan %d below the lower bound %d", mk, lb)
					}
				})
			}
		}
	}
}
