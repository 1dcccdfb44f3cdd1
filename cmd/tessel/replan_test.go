package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tessel replan after the cluster changed — one link's latency tenfold,
// or one device at half speed — returns a verified schedule on the new
// cluster, no worse than the old orders there, beside a fresh search's.
func TestReplan(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.json")
	if code, _, errOut := runCLI(t, "search", "--placement", "v-shape", "--memory", "4", "-n", "8", "--transfer-time", "1", "--out", old); code != 0 {
		t.Fatalf("search: exit %d: %s", code, errOut)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string // in the new schedule file
	}{
		{"link", []string{"--cluster", filepath.Join("..", "..", "testdata", "clusters", "four-slow-link.json")}, `{"from": 1, "to": 2, "latency": 10, "per_unit": 0}`},
		{"speed", []string{"--device-speed", "2=0.5", "--transfer-time", "1"}, `"speed": 0.5`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, tc.name+".json")
			args := append([]string{"replan", "--schedule", old, "--json", "--out", out}, tc.args...)
			code, stdout, errOut := runCLI(t, args...)
			if code != 0 {
				t.Fatalf("replan: exit %d: %s", code, errOut)
			}
			var rep replanReport
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if !rep.Valid || rep.OldOrders == nil || rep.Makespan > *rep.OldOrders || rep.Makespan < rep.LowerBound || rep.Fresh == nil {
				t.Errorf("report %+v", rep)
			}
			if *rep.OldOrders <= rep.Old {
				t.Errorf("the old orders take %d on the slower cluster, %d on the old one: the change shows nothing", *rep.OldOrders, rep.Old)
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
	if code, _, errOut := runCLI(t, "replan", "--schedule", old); code != 2 || !strings.Contains(errOut, "give the new cluster") {
		t.Errorf("replan without a cluster: exit %d %q", code, errOut)
	}
}
