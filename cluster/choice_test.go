package cluster

import (
	"testing"

	"github.com/tessel-pp/tessel/placement"
)

// Choosing on the cluster and choosing before it give the same placement:
// placement.Choose(c.Apply(p), x) equals c.Apply(placement.Choose(p, x))
// for every choice x, transfers recomputed for the chosen devices (the
// link's time, 0 on a shared device, the default link where no pair is
// listed).
func TestApplyOpen(t *testing.T) {
	p, err := placement.Load("../testdata/placements/where-branches.json")
	if err != nil {
		t.Fatal(err)
	}
	c := Uniform(2)
	c.Devices[1].Speed = 2
	c.Default = Link{Latency: 3}
	open, err := c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	if open.Costs == nil || !open.Open() {
		t.Fatal("no costs on the open placement")
	}
	n := p.Assignments(1 << 20)
	for x := range n {
		choice := make([]int, p.K())
		for i, r := 0, x; i < p.K(); i++ {
			k := len(p.DeviceOptions(i))
			choice[i], r = r%k, r/k
		}
		a, err := placement.Choose(open, choice)
		if err != nil {
			t.Fatal(err)
		}
		chosen, err := placement.Choose(p, choice)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Apply(chosen)
		if err != nil {
			t.Fatal(err)
		}
		if !a.Equal(b) {
			t.Fatalf("choice %v: choose on the cluster differs from the cluster on the choice", choice)
		}
	}
}

// A chosen placement on a cluster keeps the costs of every choice: choosing
// again from it is choosing on the cluster.
func TestApplyChosen(t *testing.T) {
	p, err := placement.Load("../testdata/placements/where-branches.json")
	if err != nil {
		t.Fatal(err)
	}
	c := Uniform(2)
	c.Devices[0].Speed = 0.5
	c.Default = Link{Latency: 2}
	chosen, err := placement.Choose(p, []int{0, 0, 0, 1, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	on, err := c.Apply(chosen)
	if err != nil {
		t.Fatal(err)
	}
	other := []int{0, 1, 1, 0, 0, 1}
	again, err := placement.Choose(on.Reopen(), other)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := placement.Choose(p, other)
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.Apply(direct)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Equal(want) {
		t.Error("choosing again from a chosen placement on the cluster differs from choosing on the cluster")
	}
}
