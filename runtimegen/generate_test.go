package runtimegen

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// On the built-in shapes, the backward block named b… (bd…, bu…, bs…, bx…)
// differentiates the forward block named f… with the same suffix.
func TestPairsBuiltins(t *testing.T) {
	for _, c := range allBuiltins(t, 4) {
		pair := c.p.Pairs()
		for i, b := range c.p.Blocks {
			if b.Kind == placement.Forward {
				if pair[i] != -1 {
					t.Errorf("%s: forward %s paired with %d", c.label, b.ID, pair[i])
				}
				continue
			}
			if b.Kind == placement.Input || b.Kind == placement.Weight {
				continue // a split backward (dualpipe): no workers for it yet
			}
			want := "f" + b.ID[1:]
			if pair[i] < 0 || c.p.Blocks[pair[i]].ID != want {
				t.Errorf("%s: %s paired with %d, want %s", c.label, b.ID, pair[i], want)
			}
		}
	}
}

func TestRoles(t *testing.T) {
	for _, tc := range []struct {
		shape string
		want  map[string]Role // "from->to": role
	}{
		{"v-shape", map[string]Role{"f0->f1": Activation, "f3->b3": Saved, "b3->b2": Gradient, "b1->b0": Gradient}},
		{"m-shape", map[string]Role{"fs->f0": Activation, "b0->bs": Gradient, "f3->b3": Saved}},
		{"nn-shape", map[string]Role{"f1->fs1": Activation, "fs1->f2": Activation, "b2->bs1": Gradient, "bs1->b1": Gradient, "b0->bs0": Gradient}},
		{"k-shape", map[string]Role{"f1->fx": Activation, "f3->fx": Activation, "fx->bx": Saved, "bx->b1": Gradient, "bx->b3": Gradient}},
	} {
		p := builtin(t, tc.shape, 4, false)
		got := map[string]Role{}
		for _, b := range BlockInfos(p) {
			for _, o := range b.Outputs {
				got[b.ID+"->"+o.Block] = o.Role
			}
			for _, in := range b.Inputs {
				if r := got[in.Block+"->"+b.ID]; r != "" && r != in.Role {
					t.Errorf("%s: %s->%s is %s at one end, %s at the other", tc.shape, in.Block, b.ID, r, in.Role)
				}
			}
		}
		if len(got) != len(p.Deps) {
			t.Errorf("%s: %d roles for %d dependencies", tc.shape, len(got), len(p.Deps))
		}
		for dep, r := range tc.want {
			if got[dep] != r {
				t.Errorf("%s: %s is %q, want %q", tc.shape, dep, got[dep], r)
			}
		}
	}
}

func TestCheckTrainable(t *testing.T) {
	for _, c := range allBuiltins(t, 4) {
		if err := CheckTrainable(c.p); err != nil {
			t.Errorf("%s: %v", c.label, err)
		}
	}
	blk := func(id string, k placement.Kind, dev int) placement.Block {
		return placement.Block{ID: id, Kind: k, Devices: []int{dev}, Time: 1}
	}
	for _, tc := range []struct {
		name string
		p    *placement.Placement
		err  string
	}{
		{"backward alone", &placement.Placement{Devices: 2, Blocks: []placement.Block{
			blk("f0", placement.Forward, 0), blk("b1", placement.Backward, 1)},
			Deps: []placement.Dep{{From: 0, To: 1}}}, `"b1": no forward block`},
		{"no gradient path", &placement.Placement{Devices: 2, Blocks: []placement.Block{
			blk("f0", placement.Forward, 0), blk("f1", placement.Forward, 1), blk("b0", placement.Backward, 0), blk("b1", placement.Backward, 1)},
			Deps: []placement.Dep{{From: 0, To: 1}, {From: 1, To: 3}, {From: 0, To: 2}}}, `"b0": forward "f0" feeds`},
	} {
		if err := CheckTrainable(tc.p); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.err)
		}
	}
}

