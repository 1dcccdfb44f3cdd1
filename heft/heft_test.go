package heft_test

import (
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/heft"
	"github.com/tessel-pp/tessel/opgraph"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

func dag(t *testing.T, devices int, channels bool) *placement.Placement {
	t.Helper()
	p, err := opgraph.Generate(opgraph.Options{Seed: 1, Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	c := opgraph.Cluster(devices, opgraph.DefaultLink())
	c.QueuedLinks = channels
	q, err := c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// She et al. §V-B: the random 200-operator graph on 2 chips, transfers as
// long as an operator on average. HEFT's schedule is verified and within
// 0.6 of the one-chip time; more micro-batches and channels stay valid.
func TestRandomDAG(t *testing.T) {
	for _, tc := range []struct {
		name       string
		devices, n int
		channels   bool
		ratio      float64 // makespan at most ratio × the one-device time × n
	}{
		{"1 chip", 1, 1, false, 1},
		{"2 chips", 2, 1, false, 0.6},
		{"4 chips", 4, 1, false, 0.35},
		{"2 chips, channels", 2, 1, true, 0.7}, // HEFT times links as free; the queues cost it
		{"2 chips, 3 micro-batches", 2, 3, false, 0.6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := dag(t, tc.devices, tc.channels)
			r, err := heft.Run(p, heft.Options{MicroBatches: tc.n})
			if err != nil {
				t.Fatal(err)
			}
			if err := verify.Schedule(r.Schedule); err != nil {
				t.Fatal(err)
			}
			sum := 0
			for _, b := range p.Blocks {
				sum += b.Time
			}
			ms := schedule.Makespan(r.Schedule)
			if float64(ms) > tc.ratio*float64(sum*tc.n) {
				t.Fatalf("makespan %d > %.2f × %d", ms, tc.ratio, sum*tc.n)
			}
			if tc.devices == 1 && ms != sum {
				t.Fatalf("one device: makespan %d, want the sum %d", ms, sum)
			}
		})
	}
}

// A fork a -> b, a -> c with a transfer of 5: c's earliest finish is on
// a's device after b when b and c are short (no transfer pays), and on the
// other device when they are long.
func TestFork(t *testing.T) {
	for _, tc := range []struct {
		name     string
		time     int
		makespan int
		split    bool
	}{
		{"short", 2, 1 + 2 + 2, false},
		{"long", 20, 1 + 5 + 20, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cands := [][]int{{0}, {1}}
			p := &placement.Placement{Name: "fork", Devices: 2, Blocks: []placement.Block{
				{ID: "a", Kind: placement.Forward, Candidates: cands, Time: 1},
				{ID: "b", Kind: placement.Forward, Candidates: cands, Time: tc.time},
				{ID: "c", Kind: placement.Forward, Candidates: cands, Time: tc.time},
			}, Deps: []placement.Dep{{From: 0, To: 1}, {From: 0, To: 2}}}
			c := cluster.Uniform(2)
			c.Default = cluster.Link{Latency: 5}
			q, err := c.Apply(p)
			if err != nil {
				t.Fatal(err)
			}
			r, err := heft.Run(q, heft.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := schedule.Makespan(r.Schedule); got != tc.makespan {
				t.Fatalf("makespan %d, want %d", got, tc.makespan)
			}
			if split := r.Choice[1] != r.Choice[2]; split != tc.split {
				t.Fatalf("choice %v: split %v, want %v", r.Choice, split, tc.split)
			}
		})
	}
}
