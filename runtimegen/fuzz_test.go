package runtimegen

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
)

// FuzzSimulate reads a set of programs (a JSON array of program files, as
// tessel gen writes them, possibly edited) and runs the checker and the
// simulator on it, as tessel simulate --programs does: never a panic,
// every error one line, and a run that ends has a makespan no shorter
// than any device's busy time. The seeds are the programs of built-in
// placements' schedules, blocking and not.
func FuzzSimulate(f *testing.F) {
	for _, c := range []struct {
		name string
		opt  placement.Options
		n    int
	}{{"v-shape", placement.Options{Devices: 2}, 3}, {"v-shape", placement.Options{Devices: 3, SplitBackward: true}, 2}, {"x-shape", placement.Options{Devices: 2}, 2}} {
		p := placementtest.Builtin(f, c.name, c.opt)
		s := greedy(f, p, c.n)
		for _, mode := range Modes() {
			progs, err := Generate(s, mode)
			if err != nil {
				f.Fatal(err)
			}
			var files []json.RawMessage
			for _, pr := range progs {
				data, err := pr.Marshal()
				if err != nil {
					f.Fatal(err)
				}
				files = append(files, data)
			}
			data, _ := json.Marshal(files)
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var files []json.RawMessage
		if json.Unmarshal(data, &files) != nil || len(files) == 0 || len(files) > 8 {
			return
		}
		var progs []*Program
		for _, raw := range files {
			p, err := ParseProgram(raw)
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error spans lines: %q", err)
				}
				return
			}
			if len(p.Ops) > 2000 {
				return // keep each input fast
			}
			progs = append(progs, p)
		}
		for _, comm := range []int{0, 1} {
			r, err := Simulate(progs, comm)
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("error spans lines: %q", err)
				}
				continue
			}
			for d, busy := range r.Busy {
				if busy > r.Makespan || busy < 0 {
					t.Fatalf("device %d busy %d in a run of makespan %d", d, busy, r.Makespan)
				}
			}
		}
	})
}
