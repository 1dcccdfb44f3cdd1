package report

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/plan"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// A plan of the GPT-like profile on 4 devices: the split (Tarnawski et
// al., Efficient Algorithms for Device Placement of DNN Graph Operators,
// §5.1.1), the schedule of its placement, and both in the model's time.
func TestPlan(t *testing.T) {
	pr := gptSplit(t)
	// The split's placement searched as it is, no memory model (plan.Run
	// would give each device what the model leaves).
	p := pr.Converted.Placement
	res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Memory: 6}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum := SearchSummary(res, repetend.StrategyJoint)
	r := NewPlan(&plan.Result{Partition: pr, Placement: p, Search: res, Strategy: repetend.StrategyJoint, Budget: 6})
	if r.TimePerSample != pr.MaxLoad || r.EvenPerSample < r.TimePerSample || r.MakespanTime <= 0 || r.Memory != nil {
		t.Errorf("report %+v", r)
	}
	if want := float64(sum.Makespan) * pr.Converted.TimeUnit; r.MakespanTime < want-1e-6 || r.MakespanTime > want+1e-6 {
		t.Errorf("makespan time %v, want %v", r.MakespanTime, want)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), `{"partition":{`) || strings.Contains(string(data), "parts") || strings.Contains(string(data), `"memory":{`) {
		t.Errorf("JSON %s", data)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b, 48); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"time per sample  ", "\nrepetend     ", "\nschedule     8 micro-batches: makespan ", " (budget 6)\n", "\nsearch time  0.000s (proven: ", "\nverified     yes\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "decisions") || strings.Contains(b.String(), "held for good") {
		t.Errorf("decisions or memory without a memory model or decisions:\n%s", b.String())
	}
}
