package profile

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/tessel-pp/tessel/internal/strictjson"
)

// Meta is how a model file's times were measured: its "profile" object.
type Meta struct {
	Tool string // "tessel profile"
	// Model is "decoder" (the built-in, of Config) or "user" (the Python
	// file UserModel).
	Model     string
	Config    *Config
	UserModel string
	// Device is "cpu" or "cuda", DeviceName the processor's or GPU's name,
	// DType the parameters' dtype, Torch PyTorch's version, Threads the
	// CPU threads torch used, Clock what timed the passes.
	Device, DeviceName, DType, Torch, Clock string
	Threads                                 int
	// Warmup and Repeats are the rounds dropped and the rounds whose
	// median and spread the layers give.
	Warmup, Repeats int
	// TimeUnit is the unit of every time in the file: "ms".
	TimeUnit string
	Method   string // in words
}

// Models lists what Meta.Model may be.
func Models() []string { return []string{"decoder", "user"} }

// Devices lists what Meta.Device may be.
func Devices() []string { return []string{"cpu", "cuda"} }

// DecodeMeta reads a model file's "profile" object strictly.
func DecodeMeta(raw json.RawMessage) (*Meta, error) {
	m := &Meta{}
	str := func(name string, s *string, required bool) strictjson.Field {
		return strictjson.Field{Name: name, Required: required, Decode: func(v json.RawMessage) error { return strictjson.String(v, s) }}
	}
	integer := func(name string, x *int) strictjson.Field {
		return strictjson.Field{Name: name, Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, x) }}
	}
	err := strictjson.Object(raw, []strictjson.Field{
		str("tool", &m.Tool, true),
		str("model", &m.Model, true),
		{Name: "config", Decode: func(v json.RawMessage) error {
			c, err := decodeConfig(v)
			m.Config = &c
			return err
		}},
		str("user_model", &m.UserModel, false),
		str("device", &m.Device, true),
		str("device_name", &m.DeviceName, false),
		str("dtype", &m.DType, true),
		str("torch", &m.Torch, true),
		str("clock", &m.Clock, true),
		integer("threads", &m.Threads),
		integer("warmup", &m.Warmup),
		integer("repeats", &m.Repeats),
		str("time_unit", &m.TimeUnit, true),
		str("method", &m.Method, false),
	})
	if err != nil {
		return nil, err
	}
	switch {
	case !slices.Contains(Models(), m.Model):
		return nil, fmt.Errorf("field \"model\": %q: want one of %v", m.Model, Models())
	case m.Model == "decoder" && m.Config == nil:
		return nil, fmt.Errorf("field \"config\": a decoder's profile needs its config")
	case m.Model == "decoder" && m.UserModel != "":
		return nil, fmt.Errorf("field \"user_model\": not for the built-in decoder")
	case m.Model == "user" && m.Config != nil:
		return nil, fmt.Errorf("field \"config\": only the built-in decoder has a config")
	case m.Model == "user" && m.UserModel == "":
		return nil, fmt.Errorf("field \"user_model\": a user model's profile names its file")
	case !slices.Contains(Devices(), m.Device):
		return nil, fmt.Errorf("field \"device\": %q: want one of %v", m.Device, Devices())
	case m.Threads < 1 || m.Warmup < 0 || m.Repeats < 1:
		return nil, fmt.Errorf("threads %d, warmup %d, repeats %d: want ≥ 1, ≥ 0 and ≥ 1", m.Threads, m.Warmup, m.Repeats)
	case m.TimeUnit != "ms":
		return nil, fmt.Errorf("field \"time_unit\": %q: want \"ms\"", m.TimeUnit)
	}
	return m, nil
}

// Calibration is what a measured run of a schedule corrects in a model
// file's times (its "calibration" object): each pass's times scaled
// (Scale, by "forward", "input", "weight" and "backward"; 1 where
// absent), every transfer between devices taking Transfer and every action
// of the runtime (a compute, send, receive, wait, offload, reload or
// recompute) ActionOverhead more, in the file's time unit. Measured says
// what they were fitted to.
type Calibration struct {
	Scale          map[string]float64
	Transfer       float64
	ActionOverhead float64
	Measured       string
}

// Passes lists the passes a Calibration may scale.
func Passes() []string { return []string{"forward", "input", "weight", "backward"} }

// ScaleOf is pass's scale: 1 where the calibration gives none (and for a
// nil calibration).
func (c *Calibration) ScaleOf(pass string) float64 {
	if c == nil {
		return 1
	}
	if s, ok := c.Scale[pass]; ok {
		return s
	}
	return 1
}

// DecodeCalibration reads a model file's "calibration" object strictly.
func DecodeCalibration(raw json.RawMessage) (*Calibration, error) {
	c := &Calibration{Scale: map[string]float64{}}
	var scale json.RawMessage
	err := strictjson.Object(raw, []strictjson.Field{
		{Name: "scale", Decode: func(v json.RawMessage) error { scale = v; return nil }},
		{Name: "transfer", Decode: func(v json.RawMessage) error { return strictjson.Float(v, &c.Transfer) }},
		{Name: "action_overhead", Decode: func(v json.RawMessage) error { return strictjson.Float(v, &c.ActionOverhead) }},
		{Name: "measured", Decode: func(v json.RawMessage) error { return strictjson.String(v, &c.Measured) }},
	})
	if err != nil {
		return nil, err
	}
	if scale != nil {
		var fields []strictjson.Field
		for _, p := range Passes() {
			fields = append(fields, strictjson.Field{Name: p, Decode: func(v json.RawMessage) error {
				var x float64
				if err := strictjson.Float(v, &x); err != nil {
					return err
				}
				if !(x > 0) || x > 1e6 {
					return fmt.Errorf("%v: want a scale in (0, 1e6]", x)
				}
				c.Scale[p] = x
				return nil
			}})
		}
		if err := strictjson.Object(scale, fields); err != nil {
			return nil, fmt.Errorf("field \"scale\": %w", err)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"transfer", c.Transfer}, {"action_overhead", c.ActionOverhead}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return nil, fmt.Errorf("field %q: %v: want a finite time ≥ 0", f.name, f.v)
		}
	}
	return c, nil
}

// Spread is the 10th and 90th percentile of a layer's repeated times, per
// pass (a layer's "spread" object): Lo[p] ≤ Hi[p].
type Spread map[string][2]float64

// DecodeSpread reads a layer's "spread" object strictly: each of the
// passes at most once, as [lo, hi] with 0 ≤ lo ≤ hi.
func DecodeSpread(raw json.RawMessage) (Spread, error) {
	s := Spread{}
	var fields []strictjson.Field
	for _, p := range Passes() {
		fields = append(fields, strictjson.Field{Name: p, Decode: func(v json.RawMessage) error {
			var xs []json.RawMessage
			if err := strictjson.Array(v, &xs); err != nil {
				return err
			}
			if len(xs) != 2 {
				return fmt.Errorf("want [lo, hi], got %d numbers", len(xs))
			}
			var lo, hi float64
			if err := strictjson.Float(xs[0], &lo); err != nil {
				return err
			}
			if err := strictjson.Float(xs[1], &hi); err != nil {
				return err
			}
			if !(lo >= 0 && lo <= hi) || math.IsInf(hi, 0) {
				return fmt.Errorf("[%v, %v]: want 0 ≤ lo ≤ hi, finite", lo, hi)
			}
			s[p] = [2]float64{lo, hi}
			return nil
		}})
	}
	if err := strictjson.Object(raw, fields); err != nil {
		return nil, err
	}
	return s, nil
}
