package runtimegen

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/profile"
)

// Decoder is the model the workers run instead of the example MLP: the
// built-in decoder of a profile's config (package profile), its layers
// cut into the forward blocks.
type Decoder struct {
	Config profile.Config
	// Blocks gives every forward block the names of its layers, in
	// pipeline order (Config.LayerNames, each in one block).
	Blocks map[string][]string
}

// ForwardChain returns p's forward blocks in pipeline order: the chain
// their dependencies form (each forward block feeding at most one other,
// and fed by at most one). A placement whose forward blocks branch or
// join, or lie on device groups, is an error.
func ForwardChain(p *placement.Placement) ([]int, error) {
	isFwd := func(i int) bool { return !kindInfo(p.Blocks[i].Kind).Gradient }
	next, prev := map[int]int{}, map[int]int{}
	for _, d := range p.Deps {
		if !isFwd(d.From) || !isFwd(d.To) {
			continue
		}
		if j, ok := next[d.From]; ok && j != d.To {
			return nil, fmt.Errorf("forward block %q feeds %q and %q: the decoder's layers go down one chain", p.Blocks[d.From].ID, p.Blocks[j].ID, p.Blocks[d.To].ID)
		}
		if j, ok := prev[d.To]; ok && j != d.From {
			return nil, fmt.Errorf("forward block %q is fed by %q and %q: the decoder's layers go down one chain", p.Blocks[d.To].ID, p.Blocks[j].ID, p.Blocks[d.From].ID)
		}
		next[d.From], prev[d.To] = d.To, d.From
	}
	var chain []int
	for i, b := range p.Blocks {
		if !isFwd(i) {
			continue
		}
		if len(b.Devices) != 1 {
			return nil, fmt.Errorf("forward block %q runs on devices %v: the decoder's blocks run on one device each", b.ID, b.Devices)
		}
		if _, fed := prev[i]; !fed {
			if chain != nil {
				return nil, fmt.Errorf("forward blocks %q and %q both start a chain: the decoder's layers go down one chain", p.Blocks[chain[0]].ID, b.ID)
			}
			chain = []int{i}
		}
	}
	if chain == nil {
		return nil, fmt.Errorf("no forward block starts the chain")
	}
	for j, ok := next[chain[0]]; ok; j, ok = next[j] {
		chain = append(chain, j)
	}
	n := 0
	for i := range p.Blocks {
		if isFwd(i) {
			n++
		}
	}
	if len(chain) != n {
		return nil, fmt.Errorf("the forward blocks form no single chain (%d of %d on it)", len(chain), n)
	}
	return chain, nil
}

// NewDecoder cuts the config's layers into p's forward blocks: the
// stages of split (per stage in pipeline order, its layer names, as
// partition.ReadStages reads them; devices, where given, the stages'
// devices) or, with split nil, evenly in pipeline order (the first
// blocks one layer more where they do not divide).
func NewDecoder(p *placement.Placement, cfg profile.Config, split [][]string, devices []int) (*Decoder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	chain, err := ForwardChain(p)
	if err != nil {
		return nil, err
	}
	names := cfg.LayerNames()
	if len(chain) > len(names) {
		return nil, fmt.Errorf("%d forward blocks for a decoder of %d layers (embedding and head included)", len(chain), len(names))
	}
	d := &Decoder{Config: cfg, Blocks: map[string][]string{}}
	if split == nil {
		at := 0
		for k, i := range chain {
			n := len(names) / len(chain)
			if k < len(names)%len(chain) {
				n++
			}
			d.Blocks[p.Blocks[i].ID] = slices.Clone(names[at : at+n])
			at += n
		}
		return d, nil
	}
	if len(split) != len(chain) {
		return nil, fmt.Errorf("a split of %d stages for a placement of %d forward blocks", len(split), len(chain))
	}
	var all []string
	for k, i := range chain {
		b := p.Blocks[i]
		if devices != nil && devices[k] != b.Devices[0] {
			return nil, fmt.Errorf("stage %d of the split is on device %d, forward block %q on %d: not this placement's split", k, devices[k], b.ID, b.Devices[0])
		}
		if len(split[k]) == 0 {
			return nil, fmt.Errorf("stage %d of the split has no layers: every forward block of the decoder runs one at least", k)
		}
		d.Blocks[b.ID] = slices.Clone(split[k])
		all = append(all, split[k]...)
	}
	if !slices.Equal(all, names) {
		return nil, fmt.Errorf("the split's layers %v are not the decoder's %v, in order", all, names)
	}
	return d, nil
}

