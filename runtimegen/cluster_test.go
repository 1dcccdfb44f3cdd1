package runtimegen

import (
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// onCluster is 1F1B of v-shape on 4 devices, every transfer taking c, one
// device at half speed: a schedule compacted under the one dependency
// rule, with transfers.
func onCluster(t *testing.T, c float64, n int) *schedule.Schedule {
	t.Helper()
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	cl := cluster.Uniform(4)
	cl.Default.Latency = c
	cl.Devices[2].Speed = 0.5
	q, err := cl.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := baseline.OneFOneB(spec.New(q, n))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Programs on a cluster: with the schedule's own transfer times and no
// contention, the non-blocking programs end exactly at the schedule's
// makespan; blocking ones, which hold the sender, end later.
func TestSimulateOnClusterMatchesSchedule(t *testing.T) {
	for _, c := range []float64{0, 1, 3} {
		s := onCluster(t, c, 8)
		progs, err := Generate(s, NonBlocking)
		if err != nil {
			t.Fatal(err)
		}
		r, err := SimulateWith(progs, SimOptions{Placement: s.Placement})
		if err != nil {
			t.Fatal(err)
		}
		if want := schedule.Makespan(s); r.Makespan != want {
			t.Errorf("transfer %g: simulated %d, schedule %d", c, r.Makespan, want)
		}
		// The programs' own times with a uniform transfer of c give the
		// same answer: every cross-device transfer here takes c.
		u, err := Simulate(progs, int(c))
		if err != nil {
			t.Fatal(err)
		}
		if u.Makespan != r.Makespan {
			t.Errorf("transfer %g: uniform %d, by the placement %d", c, u.Makespan, r.Makespan)
		}
	}
}

// With channels, transfers of one link go one at a time: where 1F1B's
// warmup sends forwards one unit apart and each takes 3, they queue, the
// run ends late, and the wait is counted.
func TestSimulateChannels(t *testing.T) {
	s := onCluster(t, 3, 8)
	progs, err := Generate(s, NonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	free, err := SimulateWith(progs, SimOptions{Placement: s.Placement})
	if err != nil {
		t.Fatal(err)
	}
	busy, err := SimulateWith(progs, SimOptions{Placement: s.Placement, QueuedLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	if busy.LinkWait <= 0 || busy.Makespan < free.Makespan || free.LinkWait != 0 {
		t.Errorf("channels: makespan %d (waited %d) against %d without", busy.Makespan, busy.LinkWait, free.Makespan)
	}
	// With transfers of 1, one a unit, nothing queues.
	s1 := onCluster(t, 1, 8)
	progs1, err := Generate(s1, NonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := SimulateWith(progs1, SimOptions{Placement: s1.Placement, QueuedLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	if r1.Makespan != schedule.Makespan(s1) {
		t.Errorf("transfers of 1 with channels: %d, schedule %d (waited %d)", r1.Makespan, schedule.Makespan(s1), r1.LinkWait)
	}
	// A placement whose blocks are not the programs' is refused.
	other := s.Placement.Clone()
	other.Blocks[1].ID = "g1"
	if _, err := SimulateWith(progs, SimOptions{Placement: other}); err == nil {
		t.Error("simulated with another placement")
	}
}

// Two tensors from one block to one device at once: without channels both
// arrive after 2; on one channel the second waits for the first, and the
// run ends 2 later than the schedule.
func TestSimulateChannelsLate(t *testing.T) {
	p := &placement.Placement{Name: "fork", Devices: 2, Blocks: []placement.Block{
		{ID: "a", Kind: placement.Forward, Devices: []int{0}, Time: 1},
		{ID: "b", Kind: placement.Forward, Devices: []int{1}, Time: 1},
		{ID: "c", Kind: placement.Forward, Devices: []int{1}, Time: 1},
	}, Deps: []placement.Dep{{From: 0, To: 1}, {From: 0, To: 2}}}
	cl := cluster.Uniform(2)
	cl.Default.Latency = 2
	q, err := cl.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: q, MicroBatches: 1}, Instances: []schedule.Instance{
		{Block: 0, Micro: 0, Start: 0}, {Block: 1, Micro: 0, Start: 3}, {Block: 2, Micro: 0, Start: 4}}}
	progs, err := Generate(s, NonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	free, err := SimulateWith(progs, SimOptions{Placement: q})
	if err != nil {
		t.Fatal(err)
	}
	busy, err := SimulateWith(progs, SimOptions{Placement: q, QueuedLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	if free.Makespan != 5 || busy.Makespan != 6 || busy.LinkWait != 2 {
		t.Errorf("makespan %d without channels (want 5), %d with (want 6), waited %d (want 2)", free.Makespan, busy.Makespan, busy.LinkWait)
	}
}