// The property the deadlock argument rests on: for every ordered pair of
// devices, the sender posts its sends in the order the receiver posts its
// receives. Transfers follow dependencies that cross devices, once each.
func TestGeneratePairOrder(t *testing.T) {
	for _, c := range allBuiltins(t, 4) {
		s := greedy(t, c.p, 4)
		want := 0
		for _, d := range c.p.Deps {
			for _, dev := range c.p.Blocks[d.To].Devices {
				if !slices.Contains(c.p.Blocks[d.From].Devices, dev) {
					want += s.MicroBatches
				}
			}
		}
		for _, mode := range Modes() {
			progs := generate(t, s, mode)
			sends := map[[2]int][]int{}
			recvs := map[[2]int][]int{}
			for d, p := range progs {
				for _, o := range p.Ops {
					switch o.Kind {
					case Send:
						sends[[2]int{d, o.Peer}] = append(sends[[2]int{d, o.Peer}], o.Tag)
					case Recv:
						recvs[[2]int{o.Peer, d}] = append(recvs[[2]int{o.Peer, d}], o.Tag)
					}
				}
			}
			n := 0
			for pair, tags := range sends {
				n += len(tags)
				if !slices.Equal(tags, recvs[pair]) {
					t.Errorf("%s %s: device %d sends %v to %d, which receives %v", c.label, mode, pair[0], tags, pair[1], recvs[pair])
				}
			}
			if n != want {
				t.Errorf("%s %s: %d transfers, want %d", c.label, mode, n, want)
			}
		}
	}
}

// Blocking programs send and receive right after the producer (f0@1 ends
// at 2 and f1@0 starts at 1, so device 1 receives f0@1's output before
// running f1@0); non-blocking ones post the receive before the block that
// runs while the producer starts, wait for the tensor right before the
// consumer, and wait for their sends at the end: f0@1 starts at 1, while
// f1@0 runs.
func TestGeneratePlacesOps(t *testing.T) {
	s := greedy(t, builtin(t, "v-shape", 2, false), 2)
	got := map[Mode]string{}
	for _, mode := range Modes() {
		got[mode] = generate(t, s, mode)[1].Text()
	}
	want := map[Mode]string{
		Blocking: `# v-shape device 1 of 2, blocking, 2 micro-batches
recv f0->f1@0 from 0 #0
recv f0->f1@1 from 0 #1
compute f1@0
compute b1@0
send b1->b0@0 to 0 #2
compute f1@1
compute b1@1
send b1->b0@1 to 0 #3
`,
		NonBlocking: `# v-shape device 1 of 2, nonblocking, 2 micro-batches
recv f0->f1@0 from 0 #0
recv f0->f1@1 from 0 #1
wait f0->f1@0 from 0 #0
compute f1@0
compute b1@0
send b1->b0@0 to 0 #2
wait f0->f1@1 from 0 #1
compute f1@1
compute b1@1
send b1->b0@1 to 0 #3
wait b1->b0@0 to 0 #2
wait b1->b0@1 to 0 #3
`,
	}
	for _, mode := range Modes() {
		if got[mode] != want[mode] {
			t.Errorf("%s:\n%s\nwant:\n%s", mode, got[mode], want[mode])
		}
	}
}

func TestGenerateRejects(t *testing.T) {
	p := builtin(t, "v-shape", 2, false)
	s := greedy(t, p, 2)
	if _, err := Generate(s, "eager"); err == nil || !strings.Contains(err.Error(), "unknown mode") {
		t.Errorf("unknown mode: %v", err)
	}
	bad := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 2}, Instances: slices.Clone(s.Instances)}
	bad.Instances[1].Start = bad.Instances[0].Start // overlaps or breaks a dependency
	if _, err := Generate(bad, NonBlocking); err == nil || !strings.Contains(err.Error(), "schedule") {
		t.Errorf("invalid schedule: %v", err)
	}
}

