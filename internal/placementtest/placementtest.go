// Package placementtest builds the placements that tests of several
// packages share: a built-in shape (or the test fails), transfers on
// every link of it, and the smallest placement whose tensors queue on one
// link (links as a resource, docs/design.md). Test support only: nothing
// outside tests imports it.
package placementtest

import (
	"testing"

	"github.com/tessel-pp/tessel/opgraph"
	"github.com/tessel-pp/tessel/placement"
)

// WithTransfers gives every dependency of p between blocks on different
// devices the transfer time c, as a cluster whose links all take c
// would, and sets whether links carry one transfer at a time. It changes
// and returns p.
func WithTransfers(p *placement.Placement, c int, channels bool) *placement.Placement {
	p.Transfers = map[placement.Dep]int{}
	for _, d := range p.Deps {
		if !p.Shares(d.From, d.To) {
			p.Transfers[d] = c
		}
	}
	p.QueuedLinks = channels
	return p
}

// TwoSenders is the smallest placement whose tensors share a link: a and
// b on device 0 (time 1) both send to c on device 1 (time 1), each
// tensor taking 2 on the link 0→1. With channels that link carries 4 per
// micro-batch against device 0's load of 2.
func TwoSenders(channels bool) *placement.Placement {
	a, b := placement.Dep{From: 0, To: 2}, placement.Dep{From: 1, To: 2}
	return &placement.Placement{
		Name: "two-senders", Devices: 2,
		Blocks: []placement.Block{
			{ID: "a", Kind: placement.Forward, Devices: []int{0}, Time: 1},
			{ID: "b", Kind: placement.Forward, Devices: []int{0}, Time: 1},
			{ID: "c", Kind: placement.Forward, Devices: []int{1}, Time: 1},
		},
		Deps:   []placement.Dep{a, b},
		Timing: placement.Timing{Transfers: map[placement.Dep]int{a: 2, b: 2}, QueuedLinks: channels},
	}
}

// Builtin is the built-in placement name with opt, or fails the test.
func Builtin(t testing.TB, name string, opt placement.Options) *placement.Placement {
	t.Helper()
	p, err := placement.Builtin(name, opt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// DAG is She et al.'s seeded random operator graph of nodes operators on
// devices chips (opgraph.Generate, seed 1), on its cluster.
func DAG(t testing.TB, nodes, devices int) *placement.Placement {
	t.Helper()
	p, err := opgraph.Generate(opgraph.Options{Seed: 1, Nodes: nodes, Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	q, err := opgraph.Cluster(devices, opgraph.DefaultLink()).Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
