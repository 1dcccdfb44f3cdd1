package runtimegen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// GenerateModes gives the programs of both modes, non-blocking first, or
// the blocking ones alone.
func TestGenerateModes(t *testing.T) {
	s := greedy(t, builtin(t, "v-shape", 4, false), 4)
	for _, c := range []struct {
		blockingOnly bool
		want         []Mode
	}{{false, []Mode{NonBlocking, Blocking}}, {true, []Mode{Blocking}}} {
		sets, err := GenerateModes(s, c.blockingOnly)
		if err != nil {
			t.Fatal(err)
		}
		if len(sets) != len(c.want) {
			t.Fatalf("blockingOnly %v: %d sets, want %d", c.blockingOnly, len(sets), len(c.want))
		}
		for i, progs := range sets {
			if progs[0].Mode != c.want[i] {
				t.Errorf("blockingOnly %v: set %d in mode %v, want %v", c.blockingOnly, i, progs[0].Mode, c.want[i])
			}
		}
	}
}

// ScheduleSimOptions times a schedule's offloads by its own placement
// (placement's "Memory as a decision") and runs a placement with channels
// with them.
func TestScheduleSimOptions(t *testing.T) {
	plain := greedy(t, builtin(t, "v-shape", 4, false), 4)
	if o := ScheduleSimOptions(plain, nil, false, 2); o.Offloads != nil || o.QueuedLinks || o.CommTime != 2 || o.Placement != nil {
		t.Errorf("plain schedule: %+v", o)
	}
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	off, err := baseline.PipeOffload(spec.New(p.WithOffload(2), 8))
	if err != nil {
		t.Fatal(err)
	}
	if o := ScheduleSimOptions(off, nil, false, 1); o.Offloads != off.Placement {
		t.Errorf("offloading schedule: Offloads %v, want its placement", o.Offloads)
	}
	ch := plain.Placement.Clone()
	ch.QueuedLinks = true
	if o := ScheduleSimOptions(plain, ch, false, 1); !o.QueuedLinks || o.Placement != ch {
		t.Errorf("placement with channels: %+v", o)
	}
}

// WroteText names the first and last program, the mode and the
// transfers, and the launch commands in the folder.
func TestWroteText(t *testing.T) {
	s := greedy(t, builtin(t, "v-shape", 4, false), 4)
	progs := generate(t, s, NonBlocking)
	got := WroteText("out", progs, NonBlocking)
	want := "wrote out: rank0.json … rank3.json (" + NonBlocking.Name() + ", "
	if !strings.HasPrefix(got, want) || !strings.Contains(got, "run:   sh out/launch.sh --out results --iterations 3\n") ||
		!strings.HasSuffix(got, "check: sh out/launch.sh check --out results\n") {
		t.Errorf("WroteText = %q, want %q…", got, want)
	}
	if n := Transfers(progs); !strings.Contains(got, fmt.Sprintf("%d transfers", n)) {
		t.Errorf("WroteText = %q, want %d transfers", got, n)
	}
}
