package schedule_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// onCluster is v2's 1F1B order compacted on a cluster where every
// transfer takes 1 and device 1 runs at half speed.
func onCluster(t *testing.T) (*schedule.Schedule, *cluster.Cluster) {
	t.Helper()
	s := v2(t)
	c := cluster.Uniform(2)
	c.Default = cluster.Link{Latency: 1}
	c.Devices[1].Speed = 0.5
	q, err := c.Apply(s.Placement)
	if err != nil {
		t.Fatal(err)
	}
	insC, err := compact.Compact(spec.New(q, s.MicroBatches), compact.Keep{Orders: schedule.Orders(s)})
	if err != nil {
		t.Fatal(err)
	}
	ins := insC.Instances
	out := &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: s.MicroBatches, Memory: s.Memory}, Instances: ins}
	if err := out.SetCluster(c, s.Placement); err != nil {
		t.Fatal(err)
	}
	if err := verify.Schedule(out); err != nil {
		t.Fatal(err)
	}
	return out, c
}

// The schedule file records the cluster (docs/formats.md, "Schedule file"),
// holds the placement as given, and reads back to the same schedule:
// Verify re-checks it with the cluster's times.
func TestFileRecordsCluster(t *testing.T) {
	s, c := onCluster(t)
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if !strings.Contains(text, `"cluster": {`) || !strings.Contains(text, `{"id": "b1", "kind": "backward", "devices": [1], "time": 3, "memory": -1}`) {
		t.Fatalf("the file lacks the cluster or holds the times on the cluster:\n%s", text)
	}
	r, err := schedule.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !r.Cluster.Equal(c) || !r.Placement.Equal(s.Placement) || !r.Given.Equal(s.Given) {
		t.Error("parse after write lost the cluster")
	}
	if r.Placement.Blocks[block(t, r.Placement, "b1")].Time != 6 {
		t.Error("b1 does not take 6 on the half-speed device")
	}
	if err := verify.Schedule(r); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := r.Write(&again); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
		t.Fatalf("second write differs (%v)", err)
	}
	// The consumer one unit early: the verifier names the dependency and
	// the transfer time that the file's cluster gives.
	f1 := block(t, r.Placement, "f1")
	for x, in := range r.Instances {
		if in.Block == f1 && in.Micro == 0 {
			r.Instances[x].Start--
		}
	}
	err = verify.Schedule(r)
	if err == nil || !strings.Contains(err.Error(), "dependency f0 -> f1 broken for micro-batch 0: f0^0 ends at 1 and its transfer takes 1, f1^0 starts at 1 < 2") {
		t.Errorf("early consumer: %v", err)
	}
	// A cluster that does not give the placement is an input error.
	r.Cluster = cluster.Uniform(2)
	if err := verify.Schedule(r); err == nil || !strings.Contains(err.Error(), "not the source placement on the cluster") {
		t.Errorf("mismatched cluster: %v", err)
	}
	// Without a cluster, transfer times cannot be written.
	s.Cluster, s.Given = nil, nil
	if err := s.Write(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no cluster to record them") {
		t.Errorf("transfers without a cluster: %v", err)
	}
}

// Per-device budgets: the file carries them where a device's differs
// from memory, and the verifier checks each device against its own.
func TestFileBudgets(t *testing.T) {
	s := v2(t)
	s.Memory = 0
	s.Placement.Capacities = []int{1, 0}
	err := verify.Schedule(s)
	if err == nil || !strings.Contains(err.Error(), "memory on device 0 reaches 2 > budget 1") {
		t.Fatalf("device 1 over its capacity: %v", err)
	}
	s.Placement.Capacities = []int{2, 0}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "\"memory\": 0,\n  \"budgets\": [2, 0],") {
		t.Fatalf("no budgets in:\n%s", buf.String())
	}
	r, err := schedule.Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Budgets(); got[0] != 2 || got[1] != 0 {
		t.Errorf("budgets read back as %v", got)
	}
	bad := strings.Replace(buf.String(), `"budgets": [2, 0]`, `"budgets": [2]`, 1)
	if _, err := schedule.Parse([]byte(bad)); err == nil || err.Error() != `field "budgets": 1 budgets for 2 devices` {
		t.Errorf("short budgets: %v", err)
	}
	// With a cluster, budgets must be what its memories give.
	cs, _ := onCluster(t)
	cs.Cluster.Devices[0].Memory = 1
	cs.Placement.Capacities = []int{1, 0}
	cs.Instances = nil
	buf.Reset()
	if err := cs.Write(&buf); err != nil {
		t.Fatal(err)
	}
	bad = strings.Replace(buf.String(), `"budgets": [1, 2]`, `"budgets": [2, 2]`, 1)
	if _, err := schedule.Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "but the cluster's memories and memory 2 give [1 2]") {
		t.Errorf("budgets against the cluster: %v\n%s", err, buf.String())
	}
}
