package placement

import (
	"fmt"
	"slices"
	"testing"
)

// The expectations below follow from the shapes' definitions with forward
// time ft and backward time bt: a stage is busy ft+bt on its device, a
// shard block 1 on every device, k-shape's cross block ft+bt on every
// device.
func TestGraphHelpersOnBuiltins(t *testing.T) {
	type want struct{ load, cp int }
	wants := func(name string, d, ft, bt int) want {
		switch name {
		case "v-shape":
			return want{ft + bt, d * (ft + bt)}
		case "x-shape":
			return want{2 * (ft + bt), d * (ft + bt)}
		case "m-shape":
			return want{ft + bt + 2, d*(ft+bt) + 2}
		case "nn-shape":
			return want{ft + bt + 4, d*(ft+bt) + 4}
		case "k-shape":
			return want{2 * (ft + bt), (d/2 + 1) * (ft + bt)}
		case "dualpipe": // input and weight time 1: the forwards, the inputs, the last weight
			return want{2 * (ft + 2), d*(ft+1) + 1}
		}
		panic(name)
	}
	for _, name := range BuiltinNames() {
		for _, d := range []int{2, 4, 8} {
			for _, times := range [][2]int{{1, 3}, {2, 2}, {1, 5}} {
				ft, bt := times[0], times[1]
				t.Run(fmt.Sprintf("%s/D=%d/%d+%d", name, d, ft, bt), func(t *testing.T) {
					p, err := Builtin(name, Options{Devices: d, ForwardTime: ft, BackwardTime: bt})
					if err != nil {
						t.Fatal(err)
					}
					w := wants(name, d, ft, bt)
					for dev, l := range p.Loads() {
						if l != w.load {
							t.Errorf("load of device %d = %d, want %d", dev, l, w.load)
						}
					}
					if p.MaxLoad() != w.load {
						t.Errorf("MaxLoad = %d, want %d", p.MaxLoad(), w.load)
					}
					if cp := p.CriticalPath(); cp != w.cp {
						t.Errorf("CriticalPath = %d, want %d", cp, w.cp)
					}
					checkHeadsTails(t, p)
				})
			}
		}
	}
}

// checkHeadsTails checks Heads and Tails against their definition: a block
// starts no earlier than each predecessor's head + time, and the longest
// path through any block is head + time + tail ≤ the critical path, with
// equality for at least one block.
func checkHeadsTails(t *testing.T, p *Placement) {
	t.Helper()
	head, tail, cp := p.Heads(), p.Tails(), p.CriticalPath()
	preds, succs := p.Preds(), p.Succs()
	onPath := false
	for i, b := range p.Blocks {
		want := 0
		for _, j := range preds[i] {
			want = max(want, head[j]+p.Blocks[j].Time)
		}
		if head[i] != want {
			t.Errorf("head of %s = %d, want %d", b.ID, head[i], want)
		}
		want = 0
		for _, j := range succs[i] {
			want = max(want, tail[j]+p.Blocks[j].Time)
		}
		if tail[i] != want {
			t.Errorf("tail of %s = %d, want %d", b.ID, tail[i], want)
		}
		if head[i]+b.Time+tail[i] > cp {
			t.Errorf("path through %s longer than the critical path %d", b.ID, cp)
		}
		onPath = onPath || head[i]+b.Time+tail[i] == cp
	}
	if !onPath {
		t.Error("no block on the critical path")
	}
}

func TestVShapeD4(t *testing.T) {
	p, err := Builtin("v-shape", Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	// Every device holds f_s and b_s: 1 + 3 = 4.
	if got := p.Loads(); !slices.Equal(got, []int{4, 4, 4, 4}) {
		t.Errorf("loads %v", got)
	}
	for d, bs := range p.DeviceBlocks() {
		want := []int{p.Index(fmt.Sprint("f", d)), p.Index(fmt.Sprint("b", d))}
		slices.Sort(want)
		if !slices.Equal(bs, want) {
			t.Errorf("device %d holds %v, want %v", d, bs, want)
		}
	}
	// Heads along the chain: f_s after s forwards, b_s after all forwards
	// and the backwards of the stages above it.
	head := p.Heads()
	for s := range 4 {
		if h := head[p.Index(fmt.Sprint("f", s))]; h != s {
			t.Errorf("head of f%d = %d, want %d", s, h, s)
		}
		if h := head[p.Index(fmt.Sprint("b", s))]; h != 4+3*(3-s) {
			t.Errorf("head of b%d = %d, want %d", s, h, 4+3*(3-s))
		}
	}
	if p.Shares(p.Index("f0"), p.Index("f1")) || !p.Shares(p.Index("f2"), p.Index("b2")) {
		t.Error("Shares wrong on v-shape")
	}
}

func TestMShapeD4(t *testing.T) {
	p, err := Builtin("m-shape", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Loads(); !slices.Equal(got, []int{6, 6, 6, 6}) {
		t.Errorf("loads %v, want 6 each", got)
	}
	fs := p.Index("fs")
	for i := range p.Blocks {
		if !p.Shares(fs, i) {
			t.Errorf("shard block shares no device with %s", p.Blocks[i].ID)
		}
	}
	for d := range 4 {
		if !p.OnDevice(fs, d) {
			t.Errorf("fs not on device %d", d)
		}
	}
}

func TestHandWrittenPlacements(t *testing.T) {
	uneq, err := Load(placementsDir + "/unequal.json")
	if err != nil {
		t.Fatal(err)
	}
	// A chain: the critical path is the sum of all times; a device's load
	// the sum of its blocks' times.
	sum := 0
	loads := make([]int, uneq.Devices)
	for _, b := range uneq.Blocks {
		sum += b.Time
		loads[b.Devices[0]] += b.Time
	}
	if uneq.CriticalPath() != sum || !slices.Equal(uneq.Loads(), loads) {
		t.Errorf("unequal: cp %d loads %v, want %d %v", uneq.CriticalPath(), uneq.Loads(), sum, loads)
	}
	if slices.Min(loads) == slices.Max(loads) {
		t.Errorf("unequal.json has equal loads %v", loads)
	}
	checkHeadsTails(t, uneq)

	// join-fork is k-shape written by hand with other ids: same loads,
	// same critical path, same number of blocks and dependencies.
	jf, err := Load(placementsDir + "/join-fork.json")
	if err != nil {
		t.Fatal(err)
	}
	k, _ := Builtin("k-shape", Options{})
	if jf.K() != k.K() || len(jf.Deps) != len(k.Deps) || !slices.Equal(jf.Loads(), k.Loads()) || jf.CriticalPath() != k.CriticalPath() {
		t.Errorf("join-fork unlike k-shape: K %d/%d deps %d/%d loads %v/%v cp %d/%d",
			jf.K(), k.K(), len(jf.Deps), len(k.Deps), jf.Loads(), k.Loads(), jf.CriticalPath(), k.CriticalPath())
	}
	join := jf.Index("join")
	if len(jf.Preds()[join]) != 2 || len(jf.Succs()[jf.Index("fork")]) != 2 {
		t.Error("join-fork does not join and fork")
	}
	checkHeadsTails(t, jf)
}
