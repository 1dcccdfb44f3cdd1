package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// A user's own model, from tessel plan to tessel compare on the placement
// plan writes: a Llama-7B-like profile (32 layers, forward 5 ms and
// backward 10 ms each, hidden 4096, sequence 4096, bf16;
// scripts/docs/llama-testdata.py) on 8 × 80 GB, 8 × 24 GB and a mixed
// cluster (4 fast + 4 slow GPUs, a slow link between the nodes), whole
// and split backward, and in V chunks. Every
// baseline that applies runs on that placement — its stages, devices,
// times, memories and links: no row names another placement, every row's
// schedule re-verifies from its file and runs on the placement compared,
// and the baselines each case is for are there.
func TestLlamaPlanThenCompare(t *testing.T) {
	const models, clusters = "../../testdata/models/", "../../testdata/clusters/"
	for _, tc := range []struct {
		name, model, cluster string
		plan                 []string // beyond --model and -n
		want                 []string // rows with a schedule
	}{
		{"8x80", "llama7b.json", "llama-8x80.json", nil,
			[]string{"GPipe", "1F1B", "1F1B+", "PipeOffload", "AdaOffload", "1F1B + recompute", "Tessel"}},
		{"8x80-split", "llama7b-split.json", "llama-8x80.json", nil,
			[]string{"1F1B", "ZB-H1", "ZB-H2", "PipeOffload", "1F1B + recompute", "Tessel"}},
		{"8x80-v", "llama7b-split.json", "llama-8x80.json", []string{"--devices", "8", "--chunks", "2", "--order", "v"},
			[]string{"1F1B interleaved", "ZB-V", "DualPipeV", "Tessel"}},
		{"8x24", "llama7b.json", "llama-8x24.json", nil,
			[]string{"1F1B", "PipeOffload", "1F1B + recompute", "Tessel"}},
		{"mixed-split", "llama7b-split.json", "llama-mixed.json", nil,
			[]string{"1F1B", "ZB-H1", "PipeOffload", "1F1B + recompute", "Tessel"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p, c := filepath.Join(dir, "p.json"), filepath.Join(dir, "c.json")
			// The searches' time is not what is tested here: a limit
			// keeps a loaded machine's run short.
			args := []string{"tessel", "plan", "--model", models + tc.model, "-n", "16", "--placement-out", p, "--time-limit", "5s"}
			if tc.plan == nil {
				// On the cluster: the cluster as the placement runs on
				// it, each device's budget its memory.
				args = append(args, "--cluster", clusters+tc.cluster, "--cluster-out", c)
			} else {
				// Chunks: the placement's device i is the cluster's.
				args = append(args, tc.plan...)
				c = clusters + tc.cluster
			}
			var stdout, stderr bytes.Buffer
			if rc := run(context.Background(), args, &stdout, &stderr); rc != 0 {
				t.Fatalf("plan: exit %d: %s", rc, stderr.String())
			}
			// plan answers against the baselines on the same stages, and
			// at 24 GB, where the budget binds, measures the levers.
			for _, want := range []string{"\nagainst the baselines", "\nwinner       "} {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("plan: no %q in\n%s", want, stdout.String())
				}
			}
			if tc.name == "8x24" && !strings.Contains(stdout.String(), "\nlevers       the budget binds; with --recompute: ") {
				t.Errorf("plan at 24 GB: no levers in\n%s", stdout.String())
			}
			dirS := filepath.Join(dir, "s")
			stdout.Reset()
			args = []string{"tessel", "compare", "--placement-file", p, "--cluster", c, "-n", "16", "--format", "json", "--schedules", dirS, "--time-limit", "5s"}
			if rc := run(context.Background(), args, &stdout, &stderr); rc != 0 {
				t.Fatalf("compare: exit %d: %s", rc, stderr.String())
			}
			var cmp compare.Comparison
			if err := json.Unmarshal(stdout.Bytes(), &cmp); err != nil {
				t.Fatal(err)
			}
			spec := placementSpec{File: p, Cluster: clusterSpec{File: c}, Choose: true}
			compared, _, _, err := spec.LoadOn()
			if err != nil {
				t.Fatal(err)
			}
			rows := map[string]compare.Row{}
			for _, r := range cmp.Rows {
				rows[r.Method] = r
				if r.Placement != compared.Name {
					t.Errorf("%s on %s, want %s", r.Method, r.Placement, compared.Name)
				}
				if r.Status != compare.StatusOK {
					continue
				}
				slug := strings.NewReplacer(" ", "-", "(", "", ")", "", "=", "").Replace(strings.ToLower(r.Method))
				s, err := schedule.Load(filepath.Join(dirS, slug+".json"))
				if err != nil {
					t.Errorf("%s: %v", r.Method, err)
					continue
				}
				if err := verify.Schedule(s); err != nil {
					t.Errorf("%s: %v", r.Method, err)
				}
				// A baseline over the budget is verified without one
				// (its row says so): the same placement but for the
				// devices' capacities.
				on, want := s.Placement, compared
				if !*r.BudgetRespected {
					on, want = on.Clone(), want.Clone()
					on.Capacities, want.Capacities = nil, nil
				}
				if !on.Equal(want) || schedule.Makespan(s) != *r.Makespan {
					t.Errorf("%s: the schedule file is not the row's on the placement compared", r.Method)
				}
			}
			for _, m := range tc.want {
				if r, ok := rows[m]; !ok || r.Status != compare.StatusOK {
					t.Errorf("%s: %+v, want a schedule on the model's placement", m, r)
				}
			}
			if _, err := os.Stat(filepath.Join(dirS, "tessel.json")); err != nil {
				t.Error(err)
			}
		})
	}
}
