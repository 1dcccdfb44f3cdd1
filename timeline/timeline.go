// Package timeline is a network that keeps changing under a running job
// (Wu et al., "Rethinking Dynamic Networks and Heterogeneous Computing
// with Automatic Parallelization", §3 and its scenario S3): a list of
// changes to a cluster, each at an iteration of training — a link's
// latency or bandwidth becomes another, a device's speed changes, devices
// leave, a device joins — and the replan of every step, warm-started from
// the step before (Run; docs/dynamic.md). The file is docs/formats.md's
// "Timeline file".
package timeline

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/internal/strictjson"
)

// MaxIteration bounds a change's iteration.
const MaxIteration = 1 << 40

// Timeline is a list of changes in order of iteration.
type Timeline struct {
	Changes []Change
}

// Change is one change of the cluster at iteration At; exactly one of
// its other fields is set. Devices are numbered as in the cluster just
// before the change (after a device leaves, those after it move down by
// one; a device that joins is numbered last).
type Change struct {
	At int
	// Link sets the link between two devices (both directions; their
	// one link from then on, where they had several).
	Link *cluster.Pair
	// Default sets the link of every pair not listed.
	Default *cluster.Link
	// Speed sets a device's speed.
	Speed *SpeedChange
	// Leave removes devices (distinct, all numbered as before the
	// change).
	Leave []int
	// Join appends a device.
	Join *Join
}

// SpeedChange is a device's new speed.
type SpeedChange struct {
	Device int
	Speed  float64
}

// Join is a device that joins the cluster, with its links to the devices
// already there (those not listed take the default link).
type Join struct {
	Device cluster.Device
	Links  []JoinLink
}

// JoinLink is a joining device's link to device To.
type JoinLink struct {
	To int
	cluster.Link
}

// Devices reports whether the change adds or removes devices.
func (ch Change) Devices() bool { return ch.Leave != nil || ch.Join != nil }

// String describes the change in a few words ("link 3-4: latency 40,
// per_unit 0", "device 5 leaves", "a device joins (speed 1)").
func (ch Change) String() string {
	switch {
	case ch.Link != nil:
		return fmt.Sprintf("link %d-%d: %s", ch.Link.From, ch.Link.To, linkString(ch.Link.Link))
	case ch.Default != nil:
		return "default link: " + linkString(*ch.Default)
	case ch.Speed != nil:
		return fmt.Sprintf("device %d: speed %s", ch.Speed.Device, num(ch.Speed.Speed))
	case ch.Leave != nil:
		ds := make([]string, len(ch.Leave))
		for k, d := range ch.Leave {
			ds[k] = strconv.Itoa(d)
		}
		if len(ds) == 1 {
			return "device " + ds[0] + " leaves"
		}
		return "devices " + strings.Join(ds, ", ") + " leave"
	case ch.Join != nil:
		if n := ch.Join.Device.Name; n != "" {
			return fmt.Sprintf("device %q joins (speed %s)", n, num(ch.Join.Device.Speed))
		}
		return fmt.Sprintf("a device joins (speed %s)", num(ch.Join.Device.Speed))
	}
	return "nothing"
}

