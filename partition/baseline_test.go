package partition

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Reference: Tarnawski et al., "Efficient Algorithms for Device Placement
// of DNN Graph Operators", Table 1, column "Expert": the human-expert splits'
// time per sample (BERT-24 layer inference 20.08, training 49.40;
// ResNet-50 layer inference 43.92), evaluated with the same load model as
// the DP.
func TestPaperExpertSplits(t *testing.T) {
	for _, c := range []struct{ graph, expert, tps string }{
		{"layer/bert24_inference.json", "experts/bert24_inference_expert.json", "20.08"},
		{"layer/bert24_training.json", "experts/bert24_training_expert.json", "49.40"},
		{"layer/resnet50_inference.json", "experts/resnet50_inference_expert.json", "43.92"},
	} {
		g := loadPaper(t, c.graph)
		data, err := os.ReadFile(filepath.Join(paperData, c.expert))
		if err != nil {
			t.Fatal(err)
		}
		a, err := ParseAssignment(data)
		if err != nil {
			t.Fatalf("%s: %v", c.expert, err)
		}
		s, err := a.Split(g)
		if err != nil {
			t.Fatalf("%s: %v", c.expert, err)
		}
		if got := fmt.Sprintf("%.2f", s.MaxLoad); got != c.tps {
			t.Errorf("%s: expert time per sample %s, paper %s", c.expert, got, c.tps)
		}
	}
}

// The baselines are valid contiguous splits that keep colocations, and
// never beat the DP, which is optimal among contiguous splits.
func TestBaselinesNeverBeatDP(t *testing.T) {
	for _, f := range []string{"layer/bert24_inference.json", "layer/bert24_training.json", "layer/resnet50_training.json", "operator/bert_l-3_training.json"} {
		g := loadPaper(t, f)
		r, err := Contiguous(context.Background(), g, DPOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for name, fn := range map[string]func(*Graph) (*Split, error){"even": Even, "greedy": Greedy} {
			s, err := fn(g)
			if err != nil {
				t.Fatalf("%s %s: %v", f, name, err)
			}
			if !s.Contiguous || !s.Colocated {
				t.Errorf("%s %s: contiguous %v, colocated %v", f, name, s.Contiguous, s.Colocated)
			}
			if len(s.Stages) > g.Accelerators {
				t.Errorf("%s %s: %d stages", f, name, len(s.Stages))
			}
			if s.Fits() && s.MaxLoad < r.Split.MaxLoad-1e-9 {
				t.Errorf("%s %s: %.4f beats the DP's %.4f", f, name, s.MaxLoad, r.Split.MaxLoad)
			}
			t.Logf("%s %s: %.2f (DP %.2f)", f, name, s.MaxLoad, r.Split.MaxLoad)
		}
	}
}

// LoadAssignment reads an expert file and places it (the expert split of
// Tarnawski et al.'s Table 1, as TestPaperExpertSplits), and names the
// file in a bad one's error.
func TestLoadAssignment(t *testing.T) {
	g := loadPaper(t, "layer/bert24_inference.json")
	s, err := LoadAssignment(filepath.Join(paperData, "experts/bert24_inference_expert.json"), g)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%.2f", s.MaxLoad); got != "20.08" {
		t.Errorf("expert time per sample %s, paper 20.08", got)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"fpgas": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{bad, filepath.Join(t.TempDir(), "missing.json")} {
		if _, err := LoadAssignment(path, g); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming the file", path, err)
		}
	}
}
