package partition

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/placement"
)

// A GPT-like profile with a heavy embedding, named as Megatron-Core's
// kinds: the layout string of its split parses back to the split's
// stages, one symbol per layer, in loop order for the chunked split.
func TestMegatronLayoutParsesBack(t *testing.T) {
	for _, tc := range []struct {
		chunks              int
		layout              string
		layers, first, last int    // the simpler form's, where it has one
		why                 string // why it has none
	}{
		{1, "Et|t*5|t*5|t*3L", 14, 1, 3, ""},
		{2, "E|t|t|t|t|t*4|t*4|t*2L", 0, 0, 0, "2 virtual stages per rank"},
	} {
		g, err := Load("../testdata/models/megatron-gpt.json")
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(context.Background(), g, Options{Chunks: tc.chunks, Order: placement.Loop})
		if err != nil {
			t.Fatal(err)
		}
		ml, err := rep.Megatron()
		if err != nil {
			t.Fatal(err)
		}
		if ml.Layout != tc.layout {
			t.Errorf("chunks %d: layout %q, want %q", tc.chunks, ml.Layout, tc.layout)
		}
		stages, err := ParseMegatronLayout(ml.Layout)
		if err != nil {
			t.Fatal(err)
		}
		if len(stages) != len(rep.Stages) {
			t.Fatalf("chunks %d: %d stages parsed, the split has %d", tc.chunks, len(stages), len(rep.Stages))
		}
		for i, st := range rep.Stages {
			var want []byte
			for _, n := range st.Nodes {
				c, _ := MegatronSymbol(n)
				want = append(want, c)
			}
			if stages[i] != string(want) {
				t.Errorf("chunks %d, stage %d: parsed %q, the split's layers %v", tc.chunks, i, stages[i], st.Nodes)
			}
			if st.Device != i%4 {
				t.Errorf("stage %d on device %d: Megatron's loop order puts it on %d", i, st.Device, i%4)
			}
		}
		if ml.Simple != (tc.why == "") || ml.Why != tc.why || (ml.Simple && (ml.Layers != tc.layers || ml.First != tc.first || ml.Last != tc.last)) {
			t.Errorf("chunks %d: simple %v (%d layers, first %d, last %d), why %q; want %d, %d, %d, why %q",
				tc.chunks, ml.Simple, ml.Layers, ml.First, ml.Last, ml.Why, tc.layers, tc.first, tc.last, tc.why)
		}
	}
}

func TestMegatronRefuses(t *testing.T) {
	for _, tc := range []struct {
		label   string
		names   [][]string
		devices []int
		ranks   int
		err     string
	}{
		{"unknown name", [][]string{{"embedding", "head"}}, []int{0}, 1, `layer "head": not named as a Megatron-Core kind`},
		{"V order", [][]string{{"E"}, {"t"}, {"t"}, {"L"}}, []int{0, 1, 1, 0}, 2, "stage 2 is on device 1: Megatron-Core runs layout stage i on rank i mod 2"},
		{"uneven", [][]string{{"E"}, {"t"}, {"L"}}, []int{0, 1, 0}, 2, "3 stages on 2 ranks"},
		{"embedding late", [][]string{{"t"}, {"embedding", "L"}}, []int{0, 1}, 2, `layer "embedding": Megatron-Core keeps the embedding first`},
		{"loss early", [][]string{{"E", "loss"}, {"t"}}, []int{0, 1}, 2, `layer "loss": Megatron-Core keeps the embedding first (E) and the loss last`},
	} {
		_, err := Megatron(tc.names, tc.devices, tc.ranks)
		if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.label, err, tc.err)
		}
	}
	ml, err := Megatron([][]string{{"E", "t"}, {"t", "t"}, {"t"}, {"t", "L"}}, []int{0, 1, 2, 3}, 4)
	if err != nil || ml.Simple || !strings.Contains(ml.Why, "the middle stages hold 2, 1 transformer layers") {
		t.Errorf("uneven middle: %+v, %v", ml, err)
	}
}

func TestMegatronSymbol(t *testing.T) {
	for name, want := range map[string]byte{"embedding": 'E', "Embed": 'E', "E": 'E', "decoder.3": 't', "layers.12": 't', "layer_0": 't',
		"block7": 't', "t": 't', "transformer": 't', "mtp": 'm', "mtp.0": 'm', "loss": 'L', "L": 'L',
		"head": 0, "decoderx": 0, "e": 0, "blockA": 0, "": 0} {
		got, ok := MegatronSymbol(name)
		if got != want || ok != (want != 0) {
			t.Errorf("%q: %q %v, want %q", name, got, ok, want)
		}
	}
}

