package report

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
)

// The memory table of tessel plan: each device's figures in GB or MB.
func TestMemoryTable(t *testing.T) {
	mem := []partition.DeviceMemory{
		{Device: 0, Capacity: 80e9, Static: 56e9, Free: 24e9, Activation: 1.5e9, Unit: 1.5e9, Budget: 16},
		{Device: 1, Capacity: 80e9, Static: 60.1234567e9, Free: 19.87654321e9, Activation: 0.25e9, Unit: 1.5e9, Budget: 13},
	}
	var b bytes.Buffer
	memoryTable(&b, mem, true)
	wantText := "\n" +
		"device    capacity  held for good           left  one micro-batch         unit budget (units)\n" +
		"0         80.00 GB       56.00 GB       24.00 GB          1.50 GB      1.50 GB 16\n" +
		"1         80.00 GB       60.12 GB       19.88 GB         250.0 MB      1.50 GB 13\n\n"
	if b.String() != wantText {
		t.Errorf("text\n%q\nwant\n%q", b.String(), wantText)
	}
}

// tessel partition --format megatron-layout: the layout's arguments, then
// the simpler form where the split has it, or why not.
func TestMegatronArgs(t *testing.T) {
	for _, tc := range []struct {
		chunks int
		last   string
	}{
		{1, "--num-layers 14 --decoder-first-pipeline-num-layers 1 --decoder-last-pipeline-num-layers 3\n"},
		{2, "no --decoder-first/last-pipeline-num-layers form: 2 virtual stages per rank\n"},
	} {
		g, err := partition.Load("../testdata/models/megatron-gpt.json")
		if err != nil {
			t.Fatal(err)
		}
		rep, err := partition.Run(context.Background(), g, partition.Options{Chunks: tc.chunks, Order: placement.Loop})
		if err != nil {
			t.Fatal(err)
		}
		ml, err := rep.Megatron()
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		MegatronArgs(&b, ml)
		want := fmt.Sprintf("--pipeline-model-parallel-size 4 --pipeline-model-parallel-layout \"%s\"\n", ml.Layout)
		if lines := strings.SplitAfter(b.String(), "\n"); len(lines) != 3 || lines[0] != want || lines[1] != tc.last {
			t.Errorf("chunks %d: printed %q, want %q then %q", tc.chunks, b.String(), want, tc.last)
		}
	}
}
