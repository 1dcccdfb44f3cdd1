package planmodel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/planmodel"
)

const gptLike = "../testdata/models/gpt-like.json"

// Partition splits the GPT-like profile as tessel partition does (the
// DP's 12 per sample beside the even split's 16.2) and writes the
// placement of the split, which loads as a placement file.
func TestPartition(t *testing.T) {
	out := filepath.Join(t.TempDir(), "p.json")
	var stdout bytes.Buffer
	o := planmodel.PartitionOptions{Model: gptLike, CPUs: -1, Order: "loop", Chunks: 1, IPTimeLimit: time.Minute, Out: out, JSON: true}
	if err := planmodel.Partition(context.Background(), o, &stdout); err != nil {
		t.Fatal(err)
	}
	var rep struct {
		MaxLoad float64 `json:"max_load"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v:\n%s", err, stdout.Bytes())
	}
	if rep.MaxLoad != 12 {
		t.Errorf("max load %v, want the DP's 12", rep.MaxLoad)
	}
	p, err := placement.Load(out)
	if err != nil {
		t.Fatalf("the placement written does not load: %v", err)
	}
	if p.Devices < 2 {
		t.Errorf("the split's placement has %d devices", p.Devices)
	}
	if err := planmodel.Partition(context.Background(), o, &stdout); err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), "exists (use --force") {
		t.Errorf("a second partition over the placement = %v, want bad input", err)
	}
}

// Every refusal is bad input, in the words the command prints, and comes
// before any file is written.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	base := planmodel.PartitionOptions{Model: gptLike, CPUs: -1, Order: "loop", Chunks: 1}
	with := func(f func(*planmodel.PartitionOptions)) planmodel.PartitionOptions { o := base; f(&o); return o }
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"format", func() error {
			return planmodel.Partition(ctx, with(func(o *planmodel.PartitionOptions) { o.Format = "xml" }), nil)
		}, `--format must be text or megatron-layout, got "xml"`},
		{"cluster-out alone", func() error {
			return planmodel.Partition(ctx, with(func(o *planmodel.PartitionOptions) { o.ClusterOut = filepath.Join(dir, "c.json") }), nil)
		}, "--cluster-out needs --cluster"},
		{"plan micro-batches", func() error {
			return planmodel.Plan(ctx, planmodel.PlanOptions{Partition: base, Top: 10, Sizes: "1"}, nil)
		}, "--micro-batches must be at least 1, got 0"},
		{"plan parallel", func() error {
			return planmodel.Plan(ctx, planmodel.PlanOptions{Partition: base, MicroBatches: 8, Parallel: "manual", Top: 10, Sizes: "1", Outputs: outfile.Schedule{}}, nil)
		}, `--parallel must be auto, got "manual"`},
	} {
		err := c.run()
		if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want bad input containing %q", c.name, err, c.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refusals wrote %d files", len(entries))
	}
}
