package baseline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// TestZBAutoOrders pins ZBAuto to the orders of the zero-bubble
// auto-scheduler's greedy (Qi et al., "Zero Bubble Pipeline Parallelism",
// §3.3; sail-sg/zero-bubble-pipeline-parallelism, scheduler zb,
// initial_solution): testdata holds the authors' orders for 37 random
// chains (2 to 8 stages, per-stage forward, input and weight times,
// transfer 0 to 4, budget unlimited, S or 2S), one line per device: "S N
// transfer budget F-times / I-times / W-times device: order", B standing for
// the input gradient as the authors write it.
func TestZBAutoOrders(t *testing.T) {
	f, err := os.Open("testdata/zb-auto-orders.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	lines := 0
	for sc.Scan() {
		line := sc.Text()
		head, want, _ := strings.Cut(line, ":")
		parts := strings.Split(head, " / ")
		var S, n, comm, mm int
		fields := strings.Fields(parts[0])
		fmt.Sscan(fields[0], &S)
		fmt.Sscan(fields[1], &n)
		fmt.Sscan(fields[2], &comm)
		fmt.Sscan(fields[3], &mm)
		ints := func(ss []string) []int {
			var o []int
			for _, s := range ss {
				var x int
				fmt.Sscan(s, &x)
				o = append(o, x)
			}
			return o
		}
		cf := ints(fields[4:])
		cb := ints(strings.Fields(parts[1]))
		last := strings.Fields(parts[2])
		cw := ints(last[:S])
		var dev int
		fmt.Sscan(last[S], &dev)
		p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: S, SplitBackward: true})
		for s := range S {
			p.Blocks[p.Index(fmt.Sprintf("f%d", s))].Time = cf[s]
			p.Blocks[p.Index(fmt.Sprintf("i%d", s))].Time = cb[s]
			p.Blocks[p.Index(fmt.Sprintf("w%d", s))].Time = cw[s]
		}
		placementtest.WithTransfers(p, comm, false)
		q, _ := wholePipeline(p)
		g := newZBGraph(p, q, n, mm)
		orders, err := g.best(false)
		if err != nil {
			t.Fatal(err)
		}
		var got strings.Builder
		for _, r := range orders[dev] {
			id := p.Blocks[r.Block].ID
			fmt.Fprintf(&got, " %s%d", map[byte]string{'f': "F", 'i': "B", 'w': "W"}[id[0]], r.Micro)
		}
		if got.String() != want {
			t.Errorf("%s:\n got%s\nwant%s", head, got.String(), want)
		}
		lines++
	}
	if lines == 0 {
		t.Fatal("no orders in testdata")
	}
}

// TestZBAutoFreeingInput pins ZBAuto to the authors' greedy on the memory
// model of their repository (each forward +2, each input gradient −1,
// each weight gradient −1: the input gradient frees part of the
// activation) and the costs of a transformer's stages: forward 9 to 11,
// the input gradient no cheaper, the weight gradient cheaper, the
// embedding stage's backward cheap, the head stage's forward and weight
// gradient a quarter heavier, one transfer time on every link, and the
// memory limits the repository's --zero-bubble-max-pending-backward sets
// (S or 2S pending backwards: 2S or 4S units; 0 unlimited). testdata holds,
// one JSON line per case, the inputs and what the authors' initial_solution
// returned for them (sail-sg/zero-bubble-pipeline-parallelism, scheduler
// zb, commit 39f2c186): each device's order by end time and the makespan of
// the times it computed.
func TestZBAutoFreeingInput(t *testing.T) {
	data, err := os.ReadFile("testdata/zb-auto-split-frees.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cases := 0
	for line := range strings.Lines(string(data)) {
		var c struct {
			Stages, N, Transfer, Limit, Makespan int
			Forward, Input, Weight, Memory       []int
			Orders                               []string
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: c.Stages, SplitBackward: true})
		for s := range c.Stages {
			for k, id := range []string{"f", "i", "w"} {
				b := &p.Blocks[p.Index(fmt.Sprintf("%s%d", id, s))]
				b.Time = [][]int{c.Forward, c.Input, c.Weight}[k][s]
				b.Memory = c.Memory[k]
			}
		}
		placementtest.WithTransfers(p, c.Transfer, false)
		s, err := ZBAuto(spec.Spec{Placement: p, MicroBatches: c.N, Memory: c.Limit})
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		orders := schedule.Orders(s)
		for d, want := range c.Orders {
			var got []string
			for _, r := range orders[d] {
				id := p.Blocks[r.Block].ID
				got = append(got, fmt.Sprintf("%s%d", map[byte]string{'f': "F", 'i': "B", 'w': "W"}[id[0]], r.Micro))
			}
			if g := strings.Join(got, " "); g != want {
				t.Errorf("%s\ndevice %d:\n got %s\nwant %s", line, d, g, want)
			}
		}
		if got := schedule.Makespan(s); got != c.Makespan {
			t.Errorf("%s: makespan %d, want %d", line, got, c.Makespan)
		}
		cases++
	}
	if cases == 0 {
		t.Fatal("no cases in testdata")
	}
}