func TestParseMegatronLayout(t *testing.T) {
	for in, want := range map[string]string{
		"Et*3|(tt|)*29,m|L": "Ettt|" + strings.Repeat("tt|", 29) + "m|L",
		"E||t|L":            "E||t|L",
		"((t|)*2L)*2":       "t|t|Lt|t|L",
	} {
		got, err := ParseMegatronLayout(in)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]string{"Ex": `symbol 'x'`, "(t": `"(" without ")"`, "t)": `unmatched ")"`, "t*": `"*" without a count`,
		"(t*9999999)*9999999": "more than"} {
		if _, err := ParseMegatronLayout(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

// FuzzParseMegatronLayout: no layout panics or grows past maxLayout; what
// parses is made of stages of E, t, m, L only.
func FuzzParseMegatronLayout(f *testing.F) {
	for _, s := range []string{"Et*3|(tt|)*29,m|L", "E||t|L", "E|t*5|t*5|t*3L", "((t|)*2L)*2", "(t", "t*", "Ex"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		stages, err := ParseMegatronLayout(s)
		if err != nil {
			return
		}
		for _, st := range stages {
			if strings.Trim(st, "EtmL") != "" {
				t.Fatalf("%q: stage %q", s, st)
			}
		}
	})
}

func TestReadStages(t *testing.T) {
	names, devices, err := ReadStages([]byte(`{"contiguous": true, "stages": [{"stage": 0, "device": 0, "nodes": ["a", "b"]}, {"stage": 1, "device": 1, "nodes": ["c"]}]}`))
	if err != nil || len(names) != 2 || names[0][1] != "b" || devices[1] != 1 {
		t.Fatalf("%v %v %v", names, devices, err)
	}
	for in, want := range map[string]string{
		`[]`: "not the JSON of tessel partition --json",
		`{}`: `no "stages"`,
		`{"contiguous": false, "stages": [{"stage": 0, "device": 0, "nodes": ["a"]}]}`: "non-contiguous",
		`{"stages": [{"stage": 1, "device": 0, "nodes": ["a"]}]}`:                      `stages[0]: want "stage": 0`,
		`{"stages": [{"stage": 0, "nodes": ["a"]}]}`:                                   "stages[0]: no device",
		`{"stages": [{"stage": 0, "device": 0, "nodes": []}]}`:                         "stages[0]: no layers",
		`{"stages": [{"stage": 0, "device": 2, "cpu": true, "nodes": ["a"]}]}`:         "CPU core",
	} {
		if _, _, err := ReadStages([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}

// FuzzReadStages: no input panics; what reads has a device and layers per
// stage.
func FuzzReadStages(f *testing.F) {
	f.Add([]byte(`{"contiguous": true, "stages": [{"stage": 0, "device": 0, "nodes": ["a", "b"]}, {"stage": 1, "device": 1, "nodes": ["c"]}]}`))
	f.Add([]byte(`{"stages": [{"stage": 0, "nodes": ["a"]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		names, devices, err := ReadStages(data)
		if err != nil {
			return
		}
		if len(names) != len(devices) || len(names) == 0 {
			t.Fatalf("%d stages, %d devices", len(names), len(devices))
		}
	})
}

// Seven layers on four ranks of two virtual stages: eight stages, so one
// must be empty. Without EmptyStages that is refused, saying so; with it
// the split puts the empty stage where the devices' loads are least, its
// placement is a chain through the empty stage's blocks (time 1, no
// memory), and its Megatron-Core layout has the empty stage.
func TestEmptyStages(t *testing.T) {
	g, err := Parse([]byte(`{"name": "seven", "devices": 4, "memory": 0, "layers": [
		{"name": "embedding", "forward": 1, "backward": 2, "activations": 1},
		{"name": "decoder.0", "forward": 3, "backward": 6, "activations": 1},
		{"name": "decoder.1", "forward": 3, "backward": 6, "activations": 1},
		{"name": "decoder.2", "forward": 3, "backward": 6, "activations": 1},
		{"name": "decoder.3", "forward": 3, "backward": 6, "activations": 1},
		{"name": "decoder.4", "forward": 3, "backward": 6, "activations": 1},
		{"name": "loss", "forward": 1, "backward": 2, "activations": 1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), g, Options{Chunks: 2, Order: placement.Loop, IPTimeLimit: time.Second})
	if err == nil || !strings.Contains(err.Error(), "7 layers cannot make 8 stages (2 chunks on 4 devices): every stage holds a layer unless --empty-stages") {
		t.Fatalf("got %v", err)
	}
	rep, err := Run(context.Background(), g, Options{Chunks: 2, Order: placement.Loop, EmptyStages: true, IPTimeLimit: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Stages) != 8 {
		t.Fatalf("%d stages", len(rep.Stages))
	}
	empty := -1
	for i, st := range rep.Stages {
		if st.Device != i%4 {
			t.Errorf("stage %d on device %d", i, st.Device)
		}
		if len(st.Nodes) == 0 {
			if empty >= 0 {
				t.Errorf("stages %d and %d are empty", empty, i)
			}
			empty = i
		}
	}
	if empty <= 0 || empty == 7 {
		t.Fatalf("empty stage %d", empty)
	}
	p := rep.Converted.Placement
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	blocks := rep.Converted.StageBlocks[empty]
	if len(blocks) != 2 {
		t.Fatalf("empty stage: blocks %v", blocks)
	}
	for _, b := range blocks {
		if p.Blocks[b].Time != 1 || p.Blocks[b].Memory != 0 || p.Blocks[b].Devices[0] != empty%4 {
			t.Errorf("empty stage's block %+v", p.Blocks[b])
		}
	}
	// The forward chain passes through it.
	f := rep.Converted.StageBlocks[empty][0]
	in, out := 0, 0
	for _, d := range p.Deps {
		if d.To == f {
			in++
		}
		if d.From == f {
			out++
		}
	}
	if in != 1 || out != 1 {
		t.Errorf("empty forward: %d in, %d out", in, out)
	}
	ml, err := rep.Megatron()
	if err != nil {
		t.Fatal(err)
	}
	stages, err := ParseMegatronLayout(ml.Layout)
	if err != nil || len(stages) != 8 || stages[empty] != "" {
		t.Errorf("layout %q: %q, %v", ml.Layout, stages, err)
	}
}
