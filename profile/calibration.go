package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// JSON is the calibration object on one line: the scales of the passes
// that differ from 1, the transfer and action times (to the
// microsecond of the file's unit, ms), and what they were fitted to.
func (c *Calibration) JSON() []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	if len(c.Scale) > 0 {
		b.WriteString(`"scale": {`)
		first := true
		for _, p := range Passes() {
			if s, ok := c.Scale[p]; ok {
				if !first {
					b.WriteString(", ")
				}
				first = false
				fmt.Fprintf(&b, "%q: %s", p, num(math.Round(s*1e4)/1e4))
			}
		}
		b.WriteString("}, ")
	}
	fmt.Fprintf(&b, `"transfer": %s, "action_overhead": %s`, num(ms(c.Transfer)), num(ms(c.ActionOverhead)))
	if c.Measured != "" {
		m, _ := json.Marshal(c.Measured)
		b.WriteString(`, "measured": `)
		b.Write(m)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// SetCalibration returns the model file data with its "calibration"
// object replaced by c (added before "layers" where it has none); every
// other top-level field keeps its bytes. data must be a JSON object.
func SetCalibration(data []byte, c *Calibration) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("a model file is a JSON object")
	}
	type field struct {
		key string
		val json.RawMessage
	}
	var fields []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		fields = append(fields, field{tok.(string), v})
	}
	cal := field{"calibration", c.JSON()}
	if i := slices.IndexFunc(fields, func(f field) bool { return f.key == "calibration" }); i >= 0 {
		fields[i] = cal
	} else {
		at := slices.IndexFunc(fields, func(f field) bool { return f.key == "layers" })
		if at < 0 {
			at = len(fields)
		}
		fields = slices.Insert(fields, at, cal)
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, f := range fields {
		k, _ := json.Marshal(f.key)
		fmt.Fprintf(&b, "  %s: %s", k, f.val)
		if i < len(fields)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}
