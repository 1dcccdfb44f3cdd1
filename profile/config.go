package profile

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/internal/strictjson"
	"github.com/tessel-pp/tessel/limits"
)

// Config is the built-in decoder-only transformer: Layers decoder layers
// of width Hidden with Heads attention heads and an MLP of FFN, on
// sequences of Seq tokens, Batch samples per micro-batch, a vocabulary of
// Vocab tokens, computing in DType ("float32", "float64" or "bfloat16")
// and trained with Optimizer ("sgd" or "adam") at learning rate LR. The
// model adds an embedding before the decoder layers and a head (the final
// norm, the vocabulary projection and the loss) after them.
type Config struct {
	Layers    int     `json:"layers"`
	Hidden    int     `json:"hidden"`
	Heads     int     `json:"heads"`
	FFN       int     `json:"ffn"`
	Seq       int     `json:"seq"`
	Batch     int     `json:"batch"`
	Vocab     int     `json:"vocab"`
	DType     string  `json:"dtype"`
	Optimizer string  `json:"optimizer"`
	LR        float64 `json:"lr"`
}

// DTypes lists the dtypes a Config may name.
func DTypes() []string { return []string{"float32", "float64", "bfloat16"} }

// Optimizers lists the optimizers a Config may name.
func Optimizers() []string { return []string{"sgd", "adam"} }

// DefaultConfig is the built-in config of tessel profile: 8 decoder
// layers small enough that this machine's CPU (one thread, Debian's
// PyTorch) runs a layer's forward in tens of milliseconds.
func DefaultConfig() Config {
	return Config{Layers: 8, Hidden: 128, Heads: 4, FFN: 512, Seq: 64, Batch: 4, Vocab: 512,
		DType: "float32", Optimizer: "sgd", LR: 0.01}
}

// Validate reports the first field out of range, or nil.
func (c Config) Validate() error {
	for _, f := range []struct {
		name string
		v    int
		max  int
	}{{"layers", c.Layers, limits.Layers - 2}, {"hidden", c.Hidden, 1 << 20}, {"heads", c.Heads, 1 << 20}, {"ffn", c.FFN, 1 << 20},
		{"seq", c.Seq, 1 << 20}, {"batch", c.Batch, 1 << 20}, {"vocab", c.Vocab, 1 << 20}} {
		// Layers: with the embedding and the head, the model file's
		// layers stay within what partition reads.
		if f.v < 1 || f.v > f.max {
			return fmt.Errorf("decoder config: %q %d: want an integer in 1..%d", f.name, f.v, f.max)
		}
	}
	if c.Hidden%c.Heads != 0 {
		return fmt.Errorf("decoder config: hidden %d is not a multiple of heads %d", c.Hidden, c.Heads)
	}
	if !slices.Contains(DTypes(), c.DType) {
		return fmt.Errorf("decoder config: dtype %q: want one of %v", c.DType, DTypes())
	}
	if !slices.Contains(Optimizers(), c.Optimizer) {
		return fmt.Errorf("decoder config: optimizer %q: want one of %v", c.Optimizer, Optimizers())
	}
	if !(c.LR > 0 && c.LR < 1e6) {
		return fmt.Errorf("decoder config: lr %v: want a number in (0, 1e6)", c.LR)
	}
	return nil
}

// LayerNames are the config's layers in pipeline order, as the model file
// and the workers name them: embedding, decoder.0 … decoder.L−1, head.
func (c Config) LayerNames() []string {
	names := []string{"embedding"}
	for i := range c.Layers {
		names = append(names, fmt.Sprintf("decoder.%d", i))
	}
	return append(names, "head")
}

// Name is the model's name in a model file: decoder-LxH.
func (c Config) Name() string { return fmt.Sprintf("decoder-%dx%d", c.Layers, c.Hidden) }

// ParseConfig reads a decoder config: every size is required; dtype
// (default float32), optimizer (default sgd) and lr (default 0.01) are
// optional. The reader is strict like every tessel file.
func ParseConfig(data []byte) (Config, error) {
	raw, err := strictjson.Top(data, "decoder config object")
	if err != nil {
		return Config{}, err
	}
	return decodeConfig(raw)
}

// LoadConfig reads a decoder config file.
func LoadConfig(path string) (Config, error) {
	return strictjson.Load(path, ParseConfig)
}

func decodeConfig(raw json.RawMessage) (Config, error) {
	c := Config{DType: "float32", Optimizer: "sgd", LR: 0.01}
	ints := []struct {
		name string
		v    *int
	}{{"layers", &c.Layers}, {"hidden", &c.Hidden}, {"heads", &c.Heads}, {"ffn", &c.FFN}, {"seq", &c.Seq}, {"batch", &c.Batch}, {"vocab", &c.Vocab}}
	var fields []strictjson.Field
	for _, f := range ints {
		fields = append(fields, strictjson.Field{Name: f.name, Required: true,
			Decode: func(v json.RawMessage) error { return strictjson.Int(v, f.v) }})
	}
	fields = append(fields,
		strictjson.Field{Name: "dtype", Decode: func(v json.RawMessage) error { return strictjson.String(v, &c.DType) }},
		strictjson.Field{Name: "optimizer", Decode: func(v json.RawMessage) error { return strictjson.String(v, &c.Optimizer) }},
		strictjson.Field{Name: "lr", Decode: func(v json.RawMessage) error { return strictjson.Float(v, &c.LR) }})
	if err := strictjson.Object(raw, fields); err != nil {
		return Config{}, fmt.Errorf("decoder config: %w", err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Differences lists, in the order of the struct, every field whose value
// differs between c and d, as "hidden 128, not 256" (c's value first);
// nil where they are equal.
func (c Config) Differences(d Config) []string {
	f := func(v any) string { return fmt.Sprint(v) }
	var out []string
	for _, x := range []struct {
		name string
		a, b any
	}{{"layers", c.Layers, d.Layers}, {"hidden", c.Hidden, d.Hidden}, {"heads", c.Heads, d.Heads}, {"ffn", c.FFN, d.FFN},
		{"seq", c.Seq, d.Seq}, {"batch", c.Batch, d.Batch}, {"vocab", c.Vocab, d.Vocab}, {"dtype", c.DType, d.DType},
		{"optimizer", c.Optimizer, d.Optimizer}, {"lr", c.LR, d.LR}} {
		if x.a != x.b {
			out = append(out, fmt.Sprintf("%s %s, not %s", x.name, f(x.a), f(x.b)))
		}
	}
	return out
}

// JSON is the config as one line of JSON, every field written, in the
// order of the struct.
func (c Config) JSON() []byte {
	b, _ := json.Marshal(c) // a struct of numbers and strings: cannot fail
	return b
}