func linkString(l cluster.Link) string {
	return "latency " + num(l.Latency) + ", per_unit " + num(l.PerUnit)
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Steps groups the changes by iteration: each step is the changes of one
// iteration, in file order.
func (t *Timeline) Steps() [][]Change {
	var out [][]Change
	for k, ch := range t.Changes {
		if k > 0 && ch.At == t.Changes[k-1].At {
			out[len(out)-1] = append(out[len(out)-1], ch)
			continue
		}
		out = append(out, []Change{ch})
	}
	return out
}

// Parse reads a timeline file: {"changes": [...]}, each change an object
// with "at" (the iteration, ≥ 0, never below the change before it) and
// exactly one of "link" ({"from", "to", "latency", "per_unit"}),
// "default" ({"latency", "per_unit"}), "speed" ({"device", "speed"}),
// "leave" (an array of devices) and "join" ({"name", "speed", "memory",
// "links": [{"to", "latency", "per_unit"}]}). Strict as every tessel
// file; the error is one line naming the change and field. Whether the
// devices exist is checked where the changes meet a cluster (Apply).
func Parse(data []byte) (*Timeline, error) {
	raw, err := strictjson.Top(data, "timeline object")
	if err != nil {
		return nil, fmt.Errorf("timeline: %w", err)
	}
	var items []json.RawMessage
	err = strictjson.Object(raw, []strictjson.Field{
		{Name: "changes", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Array(v, &items) }},
	})
	if err != nil {
		return nil, fmt.Errorf("timeline: %w", err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("timeline: changes: want at least one change")
	}
	t := &Timeline{Changes: make([]Change, len(items))}
	for n, v := range items {
		ch := &t.Changes[n]
		set := 0
		one := func(f func(json.RawMessage) error) func(json.RawMessage) error {
			return func(v json.RawMessage) error { set++; return f(v) }
		}
		err := strictjson.Object(v, []strictjson.Field{
			{Name: "at", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &ch.At) }},
			{Name: "link", Decode: one(func(v json.RawMessage) error {
				ch.Link = &cluster.Pair{}
				return decodeLink(v, &ch.Link.Link, []strictjson.Field{
					{Name: "from", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &ch.Link.From) }},
					{Name: "to", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &ch.Link.To) }},
				})
			})},
			{Name: "default", Decode: one(func(v json.RawMessage) error {
				ch.Default = &cluster.Link{}
				return decodeLink(v, ch.Default, nil)
			})},
			{Name: "speed", Decode: one(func(v json.RawMessage) error {
				ch.Speed = &SpeedChange{}
				return strictjson.Object(v, []strictjson.Field{
					{Name: "device", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &ch.Speed.Device) }},
					{Name: "speed", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Float(v, &ch.Speed.Speed) }},
				})
			})},
			{Name: "leave", Decode: one(func(v json.RawMessage) error {
				var ds []json.RawMessage
				if err := strictjson.Array(v, &ds); err != nil {
					return err
				}
				ch.Leave = make([]int, len(ds))
				for k, d := range ds {
					if err := strictjson.Int(d, &ch.Leave[k]); err != nil {
						return fmt.Errorf("[%d]: %w", k, err)
					}
				}
				return nil
			})},
			{Name: "join", Decode: one(func(v json.RawMessage) error {
				ch.Join = &Join{}
				return decodeJoin(v, ch.Join)
			})},
		})
		if err != nil {
			return nil, fmt.Errorf("timeline: changes[%d]: %w", n, err)
		}
		if set != 1 {
			return nil, fmt.Errorf("timeline: changes[%d]: want exactly one of \"link\", \"default\", \"speed\", \"leave\", \"join\", got %d", n, set)
		}
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

func decodeLink(raw json.RawMessage, l *cluster.Link, more []strictjson.Field) error {
	return strictjson.Object(raw, append(more,
		strictjson.Field{Name: "latency", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Float(v, &l.Latency) }},
		strictjson.Field{Name: "per_unit", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Float(v, &l.PerUnit) }},
	))
}

func decodeJoin(raw json.RawMessage, j *Join) error {
	var links []json.RawMessage
	err := strictjson.Object(raw, []strictjson.Field{
		{Name: "name", Decode: func(v json.RawMessage) error { return strictjson.String(v, &j.Device.Name) }},
		{Name: "speed", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Float(v, &j.Device.Speed) }},
		{Name: "memory", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &j.Device.Memory) }},
		{Name: "links", Decode: func(v json.RawMessage) error { return strictjson.Array(v, &links) }},
	})
	if err != nil {
		return err
	}
	j.Links = make([]JoinLink, len(links))
	for k, v := range links {
		l := &j.Links[k]
		err := decodeLink(v, &l.Link, []strictjson.Field{
			{Name: "to", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &l.To) }},
		})
		if err != nil {
			return fmt.Errorf("links[%d]: %w", k, err)
		}
	}
	return nil
}

