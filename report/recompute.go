package report

import (
	"fmt"
	"io"

	"github.com/tessel-pp/tessel/recompute"
)

// Recompute writes the recompute policy's lines of tessel plan: the
// comparison c, the chosen first: "per-stage policy (recompute 3 of 4
// layers on stages 0-2): 5520.00 per iteration, chosen", then
// "per-instance decisions: 5580.00, +1.1 %", Megatron-Core's form where
// the policy is not uniform, and how to set the policy; times in the
// model's time (or why there is no policy).
func Recompute(w io.Writer, c *recompute.Comparison) {
	// In the model's unit where it names one ("2.701 s").
	t := func(x float64) string { return fmt.Sprintf("%.2f", x) }
	if pr := c.PerInstance.Partition; pr != nil && pr.Graph != nil {
		t = pr.Graph.FormatTime
	}
	if c.NoPolicy != nil {
		fmt.Fprintf(w, "recompute    per-instance decisions: %s per iteration; no per-stage policy: %v\n", t(c.PerInstanceTime), c.NoPolicy)
		return
	}
	pol := fmt.Sprintf("per-stage policy (%v)", c.Policy)
	first, second := "per-instance decisions", pol
	t1, t2 := c.PerInstanceTime, c.PolicyTime
	if c.PolicyChosen {
		first, second, t1, t2 = second, first, t2, t1
	}
	rel := 0.0
	if t1 > 0 {
		rel = (t2 - t1) / t1 * 100
	}
	fmt.Fprintf(w, "recompute    %s: %s per iteration, chosen\n", first, t(t1))
	fmt.Fprintf(w, "             %s: %s, %+.1f %%\n", second, t(t2), rel)
	if c.UniformPlan != nil {
		fmt.Fprintf(w, "             Megatron-Core's one --recompute-num-layers %d on every stage (%v): %s, %+.1f %%\n",
			c.Uniform.Max(), c.Uniform, t(c.UniformTime), (c.UniformTime-t1)/t1*100)
	}
	if c.Policy.Any() {
		fmt.Fprintf(w, "             set it: Megatron-Core --recompute-granularity full --recompute-method block --recompute-num-layers %d; torchtitan: tessel export --format torchtitan --split (a FullAC subclass)\n", c.Policy.Max())
	}
}
