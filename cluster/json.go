package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/tessel-pp/tessel/internal/strictjson"
	"github.com/tessel-pp/tessel/limits"
)

// The cluster file (docs/formats.md, "Cluster file") is strict like the
// placement file: an unknown or repeated field is an error, names match
// exactly, null is never a value, nothing may follow the object. "devices"
// is required, and each device's "speed" and "memory"; "name", "links",
// and inside it "default", "pairs" and "channels" (a boolean), are
// optional (a missing link costs nothing; channels default to false). Errors are one line and name the device, pair or field.

// Parse reads a cluster file and validates it.
func Parse(data []byte) (*Cluster, error) {
	raw, err := strictjson.Top(data, "cluster object")
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	var devices []json.RawMessage
	var links json.RawMessage
	err = strictjson.Object(raw, []strictjson.Field{
		{Name: "devices", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Array(v, &devices) }},
		{Name: "links", Decode: func(v json.RawMessage) error { links = v; return nil }},
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	c.Devices = make([]Device, len(devices))
	for d, v := range devices {
		dev := &c.Devices[d]
		err := strictjson.Object(v, []strictjson.Field{
			{Name: "name", Decode: func(v json.RawMessage) error { return strictjson.String(v, &dev.Name) }},
			{Name: "speed", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Float(v, &dev.Speed) }},
			{Name: "memory", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &dev.Memory) }},
			{Name: "host", Decode: func(v json.RawMessage) error {
				dev.Host = &Link{}
				return decodeLink(v, dev.Host, nil)
			}},
			{Name: "switch", Decode: func(v json.RawMessage) error { return strictjson.String(v, &dev.Switch) }},
			{Name: "memory_bytes", Decode: func(v json.RawMessage) error { return strictjson.Float(v, &dev.MemoryBytes) }},
			{Name: "type", Decode: func(v json.RawMessage) error { return strictjson.String(v, &dev.Type) }},
			{Name: "peak_flops", Decode: func(v json.RawMessage) error { return strictjson.Float(v, &dev.PeakFLOPs) }},
			{Name: "memory_bandwidth", Decode: func(v json.RawMessage) error { return strictjson.Float(v, &dev.MemoryBandwidth) }},
			{Name: "node", Decode: func(v json.RawMessage) error { return strictjson.Int(v, &dev.Node) }},
		})
		if err != nil {
			return nil, fmt.Errorf("cluster: devices[%d]: %w", d, err)
		}
	}
	if links != nil {
		var def json.RawMessage
		var pairs []json.RawMessage
		err := strictjson.Object(links, []strictjson.Field{
			{Name: "default", Decode: func(v json.RawMessage) error { def = v; return nil }},
			{Name: "pairs", Decode: func(v json.RawMessage) error { return strictjson.Array(v, &pairs) }},
			{Name: "channels", Decode: func(v json.RawMessage) error { return strictjson.Bool(v, &c.Channels) }},
		})
		if err != nil {
			return nil, fmt.Errorf("cluster: field \"links\": %w", err)
		}
		if def != nil {
			if err := decodeLink(def, &c.Default, nil); err != nil {
				return nil, fmt.Errorf("cluster: links: default: %w", err)
			}
		}
		c.Pairs = make([]Pair, len(pairs))
		for n, v := range pairs {
			if err := decodePair(v, &c.Pairs[n]); err != nil {
				return nil, fmt.Errorf("cluster: links: pairs[%d]: %w", n, err)
			}
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// decodePair reads a pair: "from", "to", and either "latency" and
// "per_unit" (one link) or "links", an array of {"latency", "per_unit"}
// (the pair's links, at least one).
func decodePair(raw json.RawMessage, pr *Pair) error {
	var lat, per, links json.RawMessage
	err := strictjson.Object(raw, []strictjson.Field{
		{Name: "from", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &pr.From) }},
		{Name: "to", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &pr.To) }},
		{Name: "latency", Decode: func(v json.RawMessage) error { lat = v; return strictjson.Float(v, &pr.Latency) }},
		{Name: "per_unit", Decode: func(v json.RawMessage) error { per = v; return strictjson.Float(v, &pr.PerUnit) }},
		{Name: "links", Decode: func(v json.RawMessage) error { links = v; return nil }},
	})
	if err != nil {
		return err
	}
	if links == nil {
		switch {
		case lat == nil:
			return fmt.Errorf("missing field %q", "latency")
		case per == nil:
			return fmt.Errorf("missing field %q", "per_unit")
		}
		return nil
	}
	if lat != nil || per != nil {
		return fmt.Errorf(`give either "latency" and "per_unit" (one link) or "links", not both`)
	}
	var items []json.RawMessage
	if err := strictjson.Array(links, &items); err != nil {
		return fmt.Errorf("field \"links\": %w", err)
	}
	if len(items) == 0 {
		return fmt.Errorf("links: want at least one link")
	}
	ls := make([]Link, len(items))
	for k, v := range items {
		if err := decodeLink(v, &ls[k], nil); err != nil {
			return fmt.Errorf("links[%d]: %w", k, err)
		}
	}
	pr.Link, pr.More = ls[0], ls[1:]
	if len(pr.More) == 0 {
		pr.More = nil
	}
	return nil
}