// Check finds broken programs; each case breaks one rule.
func TestCheckRejects(t *testing.T) {
	s := greedy(t, builtin(t, "m-shape", 2, false), 2)
	for _, tc := range []struct {
		name   string
		mode   Mode
		break_ func(ps []*Program)
		err    string
	}{
		{"missing program", Blocking, nil, "1 programs for 2 devices"},
		{"compute twice", Blocking, func(ps []*Program) { ps[0].Ops = append(ps[0].Ops, ps[0].Ops[0]) }, "runs twice"},
		{"compute dropped", Blocking, func(ps []*Program) { ps[0].Ops = dropOp(ps[0].Ops, Collective, -1) }, "never runs"},
		{"recv dropped", Blocking, func(ps []*Program) { ps[1].Ops = dropOp(ps[1].Ops, Recv, 0) }, "has not been received"},
		{"send dropped", Blocking, func(ps []*Program) { ps[0].Ops = dropOp(ps[0].Ops, Send, 0) }, "no device sends it"},
		{"wait in blocking", Blocking, func(ps []*Program) {
			ps[0].Ops = append(ps[0].Ops, Op{Kind: Wait, Block: "f0", Tensor: "f0->f1@0", Peer: 1})
		}, "no waits"},
		{"wait dropped", NonBlocking, func(ps []*Program) { ps[0].Ops = dropOp(ps[0].Ops, Wait, -1) }, "never waited for"},
		{"recv wait dropped", NonBlocking, func(ps []*Program) { ps[1].Ops = dropOp(ps[1].Ops, Wait, 0) }, "has not been received"},
		{"wrong peer", Blocking, func(ps []*Program) { setOp(ps[0].Ops, Send, func(o *Op) { o.Peer = 0 }) }, "not another device"},
		{"tag mix", Blocking, func(ps []*Program) { setOp(ps[0].Ops, Send, func(o *Op) { o.Tag = 99 }) }, "no device"},
		{"wrong tensor", Blocking, func(ps []*Program) { setOp(ps[0].Ops, Send, func(o *Op) { o.Tensor = "f0->b0@0" }) }, "no dependency"},
		{"collective as compute", Blocking, func(ps []*Program) { setOp(ps[0].Ops, Collective, func(o *Op) { o.Kind = Compute }) }, "is a collective"},
		{"unknown block", Blocking, func(ps []*Program) { ps[0].Ops[0].Block = "zz" }, "unknown block"},
		{"mode mix", Blocking, func(ps []*Program) { ps[1].Mode = NonBlocking }, "differs"},
		{"blocks differ", Blocking, func(ps []*Program) { ps[1].Blocks = ps[1].Blocks[1:] }, "blocks differ"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := generate(t, s, tc.mode)
			if err := Check(ps); err != nil {
				t.Fatalf("generated programs: %v", err)
			}
			if tc.break_ == nil {
				ps = ps[:1]
			} else {
				ps[1].Blocks = slices.Clone(ps[1].Blocks)
				tc.break_(ps)
			}
			if err := Check(ps); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("got %v, want an error with %q", err, tc.err)
			}
		})
	}
}

// dropOp removes the n-th op of a kind (n = -1: the last).
func dropOp(ops []Op, k OpKind, n int) []Op {
	var at []int
	for i, o := range ops {
		if o.Kind == k {
			at = append(at, i)
		}
	}
	if n < 0 {
		n = len(at) - 1
	}
	return slices.Delete(slices.Clone(ops), at[n], at[n]+1)
}

// setOp changes the first op of a kind.
func setOp(ops []Op, k OpKind, f func(*Op)) {
	for i := range ops {
		if ops[i].Kind == k {
			f(&ops[i])
			return
		}
	}
	panic(fmt.Sprintf("no %s op", k))
}

func TestFiles(t *testing.T) {
	s := greedy(t, builtin(t, "k-shape", 4, false), 2)
	progs := generate(t, s, NonBlocking)
	files, err := Files(progs, "nccl")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"blocks.py", "launch.sh", "rank0.json", "rank1.json", "rank2.json", "rank3.json", "worker.py"}; !slices.Equal(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
	launch := string(files["launch.sh"])
	for _, want := range []string{"--nproc_per_node=4", "BACKEND=${BACKEND:-nccl}", `"k-shape", nonblocking`, "torch.distributed.run"} {
		if !strings.Contains(launch, want) {
			t.Errorf("launch.sh lacks %q:\n%s", want, launch)
		}
	}
	if strings.Contains(launch, "{{") {
		t.Errorf("launch.sh has an unexpanded template:\n%s", launch)
	}
	back, err := ParseProgram(files["rank2.json"])
	if err != nil || back.Device != 2 || len(back.Ops) != len(progs[2].Ops) {
		t.Errorf("rank2.json: %v", err)
	}
	if _, err := Files(progs, "mpi"); err == nil {
		t.Error("unknown backend accepted")
	}
	progs[0].Ops = progs[0].Ops[1:]
	if _, err := Files(progs, "gloo"); err == nil {
		t.Error("broken programs accepted")
	}
}

