package completion

import (
	"context"
	"strings"
	"testing"

	"tessel/baseline"
	"tessel/cluster"
	"tessel/placement"
	"tessel/schedule"
)

// Options.Start: a given schedule joins the seeds under its name, the
// search returns nothing worse, and a schedule of another setting is
// refused. On a cluster with per-device memories the answer verifies
// against each device's budget.
func TestSearchStartsFrom(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	c := cluster.Uniform(4)
	c.Default.Latency = 1
	c.Devices[0].Memory = 3 // below 1F1B's 4 on device 0
	q, err := c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	start, _ := baseline.GPipe(q, n, 0) // over device 0's budget: built without it
	start.Placement = q
	_, err = Search(context.Background(), q, Options{MicroBatches: n, Start: []Start{{Name: "gpipe", Schedule: start}}})
	if err == nil || !strings.Contains(err.Error(), `start "gpipe"`) {
		t.Fatalf("a start over a device's budget: %v", err)
	}
	ok, err := baseline.OneFOneB(p, n, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Search(context.Background(), q, Options{MicroBatches: n, Start: []Start{{Name: "other", Schedule: ok}}}); err == nil {
		t.Fatal("a start of another placement was taken")
	}
	res, err := Search(context.Background(), q, Options{MicroBatches: n, RefineEffort: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := schedule.Verify(res.Schedule); err != nil {
		t.Fatal(err)
	}
	if peak := schedule.Measure(res.Schedule).PeakMemory[0]; peak > 3 {
		t.Errorf("device 0 peaks at %d over its capacity 3", peak)
	}
	again, err := Search(context.Background(), q, Options{MicroBatches: n, RefineEffort: -1, Start: []Start{{Name: "previous", Schedule: res.Schedule}}})
	if err != nil {
		t.Fatal(err)
	}
	if again.Makespan() > res.Makespan() || again.Seeds[0].Name != "previous" {
		t.Errorf("from a start of %d: %d, seeds %v", res.Makespan(), again.Makespan(), again.Seeds)
	}
}