// Validate checks the timeline on its own: at least one change, each
// exactly one kind, iterations in 0..MaxIteration and never decreasing,
// speeds, latencies and per-unit times in the cluster file's ranges,
// device numbers not negative, a link between two distinct devices, a
// leave of at least one device, each once, a joining device's links each
// to a distinct device. The error is one line naming the change.
func (t *Timeline) Validate() error {
	if len(t.Changes) == 0 {
		return fmt.Errorf("timeline: changes: want at least one change")
	}
	for n, ch := range t.Changes {
		if err := ch.validate(); err != nil {
			return fmt.Errorf("timeline: changes[%d]: %w", n, err)
		}
		if n > 0 && ch.At < t.Changes[n-1].At {
			return fmt.Errorf("timeline: changes[%d]: iteration %d is before the change before it (%d): list the changes in order", n, ch.At, t.Changes[n-1].At)
		}
	}
	return nil
}

func (ch Change) validate() error {
	kinds := 0
	for _, set := range []bool{ch.Link != nil, ch.Default != nil, ch.Speed != nil, ch.Leave != nil, ch.Join != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return fmt.Errorf("want exactly one of \"link\", \"default\", \"speed\", \"leave\", \"join\", got %d", kinds)
	}
	if ch.At < 0 || ch.At > MaxIteration {
		return fmt.Errorf("at: iteration must be in 0..%d, got %d", MaxIteration, ch.At)
	}
	switch {
	case ch.Link != nil:
		l := ch.Link
		if l.From < 0 || l.To < 0 {
			return fmt.Errorf("link: devices must not be negative, got %d and %d", l.From, l.To)
		}
		if l.From == l.To {
			return fmt.Errorf("link: a link from device %d to itself", l.From)
		}
		if err := checkLink(l.Link); err != nil {
			return fmt.Errorf("link: %w", err)
		}
	case ch.Default != nil:
		if err := checkLink(*ch.Default); err != nil {
			return fmt.Errorf("default: %w", err)
		}
	case ch.Speed != nil:
		if ch.Speed.Device < 0 {
			return fmt.Errorf("speed: device must not be negative, got %d", ch.Speed.Device)
		}
		if s := ch.Speed.Speed; !(s >= cluster.MinSpeed && s <= cluster.MaxSpeed) {
			return fmt.Errorf("speed: speed must be in %g..%g, got %g", cluster.MinSpeed, cluster.MaxSpeed, s)
		}
	case ch.Leave != nil:
		if len(ch.Leave) == 0 {
			return fmt.Errorf("leave: want at least one device")
		}
		for k, d := range ch.Leave {
			if d < 0 {
				return fmt.Errorf("leave[%d]: device must not be negative, got %d", k, d)
			}
			if slices.Index(ch.Leave, d) < k {
				return fmt.Errorf("leave[%d]: device %d listed twice", k, d)
			}
		}
	case ch.Join != nil:
		d := ch.Join.Device
		if !(d.Speed >= cluster.MinSpeed && d.Speed <= cluster.MaxSpeed) {
			return fmt.Errorf("join: speed must be in %g..%g, got %g", cluster.MinSpeed, cluster.MaxSpeed, d.Speed)
		}
		// Memory's upper limit is the cluster's: Apply validates.
		if d.Memory < 0 {
			return fmt.Errorf("join: memory must be at least 0 (0: unlimited), got %d", d.Memory)
		}
		for k, l := range ch.Join.Links {
			if l.To < 0 {
				return fmt.Errorf("join: links[%d]: device must not be negative, got %d", k, l.To)
			}
			for m := range k {
				if ch.Join.Links[m].To == l.To {
					return fmt.Errorf("join: links[%d]: device %d already linked by links[%d]", k, l.To, m)
				}
			}
			if err := checkLink(l.Link); err != nil {
				return fmt.Errorf("join: links[%d]: %w", k, err)
			}
		}
	}
	return nil
}

func checkLink(l cluster.Link) error {
	if !(l.Latency >= 0 && l.Latency <= cluster.MaxLatency) {
		return fmt.Errorf("latency must be in 0..%d, got %g", cluster.MaxLatency, l.Latency)
	}
	if !(l.PerUnit >= 0 && l.PerUnit <= cluster.MaxPerUnit) {
		return fmt.Errorf("per_unit must be in 0..%d, got %g", cluster.MaxPerUnit, l.PerUnit)
	}
	return nil
}