func decodeLink(raw json.RawMessage, l *Link, more []strictjson.Field) error {
	return strictjson.Object(raw, append(more,
		strictjson.Field{Name: "latency", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Float(v, &l.Latency) }},
		strictjson.Field{Name: "per_unit", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Float(v, &l.PerUnit) }},
	))
}

// Load reads and validates the cluster file at path; errors start with the
// path.
func Load(path string) (*Cluster, error) {
	data, err := limits.ReadFile(path, limits.FileBytes)
	if err != nil {
		return nil, err
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Write writes a valid cluster as an indented cluster file, one device and
// one pair a line, ending with a newline. The bytes depend only on c, and
// Parse gives c back.
func (c *Cluster) Write(w io.Writer) error {
	if err := c.Validate(); err != nil {
		return err
	}
	b := c.AppendIndented(nil, "")
	_, err := w.Write(append(b, '\n'))
	return err
}

// AppendIndented appends c (which must be valid) as the cluster file lays
// it out, every line after the first prefixed with indent and without a
// final newline: for a file that holds a cluster as a field.
func (c *Cluster) AppendIndented(b []byte, indent string) []byte {
	nl := "\n" + indent
	b = append(b, "{"...)
	b = append(b, nl+"  \"devices\": ["...)
	for d, dev := range c.Devices {
		if d > 0 {
			b = append(b, ',')
		}
		b = append(b, nl+"    {"...)
		if dev.Name != "" {
			b = appendString(b, "name")
			b = append(b, ": "...)
			b = appendString(b, dev.Name)
			b = append(b, ", "...)
		}
		b = append(b, `"speed": `...)
		b = appendFloat(b, dev.Speed)
		b = append(b, `, "memory": `...)
		b = strconv.AppendInt(b, int64(dev.Memory), 10)
		if dev.Host != nil {
			b = append(b, `, "host": `...)
			b = appendLink(b, *dev.Host)
		}
		if dev.Switch != "" {
			b = append(b, `, "switch": `...)
			b = appendString(b, dev.Switch)
		}
		if dev.MemoryBytes > 0 {
			b = append(b, `, "memory_bytes": `...)
			b = appendFloat(b, dev.MemoryBytes)
		}
		if dev.Type != "" {
			b = append(b, `, "type": `...)
			b = appendString(b, dev.Type)
		}
		if dev.PeakFLOPs > 0 {
			b = append(b, `, "peak_flops": `...)
			b = appendFloat(b, dev.PeakFLOPs)
		}
		if dev.MemoryBandwidth > 0 {
			b = append(b, `, "memory_bandwidth": `...)
			b = appendFloat(b, dev.MemoryBandwidth)
		}
		if dev.Node > 0 {
			b = append(b, `, "node": `...)
			b = strconv.AppendInt(b, int64(dev.Node), 10)
		}
		b = append(b, '}')
	}
	b = append(b, nl+"  ],"...)
	b = append(b, nl+"  \"links\": {"...)
	b = append(b, nl+"    \"default\": "...)
	b = appendLink(b, c.Default)
	b = append(b, ","+nl+"    \"pairs\": ["...)
	for n, pr := range c.Pairs {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, nl+"      {\"from\": "...)
		b = strconv.AppendInt(b, int64(pr.From), 10)
		b = append(b, ", \"to\": "...)
		b = strconv.AppendInt(b, int64(pr.To), 10)
		if len(pr.More) == 0 {
			b = append(b, `, "latency": `...)
			b = appendFloat(b, pr.Latency)
			b = append(b, `, "per_unit": `...)
			b = appendFloat(b, pr.PerUnit)
		} else {
			b = append(b, `, "links": [`...)
			for k, l := range pr.Links() {
				if k > 0 {
					b = append(b, ", "...)
				}
				b = appendLink(b, l)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	if len(c.Pairs) > 0 {
		b = append(b, nl+"    "...)
	}
	b = append(b, "]"...)
	if c.Channels {
		b = append(b, ","+nl+"    \"channels\": true"...)
	}
	b = append(b, nl+"  }"+nl+"}"...)
	return b
}

func appendLink(b []byte, l Link) []byte {
	b = append(b, `{"latency": `...)
	b = appendFloat(b, l.Latency)
	b = append(b, `, "per_unit": `...)
	b = appendFloat(b, l.PerUnit)
	return append(b, '}')
}

// appendFloat writes the shortest form that reads back the same, never
// "-0".
func appendFloat(b []byte, x float64) []byte {
	return strconv.AppendFloat(b, x+0, 'g', -1, 64)
}

func appendString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil { // not for a string
		return strconv.AppendQuote(b, s)
	}
	return append(b, q...)
}
