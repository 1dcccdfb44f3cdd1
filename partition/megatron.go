package partition

import (
	"fmt"
	"strconv"
	"strings"
)

// Megatron-Core takes an uneven split of a GPT-like model as a layout
// string, --pipeline-model-parallel-layout: one symbol per layer, E the
// embedding, t a transformer (decoder) layer, m a multi-token-prediction
// layer, L the loss; "|" between stages; "X*N" and "(…)*N" repeat; commas
// are cosmetic. Stages are listed in order of virtual stage, then
// pipeline rank: layout stage i runs on pipeline rank i mod P, as its
// virtual stage i div P (the loop order).

// MegatronSymbol is the layout symbol of a layer named name: E for
// "embedding" (or "embed", "embeddings", "E"), t for "transformer",
// "decoder", "layer", "layers", "block" (or "t"), m for "mtp" (or "m"), L
// for "loss" (or "L"); a word may be followed by an index or a module
// path ("decoder.3", "layers_12"). Words are matched without case.
func MegatronSymbol(name string) (byte, bool) {
	switch name {
	case "E", "t", "m", "L":
		return name[0], true
	}
	word := name
	if i := strings.IndexFunc(name, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') }); i >= 0 {
		word = name[:i]
		if rest := name[i:]; !strings.ContainsAny(rest[:1], "._-0123456789") {
			return 0, false
		}
	}
	switch strings.ToLower(word) {
	case "embedding", "embed", "embeddings":
		return 'E', true
	case "transformer", "decoder", "layer", "layers", "block":
		return 't', true
	case "mtp":
		return 'm', true
	case "loss":
		return 'L', true
	}
	return 0, false
}

// MegatronLayout is a split in Megatron-Core's terms.
type MegatronLayout struct {
	Ranks  int      // --pipeline-model-parallel-size
	Stages []string // every stage's symbols, in layout order
	// Layout is the --pipeline-model-parallel-layout string.
	Layout string
	// Layers is the number of transformer layers (--num-layers).
	Layers int
	// First and Last are --decoder-first-pipeline-num-layers and
	// --decoder-last-pipeline-num-layers where the split has that simpler
	// form (Simple): one stage per rank, the embedding only on the first
	// and the loss only on the last, no MTP layer, and the middle stages
	// with equal numbers of transformer layers. Otherwise Why says why not.
	Simple      bool
	First, Last int
	Why         string
}

// Megatron writes a split, its stages' layer names in pipeline order and
// their devices (a Report's Stages), as Megatron-Core's layout for ranks
// pipeline ranks. It refuses, in one line, a layer whose name is no
// Megatron kind (MegatronSymbol), a stage-to-device map other than
// Megatron's (stage i on rank i mod ranks), an embedding that is not the
// first layer or a loss that is not the last.
func Megatron(names [][]string, devices []int, ranks int) (*MegatronLayout, error) {
	if ranks < 1 || len(names) == 0 || len(names)%ranks != 0 {
		return nil, fmt.Errorf("%d stages on %d ranks: Megatron-Core's layout holds the same number of stages (virtual stages) on every rank", len(names), ranks)
	}
	ml := &MegatronLayout{Ranks: ranks}
	for i, stage := range names {
		if devices[i] != i%ranks {
			return nil, fmt.Errorf("stage %d is on device %d: Megatron-Core runs layout stage i on rank i mod %d (the loop order), so stage %d must be on device %d", i, devices[i], ranks, i, i%ranks)
		}
		var sym []byte
		for j, n := range stage {
			c, ok := MegatronSymbol(n)
			if !ok {
				return nil, fmt.Errorf("layer %q: not named as a Megatron-Core kind (embedding, decoder or transformer or layer, mtp, loss; or E, t, m, L)", n)
			}
			first := i == 0 && j == 0
			last := i == len(names)-1 && j == len(stage)-1
			if c == 'E' && !first || c == 'L' && !last {
				return nil, fmt.Errorf("layer %q: Megatron-Core keeps the embedding first (E) and the loss last (L)", n)
			}
			if c == 't' {
				ml.Layers++
			}
			sym = append(sym, c)
		}
		ml.Stages = append(ml.Stages, string(sym))
	}
	parts := make([]string, len(ml.Stages))
	for i, s := range ml.Stages {
		parts[i] = CompressRuns(s)
	}
	ml.Layout = strings.Join(parts, "|")
	ml.simple()
	return ml, nil
}