// stagesJSON is stages.json: the config and every forward block's layers.
func (d *Decoder) stagesJSON() ([]byte, error) {
	b, err := json.MarshalIndent(struct {
		Config profile.Config      `json:"config"`
		Blocks map[string][]string `json:"blocks"`
	}{d.Config, d.Blocks}, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// ReadStages reads the stages.json that DecoderFiles writes: every
// forward block's layers.
func ReadStages(data []byte) (*Decoder, error) {
	var s struct {
		Config json.RawMessage     `json:"config"`
		Blocks map[string][]string `json:"blocks"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("stages.json: %w", err)
	}
	cfg, err := profile.ParseConfig(s.Config)
	if err != nil {
		return nil, fmt.Errorf("stages.json: %w", err)
	}
	if len(s.Blocks) == 0 {
		return nil, fmt.Errorf("stages.json: no blocks")
	}
	return &Decoder{Config: cfg, Blocks: s.Blocks}, nil
}

// StagesFile is the name of the file that gives the decoder's layers to
// the forward blocks, beside the programs.
const StagesFile = "stages.json"

// DecoderFiles is Files with the decoder as the model: blocks.py builds
// each forward block from the layers d gives it, decoder.py defines them
// (profile.DecoderSource) and stages.json holds the config and the cut.
func DecoderFiles(progs []*Program, backend string, d *Decoder) (map[string][]byte, error) {
	files, err := Files(progs, backend)
	if err != nil {
		return nil, err
	}
	for _, b := range progs[0].Blocks {
		if b.Kind == placement.Forward {
			if _, ok := d.Blocks[b.ID]; !ok {
				return nil, fmt.Errorf("the decoder gives no layers to forward block %q", b.ID)
			}
		}
	}
	blocks, err := templates.ReadFile("templates/decoder_blocks.py")
	if err != nil {
		return nil, fmt.Errorf("template decoder_blocks.py: %w", err)
	}
	stages, err := d.stagesJSON()
	if err != nil {
		return nil, err
	}
	files["blocks.py"], files["decoder.py"], files[StagesFile] = blocks, profile.DecoderSource(), stages
	return files, nil
}

// Text is what tessel gen --model prints after WroteText: the decoder's
// layers per forward block (in pipeline order) and the commands that
// trace a run and measure it against the model file.
func (d *Decoder) Text(dir, model string, p *placement.Placement) string {
	var b strings.Builder
	fmt.Fprintf(&b, "model: the decoder of %s (%s), decoder.py and %s:", model, d.Config.DType, StagesFile)
	chain, err := ForwardChain(p)
	if err != nil {
		return b.String() + "\n"
	}
	for k, i := range chain {
		names := d.Blocks[p.Blocks[i].ID]
		if k > 0 {
			b.WriteString(" |")
		}
		fmt.Fprintf(&b, " %s %s", p.Blocks[i].ID, names[0])
		if len(names) > 1 {
			fmt.Fprintf(&b, " … %s (%d)", names[len(names)-1], len(names))
		}
	}
	fmt.Fprintf(&b, "\nmeasure: sh %s --out results --warmup 1 --iterations 5 --trace, then\n"+
		"         tessel measure --programs %s --trace %s --model %s\n",
		filepath.Join(dir, "launch.sh"), dir, filepath.Join(dir, "results"), model)
	return b.String()
}
