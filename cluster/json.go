package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/tessel-pp/tessel/internal/strictjson"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/quantity"
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
		{Name: "time_unit", Decode: func(v json.RawMessage) error { return strictjson.String(v, &c.TimeUnit) }},
		{Name: "devices", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Array(v, &devices) }},
		{Name: "links", Decode: func(v json.RawMessage) error { links = v; return nil }},
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if c.TimeUnit != "" {
		if _, err := quantity.ParseTime(c.TimeUnit); err != nil {
			return nil, fmt.Errorf("cluster: field \"time_unit\": %w", err)
		}
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
	var def json.RawMessage
	var nodes []json.RawMessage
	if links != nil {
		var pairs []json.RawMessage
		err := strictjson.Object(links, []strictjson.Field{
			{Name: "default", Decode: func(v json.RawMessage) error { def = v; return nil }},
			{Name: "nodes", Decode: func(v json.RawMessage) error { return strictjson.Array(v, &nodes) }},
			{Name: "pairs", Decode: func(v json.RawMessage) error { return strictjson.Array(v, &pairs) }},
			{Name: "channels", Decode: func(v json.RawMessage) error { return strictjson.Bool(v, &c.QueuedLinks) }},
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
	if err := c.decodeNodes(nodes); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if def == nil {
		if err := c.checkNodesLinked(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// decodeNodes reads "links": {"nodes": [...]}, the link within each node
// given once: {"node": n} with "latency" and "per_unit" (or "links", as a
// pair's). Validate checks them.
func (c *Cluster) decodeNodes(nodes []json.RawMessage) error {
	c.Nodes = nil
	for k, v := range nodes {
		nl := NodeLink{Node: -1}
		var pr Pair
		err := decodeLinks(v, &pr, []strictjson.Field{
			{Name: "node", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &nl.Node) }},
		})
		if err != nil {
			return fmt.Errorf("cluster: links: nodes[%d]: %w", k, err)
		}
		nl.Link, nl.More = pr.Link, pr.More
		c.Nodes = append(c.Nodes, nl)
	}
	return nil
}

// checkNodesLinked is the rule for a file without "links": {"default"}:
// two devices on different nodes need a pair, or a transfer between them
// would cost nothing. The error names the first two devices without one.
func (c *Cluster) checkNodesLinked() error {
	listed := map[[2]int]bool{}
	for _, pr := range c.Pairs {
		listed[[2]int{min(pr.From, pr.To), max(pr.From, pr.To)}] = true
	}
	for a := range c.Devices {
		for b := a + 1; b < len(c.Devices); b++ {
			if c.Devices[a].Node != c.Devices[b].Node && !listed[[2]int{a, b}] {
				return fmt.Errorf("cluster: %s on node %d and %s on node %d have no link between them: give \"links\": {\"default\"} (the link between nodes) or a pair",
					deviceName(a, c.Devices[a].Name), c.Devices[a].Node, deviceName(b, c.Devices[b].Name), c.Devices[b].Node)
			}
		}
	}
	return nil
}

// decodePair reads a pair: "from", "to", and either "latency" and
// "per_unit" (one link) or "links", an array of {"latency", "per_unit"}
// (the pair's links, at least one).
func decodePair(raw json.RawMessage, pr *Pair) error {
	return decodeLinks(raw, pr, []strictjson.Field{
		{Name: "from", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &pr.From) }},
		{Name: "to", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &pr.To) }},
	})
}

// decodeLinks reads the fields of an object that says which devices it
// links (ends) and its links: "latency" and "per_unit", or "links".
func decodeLinks(raw json.RawMessage, pr *Pair, ends []strictjson.Field) error {
	var lat, per, links json.RawMessage
	err := strictjson.Object(raw, append(ends, []strictjson.Field{
		{Name: "latency", Decode: func(v json.RawMessage) error { lat = v; return strictjson.Float(v, &pr.Latency) }},
		{Name: "per_unit", Decode: func(v json.RawMessage) error { per = v; return strictjson.Float(v, &pr.PerUnit) }},
		{Name: "links", Decode: func(v json.RawMessage) error { links = v; return nil }},
	}...))
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
	if c.TimeUnit != "" {
		b = append(b, nl+"  \"time_unit\": "...)
		b = appendString(b, c.TimeUnit)
		b = append(b, ","...)
	}
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
	if len(c.Nodes) > 0 {
		b = append(b, ","+nl+"    \"nodes\": ["...)
		for k, n := range c.Nodes {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, nl+"      {\"node\": "...)
			b = strconv.AppendInt(b, int64(n.Node), 10)
			b = appendPairLinks(b, n.Link, n.More)
			b = append(b, '}')
		}
		b = append(b, nl+"    ]"...)
	}
	b = append(b, ","+nl+"    \"pairs\": ["...)
	for n, pr := range c.Pairs {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, nl+"      {\"from\": "...)
		b = strconv.AppendInt(b, int64(pr.From), 10)
		b = append(b, ", \"to\": "...)
		b = strconv.AppendInt(b, int64(pr.To), 10)
		b = appendPairLinks(b, pr.Link, pr.More)
		b = append(b, '}')
	}
	if len(c.Pairs) > 0 {
		b = append(b, nl+"    "...)
	}
	b = append(b, "]"...)
	if c.QueuedLinks {
		b = append(b, ","+nl+"    \"channels\": true"...)
	}
	b = append(b, nl+"  }"+nl+"}"...)
	return b
}

// appendPairLinks appends a pair's links after its ends: "latency" and
// "per_unit" for one, "links" for several.
func appendPairLinks(b []byte, l Link, more []Link) []byte {
	if len(more) == 0 {
		b = append(b, `, "latency": `...)
		b = appendFloat(b, l.Latency)
		b = append(b, `, "per_unit": `...)
		return appendFloat(b, l.PerUnit)
	}
	b = append(b, `, "links": [`...)
	for k, x := range append([]Link{l}, more...) {
		if k > 0 {
			b = append(b, ", "...)
		}
		b = appendLink(b, x)
	}
	return append(b, ']')
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
