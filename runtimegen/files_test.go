package runtimegen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tessel-pp/tessel/schedule"
)

// Programs written with WriteFiles read back with LoadPrograms; a
// schedule's two program sets simulate, with free links, at its makespan
// (non-blocking) and no faster (blocking), and SimulateAll reports the
// gain; with channels, SimulateContention says how much later it ends.
// (The Tessel paper's §IV-D and Fig. 17.)
func TestFilesAndSimulateAll(t *testing.T) {
	s, err := schedule.Load("../schedule/testdata/schedules/v-shape-1f1b.json")
	if err != nil {
		t.Fatal(err)
	}
	var sets [][]*Program
	for _, mode := range Modes() {
		progs, err := Generate(s, mode)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, progs)
	}
	files, err := Files(sets[0], "gloo")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteFiles(dir, files); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "launch.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("launch.sh: %v %v, want mode 0755", fi, err)
	}
	back, err := LoadPrograms(dir)
	if err != nil || len(back) != len(sets[0]) || Transfers(back) != Transfers(sets[0]) {
		t.Fatalf("read back %d programs (%v), %d transfers; want %d, %d", len(back), err, Transfers(back), len(sets[0]), Transfers(sets[0]))
	}
	if _, err := LoadPrograms(t.TempDir()); err == nil {
		t.Error("an empty directory read as programs")
	}
	rep, err := SimulateAll(sets, SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Runs) != 2 || rep.Runs[0].Makespan != schedule.Makespan(s) || rep.Runs[1].Makespan < rep.Runs[0].Makespan || rep.Speedup == nil {
		t.Errorf("runs %+v, speedup %v; want the non-blocking run at makespan %d", rep.Runs, rep.Speedup, schedule.Makespan(s))
	}
	c, err := SimulateContention(sets[0], SimOptions{CommTime: 1})
	if err != nil || c.Late != c.Makespan-c.Free || c.Late < 0 {
		t.Errorf("contention %+v, %v", c, err)
	}
}
