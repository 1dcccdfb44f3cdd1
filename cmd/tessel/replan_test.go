package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/report"
)

// tessel replan after the cluster changed — one link's latency tenfold,
// or one device at half speed (a cluster of slower, smaller devices) —
// returns a verified schedule on the new cluster, no worse than the old
// orders there and within 2% of a fresh search's makespan.
// The old repetend, its offsets adapted to the new cluster, is re-timed
// only where it may start the solver below the modulo schedules' period:
// not on m-shape (the modulo schedule's period 8 is as short as the
// adapted offsets' bound) nor where a slow device sets the period; on
// x-shape with the link twice as slow it is where the solver starts, and
// the new schedule keeps its offsets (there a fresh search takes seconds:
// left out); with the link ten times slower it starts the solver lower.
func TestReplan(t *testing.T) {
	dir := t.TempDir()
	clusters := filepath.Join("..", "..", "testdata", "clusters")
	olds := map[string][]string{
		"v-shape": {"--placement", "v-shape", "--memory", "4", "-n", "8"},
		"m-shape": {"--placement", "m-shape", "--memory", "6", "-n", "32"},
		"x-shape": {"--placement", "x-shape", "--memory", "4", "-n", "16"},
	}
	for name, args := range olds {
		args = append(args, "--transfer-time", "1", "--out", filepath.Join(dir, name+".json"))
		if code, _, errOut := runCLI(t, append([]string{"search"}, args...)...); code != 0 {
			t.Fatalf("search %s: exit %d: %s", name, code, errOut)
		}
	}
	for _, tc := range []struct {
		name, old string
		args      []string
		want      string // in the new schedule file
		repetend  bool   // the old repetend is re-timed
		kept      bool   // the new schedule keeps its offsets; no fresh search
	}{
		{"v-shape link", "v-shape", []string{"--cluster", filepath.Join(clusters, "four-slow-link.json")}, `{"from": 1, "to": 2, "latency": 10, "per_unit": 0}`, false, false},
		{"v-shape speed", "v-shape", []string{"--device-speed", "2=0.5", "--transfer-time", "1"}, `"speed": 0.5`, false, false},
		{"m-shape link", "m-shape", []string{"--cluster", filepath.Join(clusters, "four-slow-link.json")}, `{"from": 1, "to": 2, "latency": 10, "per_unit": 0}`, false, false},
		{"m-shape speed", "m-shape", []string{"--cluster", filepath.Join(clusters, "hetero-4.json")}, `"speed": 0.5`, false, false},
		{"x-shape link", "x-shape", []string{"--cluster", filepath.Join(clusters, "four-slow-link-2.json"), "--no-fresh"}, `{"from": 1, "to": 2, "latency": 2, "per_unit": 0}`, true, true},
		// The link ten times slower: the old offsets, adapted to it
		// (repetend.Adapt), start the solver below the modulo schedule.
		{"x-shape link x10", "x-shape", []string{"--cluster", filepath.Join(clusters, "four-slow-link.json")}, `{"from": 1, "to": 2, "latency": 10, "per_unit": 0}`, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			args := append([]string{"replan", "--schedule", filepath.Join(dir, tc.old+".json"), "--json", "--out", out}, tc.args...)
			code, stdout, errOut := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("replan: exit %d: %s", code, errOut)
			}
			var rep report.ReplanReport
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if !rep.Valid || rep.OldOrders == nil || rep.Makespan > *rep.OldOrders || rep.Makespan < rep.LowerBound || (rep.Fresh == nil) != tc.kept {
				t.Fatalf("report %+v", rep)
			}
			if rep.Fresh != nil && rep.Makespan*100 > *rep.Fresh*102 {
				t.Errorf("replanned makespan %d, more than 2%% over the fresh search's %d", rep.Makespan, *rep.Fresh)
			}
			if *rep.OldOrders <= rep.Old {
				t.Errorf("the old orders take %d on the slower cluster, %d on the old one: the change shows nothing", *rep.OldOrders, rep.Old)
			}
			if (rep.OldRepetend != nil) != tc.repetend {
				t.Errorf("the old repetend re-timed: %v, want %v", rep.OldRepetend, tc.repetend)
			}
			if rep.OldRepetendKept != tc.kept || (tc.kept && (rep.Source != "repetend" || rep.OldRepetend == nil || rep.Makespan > *rep.OldRepetend)) {
				t.Errorf("the old repetend kept: %v, want %v (built by %s)", rep.OldRepetendKept, tc.kept, rep.Source)
			}
			data, err := os.ReadFile(out)
			if err != nil || !strings.Contains(string(data), tc.want) {
				t.Fatalf("the new schedule file does not record the new cluster (%v)", err)
			}
			if code, vout, errOut := runCLI(t, "verify", "--schedule", out); code != 0 || !strings.Contains(vout, "makespan "+itoa(rep.Makespan)) {
				t.Errorf("verify: exit %d %q %s", code, vout, errOut)
			}
		})
	}
	if code, _, errOut := runCLI(t, "replan", "--schedule", filepath.Join(dir, "v-shape.json")); code != 2 || !strings.Contains(errOut, "give the new cluster") {
		t.Errorf("replan without a cluster: exit %d %q", code, errOut)
	}
}
