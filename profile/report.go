package profile

import (
	"encoding/json"
	"fmt"
	"math"
)

// Bytes is n in the largest decimal unit (B, kB, MB, GB) that keeps it ≥ 1.
func Bytes(n int64) string {
	x := float64(n)
	for _, u := range []string{"B", "kB", "MB", "GB"} {
		if math.Abs(x) < 1000 || u == "GB" {
			if u == "B" {
				return fmt.Sprintf("%d B", n)
			}
			return fmt.Sprintf("%.1f %s", x, u)
		}
		x /= 1000
	}
	return ""
}

// Agreement is how a profile's times compare with an earlier profile's
// of the same model: Within of Total median times fall inside the
// earlier profile's spread (or within Slack of its median, for times
// near the clock's resolution); Outside names the others.
type Agreement struct {
	Within, Total int
	Outside       []string
}

// Slack is how far (ms) a median may lie from an earlier one and still
// agree where the spread is narrower: the model file keeps times to the
// microsecond.
const Slack = 0.01

// Agree compares r with the layers an earlier model file of the same
// model gives (ReadLayers): layer by layer, by name.
func (r *Result) Agree(old []Layer) (Agreement, error) {
	if len(old) != len(r.Layers) {
		return Agreement{}, fmt.Errorf("%d layers against %d: not the same model", len(r.Layers), len(old))
	}
	var a Agreement
	for i, l := range r.Layers {
		o := old[i]
		if o.Name != l.Name {
			return Agreement{}, fmt.Errorf("layer %d is %q here and %q there: not the same model", i, l.Name, o.Name)
		}
		for _, p := range []struct {
			name     string
			now, was Pass
		}{{"forward", l.Forward, o.Forward}, {"input", l.Input, o.Input}, {"weight", l.Weight, o.Weight}} {
			a.Total++
			m := ms(p.now.Median)
			if (m >= p.was.P10 && m <= p.was.P90) || math.Abs(m-p.was.Median) <= Slack {
				a.Within++
				continue
			}
			a.Outside = append(a.Outside, fmt.Sprintf("%s %s %.3f ms (was %.3f [%.3f–%.3f])", l.Name, p.name, m, p.was.Median, p.was.P10, p.was.P90))
		}
	}
	return a, nil
}

// ReadLayers reads the layers' times and spreads of a model file that
// tessel profile wrote (validate it with partition first: this reads only
// what it needs).
func ReadLayers(data []byte) ([]Layer, error) {
	var f struct {
		Layers []struct {
			Name                   string
			Forward, Input, Weight float64
			Spread                 map[string][2]float64
		}
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	var out []Layer
	for _, l := range f.Layers {
		if l.Spread == nil {
			return nil, fmt.Errorf("layer %q has no spread: not a file of tessel profile", l.Name)
		}
		pass := func(name string, median float64) Pass {
			s := l.Spread[name]
			return Pass{Median: median, P10: s[0], P90: s[1]}
		}
		out = append(out, Layer{Name: l.Name, Forward: pass("forward", l.Forward), Input: pass("input", l.Input), Weight: pass("weight", l.Weight)})
	}
	return out, nil
}