// Load reads and parses the timeline file at path; errors start with the
// path.
func Load(path string) (*Timeline, error) {
	return strictjson.Load(path, Parse)
}

// Apply returns c after ch (c is left alone), validated, and for every
// device of the result the device of c it was (−1 for one that joined).
// A device number past c's devices is an error naming it.
func Apply(c *cluster.Cluster, ch Change) (*cluster.Cluster, []int, error) {
	if err := ch.validate(); err != nil {
		return nil, nil, err
	}
	n := len(c.Devices)
	in := func(what string, d int) error {
		if d >= n {
			return fmt.Errorf("%s: device %d out of range 0..%d (the cluster has %d devices there)", what, d, n-1, n)
		}
		return nil
	}
	q := c.Clone()
	was := make([]int, n)
	for d := range was {
		was[d] = d
	}
	switch {
	case ch.Link != nil:
		l := ch.Link
		for _, d := range []int{l.From, l.To} {
			if err := in("link", d); err != nil {
				return nil, nil, err
			}
		}
		q.Pairs = setPair(q.Pairs, *l)
	case ch.Default != nil:
		q.Default = *ch.Default
	case ch.Speed != nil:
		if err := in("speed", ch.Speed.Device); err != nil {
			return nil, nil, err
		}
		q.Devices[ch.Speed.Device].Speed = ch.Speed.Speed
	case ch.Leave != nil:
		for k, d := range ch.Leave {
			if err := in(fmt.Sprintf("leave[%d]", k), d); err != nil {
				return nil, nil, err
			}
		}
		if len(ch.Leave) >= n {
			return nil, nil, fmt.Errorf("leave: all %d devices leave", n)
		}
		q, was = remove(q, ch.Leave)
	case ch.Join != nil:
		for k, l := range ch.Join.Links {
			if err := in(fmt.Sprintf("join: links[%d]", k), l.To); err != nil {
				return nil, nil, err
			}
		}
		q.Devices = append(q.Devices, ch.Join.Device)
		for _, l := range ch.Join.Links {
			q.Pairs = setPair(q.Pairs, cluster.Pair{From: l.To, To: n, Link: l.Link})
		}
		was = append(was, -1)
	}
	if err := q.Validate(); err != nil {
		return nil, nil, err
	}
	return q, was, nil
}

// setPair sets the link of p's two devices, replacing their pair (all
// its links, where it had several) or appending one.
func setPair(pairs []cluster.Pair, p cluster.Pair) []cluster.Pair {
	for k, q := range pairs {
		if q.From == p.From && q.To == p.To || q.From == p.To && q.To == p.From {
			pairs[k].Link, pairs[k].More = p.Link, nil
			return pairs
		}
	}
	return append(pairs, p)
}

// remove drops the devices gone from c (numbered in c) and their pairs,
// numbering the others down; it returns c and each remaining device's
// number before.
func remove(c *cluster.Cluster, gone []int) (*cluster.Cluster, []int) {
	now := make([]int, len(c.Devices)) // new number, −1 when gone
	var was []int
	var devices []cluster.Device
	for d, dev := range c.Devices {
		if slices.Contains(gone, d) {
			now[d] = -1
			continue
		}
		now[d] = len(devices)
		devices = append(devices, dev)
		was = append(was, d)
	}
	var pairs []cluster.Pair
	for _, p := range c.Pairs {
		if now[p.From] < 0 || now[p.To] < 0 {
			continue
		}
		p.From, p.To = now[p.From], now[p.To]
		pairs = append(pairs, p)
	}
	// A node's link stays while a device is left on it.
	var nodes []cluster.NodeLink
	for _, nl := range c.Nodes {
		for _, dev := range devices {
			if dev.Node == nl.Node {
				nodes = append(nodes, nl)
				break
			}
		}
	}
	c.Devices, c.Pairs, c.Nodes = devices, pairs, nodes
	return c, was
}