func TestGroups(t *testing.T) {
	for _, tc := range []struct {
		shape string
		want  string
	}{{"v-shape", "[]"}, {"m-shape", "[[0 1 2 3]]"}, {"k-shape", "[[0 1 2 3]]"}} {
		if got := fmt.Sprint(Groups(builtin(t, tc.shape, 4, false))); got != tc.want {
			t.Errorf("%s: groups %s, want %s", tc.shape, got, tc.want)
		}
	}
}

// Split backward: an input block differentiates its forward's inputs and
// passes the gradient on; its weight block pairs with the same forward and
// uses what it kept. On the V placement each device holds two stages, and
// pairing follows the stage, not the device.
func TestSplitRoles(t *testing.T) {
	for _, tc := range []struct {
		file  string
		pairs map[string]string
		roles map[string]Role
	}{
		{"split-v-shape.json", map[string]string{"i3": "f3", "w3": "f3", "i0": "f0", "w0": "f0"},
			map[string]Role{"f2->f3": Activation, "f3->i3": Saved, "i3->i2": Gradient, "i2->w2": Saved, "i0->w0": Saved}},
		{"v-chunks.json", map[string]string{"i7": "f7", "w7": "f7", "i0": "f0", "w0": "f0", "i4": "f4", "w3": "f3"},
			map[string]Role{"f3->f4": Activation, "f7->i7": Saved, "i4->i3": Gradient, "i7->w7": Saved}},
	} {
		p := loadPlacement(t, tc.file)
		if err := CheckTrainable(p); err != nil {
			t.Errorf("%s: %v", tc.file, err)
		}
		pair := p.Pairs()
		for b, f := range tc.pairs {
			if got := pair[p.Index(b)]; got < 0 || p.Blocks[got].ID != f {
				t.Errorf("%s: %s paired with %d, want %s", tc.file, b, got, f)
			}
		}
		got := map[string]Role{}
		for _, b := range BlockInfos(p) {
			for _, o := range b.Outputs {
				got[b.ID+"->"+o.Block] = o.Role
			}
		}
		for dep, r := range tc.roles {
			if got[dep] != r {
				t.Errorf("%s: %s is %q, want %q", tc.file, dep, got[dep], r)
			}
		}
	}
}

// A split backward the workers cannot run is refused with the reason.
func TestCheckTrainableSplit(t *testing.T) {
	blk := func(id string, k placement.Kind, dev int) placement.Block {
		return placement.Block{ID: id, Kind: k, Devices: []int{dev}, Time: 1}
	}
	f, i, w := blk("f0", placement.Forward, 0), blk("i0", placement.Input, 0), blk("w0", placement.Weight, 0)
	for _, tc := range []struct {
		name string
		p    *placement.Placement
		err  string
	}{
		{"input without weight", &placement.Placement{Devices: 1, Blocks: []placement.Block{f, i},
			Deps: []placement.Dep{{From: 0, To: 1}}}, `input block "i0": forward "f0" has no weight block`},
		{"weight without input", &placement.Placement{Devices: 1, Blocks: []placement.Block{f, w},
			Deps: []placement.Dep{{From: 0, To: 1}}}, `weight block "w0": forward "f0" has no input block`},
		{"weight not after input", &placement.Placement{Devices: 1, Blocks: []placement.Block{f, i, w},
			Deps: []placement.Dep{{From: 0, To: 1}, {From: 0, To: 2}}}, `weight block "w0": needs a dependency on input block "i0"`},
		{"weight on another device", &placement.Placement{Devices: 2, Blocks: []placement.Block{f, i, blk("w0", placement.Weight, 1)},
			Deps: []placement.Dep{{From: 0, To: 1}, {From: 1, To: 2}}}, `input block "i0": forward "f0" has no weight block`},
	} {
		if err := CheckTrainable(tc.p); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.err)
		}
	}
}
