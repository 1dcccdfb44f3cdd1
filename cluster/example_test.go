package cluster_test

import (
	"context"
	"fmt"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// A placement file on a cluster file — one device at half speed — and
// the search of its schedule there. The schedule file records the
// cluster, so that tessel verify checks it on the cluster's times.
func ExampleCluster_Apply() {
	given, err := placement.Load("../testdata/placements/v-shape.json")
	if err != nil {
		panic(err)
	}
	c, err := cluster.Load("../testdata/clusters/four-half-speed.json")
	if err != nil {
		panic(err)
	}
	p, err := c.Apply(given) // block times on their devices, transfer times on the links
	if err != nil {
		panic(err)
	}
	res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Memory: 4}, search.Options{})
	if err != nil {
		panic(err)
	}
	s := res.Schedule
	if err := s.SetCluster(c, given); err != nil {
		panic(err)
	}
	if err := verify.Schedule(s); err != nil {
		panic(err)
	}
	m := schedule.Measure(s)
	fmt.Printf("%s on %d devices: makespan %d, bubble rate %.2f%%, peak memory %v\n", p.Name, p.Devices, m.Makespan, 100*m.BubbleRate, m.PeakMemory)
	// Output: v-shape on 4 devices: makespan 76, bubble rate 47.37%, peak memory [4 4 4 3]
}