// CompressRuns writes runs of one symbol of a layout stage as X*N:
// "Ettt" → "Et*3".
func CompressRuns(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		b.WriteByte(s[i])
		if j-i > 1 {
			b.WriteString("*" + strconv.Itoa(j-i))
		}
		i = j
	}
	return b.String()
}

// simple fills First and Last where the split has their form.
func (ml *MegatronLayout) simple() {
	P := ml.Ranks
	if P == 1 {
		ml.Why = "one pipeline stage"
		return
	}
	if len(ml.Stages) != P {
		ml.Why = fmt.Sprintf("%d virtual stages per rank", len(ml.Stages)/P)
		return
	}
	count := make([]int, P)
	for i, s := range ml.Stages {
		if strings.ContainsRune(s, 'm') {
			ml.Why = "an MTP layer"
			return
		}
		count[i] = strings.Count(s, "t")
	}
	for i := 2; i < P-1; i++ {
		if count[i] != count[1] {
			ml.Why = fmt.Sprintf("the middle stages hold %s transformer layers; Megatron-Core splits them evenly", joinInts(count[1:P-1]))
			return
		}
	}
	ml.Simple, ml.First, ml.Last = true, count[0], count[P-1]
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// ParseMegatronLayout reads a layout string into its stages' symbols, as
// Megatron-Core expands it: "|" between stages, "X*N" and "(…)*N"
// repeat, commas and spaces ignored; symbols E, t, m, L.
func ParseMegatronLayout(layout string) ([]string, error) {
	s := strings.NewReplacer(",", "", " ", "").Replace(layout)
	expanded, rest, err := expandLayout(s, 0)
	if err != nil {
		return nil, err
	}
	if rest != "" {
		return nil, fmt.Errorf("layout %q: unmatched %q", layout, rest[:1])
	}
	return strings.Split(expanded, "|"), nil
}

// maxLayout bounds an expanded layout, far beyond any model.
const maxLayout = 1 << 20

// expandLayout expands s up to an unmatched ")" (returned in rest).
func expandLayout(s string, depth int) (string, string, error) {
	if depth > 16 {
		return "", "", fmt.Errorf("layout: parentheses nested too deep")
	}
	var b strings.Builder
	for len(s) > 0 {
		var unit string
		switch c := s[0]; {
		case c == ')':
			return b.String(), s, nil
		case c == '(':
			inner, rest, err := expandLayout(s[1:], depth+1)
			if err != nil {
				return "", "", err
			}
			if rest == "" {
				return "", "", fmt.Errorf("layout: \"(\" without \")\"")
			}
			unit, s = inner, rest[1:]
		case c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|':
			unit, s = string(c), s[1:]
		default:
			return "", "", fmt.Errorf("layout: symbol %q is not E, t, m, L or |", c)
		}
		n := 1
		if len(s) > 0 && s[0] == '*' {
			j := 1
			for j < len(s) && s[j] >= '0' && s[j] <= '9' && j <= 7 {
				j++
			}
			if j == 1 {
				return "", "", fmt.Errorf("layout: \"*\" without a count")
			}
			n, _ = strconv.Atoi(s[1:j])
			s = s[j:]
		}
		if b.Len()+n*len(unit) > maxLayout {
			return "", "", fmt.Errorf("layout: more than %d symbols", maxLayout)
		}
		b.WriteString(strings.Repeat(unit, n))
	}
	return b.String(), "", nil
}

// Megatron is the report's split as Megatron-Core's layout (Megatron),
// its stages on the report's accelerators.
func (r *Report) Megatron() (*MegatronLayout, error) {
	names := make([][]string, len(r.Stages))
	devices := make([]int, len(r.Stages))
	for i, s := range r.Stages {
		if s.CPU {
			return nil, fmt.Errorf("stage %d runs on a CPU core: Megatron-Core runs every stage on a GPU", i)
		}
		names[i], devices[i] = s.Nodes, s.Device
	}
	return Megatron(names, devices, r.Accelerators)
}
