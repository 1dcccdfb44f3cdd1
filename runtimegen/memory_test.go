package runtimegen

import (
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// handActions offloads every forward instance on one device whose
// micro-batch is 1 mod 3 (the offload at the forward's end, the reload at
// the start of its first gradient block) and recomputes those whose
// micro-batch is 2 mod 3 (just before the gradient block): memory actions
// written by hand, for the programs and the workers alone.
func handActions(s *schedule.Schedule) []MemoryAction {
	p := s.Placement
	pair := p.Pairs()
	start := map[schedule.Ref]int{}
	for _, in := range s.Instances {
		start[in.Ref()] = in.Start
	}
	first := map[schedule.Ref]int{} // forward instance → start of its first gradient block
	for _, in := range s.Instances {
		f := pair[in.Block]
		if f < 0 || !kindInfo(p.Blocks[in.Block].Kind).Gradient {
			continue
		}
		r := schedule.Ref{Block: f, Micro: in.Micro}
		if t, ok := first[r]; !ok || in.Start < t {
			first[r] = in.Start
		}
	}
	var acts []MemoryAction
	for _, in := range s.Instances {
		b := p.Blocks[in.Block]
		g, ok := first[in.Ref()]
		if b.Kind != placement.Forward || len(b.Devices) != 1 || !ok {
			continue
		}
		switch in.Micro % 3 {
		case 1:
			acts = append(acts, MemoryAction{Kind: Offload, Block: in.Block, Micro: in.Micro, Start: in.Start + b.Time},
				MemoryAction{Kind: Reload, Block: in.Block, Micro: in.Micro, Start: g})
		case 2:
			acts = append(acts, MemoryAction{Kind: Recompute, Block: in.Block, Micro: in.Micro, Start: g})
		}
	}
	return acts
}

func generateActions(t testing.TB, s *schedule.Schedule, mode Mode, acts []MemoryAction) []*Program {
	t.Helper()
	progs, err := generateWith(s, mode, acts)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(progs); err != nil {
		t.Fatalf("%s/%s: %v", s.Placement.Name, mode, err)
	}
	return progs
}

// Offloads, reloads and recomputes go into the programs of both modes
// on the forward block's device, each before the first block there that
// starts at or after it; the programs check, and the simulator counts a
// recompute's time on its device.
func TestMemoryActionsInPrograms(t *testing.T) {
	s := greedy(t, builtin(t, "v-shape", 4, false), 6)
	acts := handActions(s)
	for _, mode := range Modes() {
		progs := generateActions(t, s, mode, acts)
		text := progs[0].Text()
		for _, want := range []string{"offload f0@1", "reload f0@1", "recompute f0@2"} {
			if !strings.Contains(text, want+"\n") {
				t.Errorf("%s: device 0's program has no %q:\n%s", mode, want, text)
			}
		}
		// In order: forward, offload, reload, backward.
		idx := func(s string) int { return strings.Index(text, s+"\n") }
		if !(idx("compute f0@1") < idx("offload f0@1") && idx("offload f0@1") < idx("reload f0@1") && idx("reload f0@1") < idx("compute b0@1")) {
			t.Errorf("%s: offload and reload out of order:\n%s", mode, text)
		}
		if !(idx("compute f0@2") < idx("recompute f0@2") && idx("recompute f0@2") < idx("compute b0@2")) {
			t.Errorf("%s: recompute out of order:\n%s", mode, text)
		}
		plain := simulate(t, generate(t, s, mode), 0)
		r, err := Simulate(progs, 0)
		if err != nil {
			t.Fatal(err)
		}
		// Device 0 recomputes f0 of micro-batches 2 and 5, time 1 each.
		if got, want := r.Busy[0], plain.Busy[0]+2; got != want {
			t.Errorf("%s: device 0 busy %d, want %d (two recomputes)", mode, got, want)
		}
		// The text and JSON forms round-trip.
		for _, o := range progs[0].Ops {
			back, err := ParseOp(o.String())
			if err != nil || back != o {
				t.Errorf("ParseOp(%q) = %v, %v", o.String(), back, err)
			}
		}
		data, err := progs[0].Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseProgram(data)
		if err != nil || len(back.Ops) != len(progs[0].Ops) {
			t.Fatalf("ParseProgram: %v", err)
		}
	}
}

// Check rejects memory operations out of place, naming the instance.
func TestCheckMemoryRules(t *testing.T) {
	s := greedy(t, builtin(t, "v-shape", 2, false), 3)
	base := generate(t, s, NonBlocking)
	find := func(ops []Op, o Op) int {
		for i, x := range ops {
			if x == o {
				return i
			}
		}
		t.Fatalf("no op %s", o)
		return -1
	}
	insert := func(ops []Op, at int, o ...Op) []Op {
		out := append([]Op(nil), ops[:at]...)
		out = append(out, o...)
		return append(out, ops[at:]...)
	}
	f1 := Op{Kind: Compute, Block: "f0", Micro: 1}
	b1 := Op{Kind: Compute, Block: "b0", Micro: 1}
	off := Op{Kind: Offload, Block: "f0", Micro: 1}
	rel := Op{Kind: Reload, Block: "f0", Micro: 1}
	rec := Op{Kind: Recompute, Block: "f0", Micro: 1}
	for _, tc := range []struct {
		name string
		edit func([]Op) []Op
		want string
	}{
		{"no reload", func(o []Op) []Op { return insert(o, find(o, f1)+1, off) }, "b0@1 runs while f0@1 is offloaded"},
		{"before the forward", func(o []Op) []Op { return insert(o, find(o, f1), off) }, "f0@1 has not run"},
		{"reload without offload", func(o []Op) []Op { return insert(o, find(o, f1)+1, rel) }, "not offloaded"},
		{"after the gradient", func(o []Op) []Op { return insert(o, find(o, b1)+1, rec) }, "after its gradient block"},
		{"twice", func(o []Op) []Op { return insert(o, find(o, f1)+1, rec, off) }, "already recomputed"},
		{"backward block", func(o []Op) []Op {
			return insert(o, find(o, b1)+1, Op{Kind: Offload, Block: "b0", Micro: 1})
		}, "not a forward block"},
		{"never reloaded", func(o []Op) []Op {
			o = append([]Op(nil), o...)
			i := find(o, b1)
			o = append(o[:i], o[i+1:]...)
			return insert(o, find(o, f1)+1, off)
		}, ""},
		{"ok", func(o []Op) []Op { return insert(o, find(o, b1), off, rel) }, ""},
	} {
		progs := make([]*Program, len(base))
		for d, p := range base {
			c := *p
			progs[d] = &c
		}
		progs[0].Ops = tc.edit(base[0].Ops)
		err := Check(progs)
		switch {
		case tc.name == "ok" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.name != "ok" && err == nil:
			t.Errorf("%s: Check passed", tc.name)
		case err != nil && !strings.Contains(err.Error(), tc.want):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}
