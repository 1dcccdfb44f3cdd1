package report

import (
	"errors"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/plan"
	"github.com/tessel-pp/tessel/recompute"
)

// The recompute lines of tessel plan: the chosen first, the other's
// difference from it, Megatron-Core's one number where the policy is not
// uniform and how to set the policy; or why there is no policy.
func TestRecompute(t *testing.T) {
	layers := func(n int) []recompute.Layer { return make([]recompute.Layer, n) }
	pol := recompute.Policy{Stages: []recompute.Stage{{Layers: layers(4), Recompute: 3}, {Layers: layers(4), Recompute: 1}}}
	uni := pol.Uniform()
	for _, c := range []struct {
		name string
		c    recompute.Comparison
		want []string
	}{
		{"policy chosen", recompute.Comparison{PerInstance: &plan.Result{}, Policy: pol, PolicyChosen: true, PerInstanceTime: 5580, PolicyTime: 5520, Uniform: uni, UniformPlan: nil},
			[]string{"recompute    per-stage policy (" + pol.String() + "): 5520.00 per iteration, chosen\n", "             per-instance decisions: 5580.00, +1.1 %\n",
				"--recompute-num-layers 3; torchtitan"}},
		{"decisions chosen", recompute.Comparison{PerInstance: &plan.Result{}, Policy: pol, PerInstanceTime: 5520, PolicyTime: 5580},
			[]string{"recompute    per-instance decisions: 5520.00 per iteration, chosen\n", "             per-stage policy (" + pol.String() + "): 5580.00, +1.1 %\n"}},
		{"no policy", recompute.Comparison{PerInstance: &plan.Result{}, NoPolicy: errors.New("no activation bytes"), PerInstanceTime: 5520},
			[]string{"recompute    per-instance decisions: 5520.00 per iteration; no per-stage policy: no activation bytes\n"}},
	} {
		var b strings.Builder
		Recompute(&b, &c.c)
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: text lacks %q:\n%s", c.name, w, b.String())
			}
		}
	}
}
