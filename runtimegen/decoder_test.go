package runtimegen

import (
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/profile"
)

var decoderConfig = profile.Config{Layers: 3, Hidden: 8, Heads: 2, FFN: 16, Seq: 4, Batch: 1, Vocab: 8, DType: "float64", Optimizer: "sgd", LR: 0.01}

// The decoder's layers go down the chain of forward blocks: evenly (the
// first blocks one more), or as a split gives them, on the split's
// devices; a placement that branches, a split of other layers or other
// devices, and more blocks than layers are refused.
func TestNewDecoder(t *testing.T) {
	v2, err := placement.Builtin("v-shape", placement.Options{Devices: 2, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDecoder(v2, decoderConfig, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(d.Blocks["f0"], " ") + " | " + strings.Join(d.Blocks["f1"], " "); got != "embedding decoder.0 decoder.1 | decoder.2 head" {
		t.Errorf("even cut: %s", got)
	}
	split := [][]string{{"embedding"}, {"decoder.0", "decoder.1", "decoder.2", "head"}}
	d, err = NewDecoder(v2, decoderConfig, split, []int{0, 1})
	if err != nil || len(d.Blocks["f1"]) != 4 {
		t.Fatalf("split: %v, %v", d, err)
	}
	vchunks, err := placement.Builtin("v-shape", placement.Options{Devices: 2, Chunks: 2, Order: placement.V})
	if err != nil {
		t.Fatal(err)
	}
	chain, err := ForwardChain(vchunks)
	if err != nil {
		t.Fatal(err)
	}
	var devs []int
	for _, i := range chain {
		devs = append(devs, vchunks.Blocks[i].Devices[0])
	}
	if len(devs) != 4 || devs[0] != 0 || devs[1] != 1 || devs[2] != 1 || devs[3] != 0 {
		t.Errorf("V chain on devices %v, want [0 1 1 0]", devs)
	}
	x, err := placement.Builtin("x-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	m, err := placement.Builtin("m-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	v8, err := placement.Builtin("v-shape", placement.Options{Devices: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		p       *placement.Placement
		split   [][]string
		devices []int
		err     string
	}{
		{"x-shape", x, nil, nil, "one chain"},
		{"m-shape (device groups)", m, nil, nil, "on devices"},
		{"more blocks than layers", v8, nil, nil, "8 forward blocks for a decoder of 5 layers"},
		{"split of other layers", v2, [][]string{{"embedding"}, {"decoder.0", "head"}}, nil, "are not the decoder's"},
		{"split of three stages", v2, [][]string{{"embedding"}, {"decoder.0"}, {"decoder.1", "decoder.2", "head"}}, nil, "a split of 3 stages"},
		{"split on other devices", v2, split, []int{1, 0}, "stage 0 of the split is on device 1"},
		{"empty stage", v2, [][]string{{}, {"embedding", "decoder.0", "decoder.1", "decoder.2", "head"}}, nil, "stage 0 of the split has no layers"},
	} {
		_, err := NewDecoder(tc.p, decoderConfig, tc.split, tc.devices)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
}

// DecoderFiles writes the decoder's workers: blocks.py of the decoder,
// decoder.py and stages.json, which reads back.
func TestDecoderFiles(t *testing.T) {
	v2, err := placement.Builtin("v-shape", placement.Options{Devices: 2, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	progs := generate(t, greedy(t, v2, 2), NonBlocking)
	d, err := NewDecoder(v2, decoderConfig, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := DecoderFiles(progs, "gloo", d)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"blocks.py", "decoder.py", StagesFile, "worker.py", "launch.sh", "rank0.json", "rank1.json"} {
		if len(files[name]) == 0 {
			t.Errorf("no %s", name)
		}
	}
	if !strings.Contains(string(files["blocks.py"]), "import decoder") || !strings.Contains(string(files["decoder.py"]), "class DecoderLayer") {
		t.Error("blocks.py is not the decoder's")
	}
	back, err := ReadStages(files[StagesFile])
	if err != nil {
		t.Fatal(err)
	}
	if back.Config != decoderConfig || strings.Join(back.Blocks["f1"], " ") != "decoder.2 head" {
		t.Errorf("stages.json read back: %+v", back)
	}
	delete(d.Blocks, "f1")
	if _, err := DecoderFiles(progs, "gloo", d); err == nil || !strings.Contains(err.Error(), `"f1"`) {
		t.Errorf("a block without layers: %v", err)
	}
}
