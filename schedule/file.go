package schedule

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/internal/strictjson"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// The schedule file (docs/formats.md, "Schedule file") is strict like the
// placement file: unknown or repeated fields are errors, field names match
// exactly, null is never a value, and nothing may follow the object.
// "placement", "micro_batches", "memory" and "instances" are required and
// alone define the schedule. "cluster" (optional) is the cluster it runs
// on: the placement is then the placement as given, and the schedule's is
// that placement on the cluster (Schedule.Given, Schedule.Cluster).
// "budgets" (optional) is every device's budget where one differs from
// "memory": with a cluster it must be what the cluster's memories give,
// without one it sets the devices' capacities. "repetend" and "metrics"
// are optional and derived: they are kept (Schedule.Repetend,
// Schedule.Claimed) for Verify to check, never trusted, and Write
// recomputes the metrics. "latency_budget" (optional) is the latency
// budget every micro-batch meets (Schedule.Latency). A schedule without a
// cluster, budgets or a latency budget is
// written as before they existed, byte for byte.

// Write writes s as an indented schedule file ending with a newline: the
// placement as placement.Write lays it out, one instance a line in file
// order (see Sort), the repetend when s has one, and the metrics Measure
// computes. The bytes depend only on s, and Parse gives s back (with
// instances in file order). s need not be valid, but its placement must be
// and its instances must name existing blocks.
func (s *Schedule) Write(w io.Writer) error {
	data, err := s.marshal()
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

func (s *Schedule) marshal() ([]byte, error) {
	p := s.Placement
	if p == nil {
		return nil, fmt.Errorf("write schedule: no placement")
	}
	pb, err := s.givenBytes()
	if err != nil {
		return nil, err
	}
	if err := instancesInRange(s); err != nil {
		return nil, err
	}
	if rp := s.Repetend; rp != nil && len(rp.Offsets) != len(p.Blocks) {
		return nil, fmt.Errorf("write schedule: repetend has %d offsets for %d blocks", len(rp.Offsets), len(p.Blocks))
	}

	b := make([]byte, 0, 256+pb.Len()+48*len(s.Instances))
	b = append(b, "{\n  \"placement\": "...)
	// Indent the placement file one level, without its final newline.
	for i, line := range bytes.Split(bytes.TrimSuffix(pb.Bytes(), []byte{'\n'}), []byte{'\n'}) {
		if i > 0 {
			b = append(b, "\n  "...)
		}
		b = append(b, line...)
	}
	if s.Cluster != nil {
		b = append(b, ",\n  \"cluster\": "...)
		b = s.Cluster.AppendIndented(b, "  ")
	}
	b = append(b, ",\n  \"micro_batches\": "...)
	b = strconv.AppendInt(b, int64(s.MicroBatches), 10)
	b = append(b, ",\n  \"memory\": "...)
	b = strconv.AppendInt(b, int64(s.Memory), 10)
	if budgets := s.Budgets(); hasBudgets(budgets, s.Memory) {
		b = append(b, ",\n  \"budgets\": "...)
		b = append(b, intList(budgets)...)
	}
	if s.Latency > 0 {
		b = append(b, ",\n  \"latency_budget\": "...)
		b = strconv.AppendInt(b, int64(s.Latency), 10)
	}
	if FormHolds(s) {
		b = appendPeriodic(b, p, s.Periodic)
	} else {
		b = append(b, ",\n  \"instances\": "...)
		b = appendInstances(b, p, s.Instances, "  ")
	}
	if b, err = appendDecisions(b, p, s.Decisions); err != nil {
		return nil, err
	}
	if b, err = appendPairs(b, p, s.Pairs); err != nil {
		return nil, err
	}
	if len(s.LinkOrder) > 0 {
		if b, err = appendLinkOrder(b, p, s.LinkOrder); err != nil {
			return nil, err
		}
	}
	if rp := s.Repetend; rp != nil && !FormHolds(s) {
		b = appendRepetend(b, p, rp)
	}
	m := Measure(s)
	b = append(b, ",\n  \"metrics\": {\"makespan\": "...)
	b = strconv.AppendInt(b, int64(m.Makespan), 10)
	b = append(b, ", \"bubble_rate\": "...)
	b = strconv.AppendFloat(b, roundRate(m.BubbleRate), 'f', -1, 64)
	b = append(b, ", \"peak_memory\": "...)
	b = append(b, intList(m.PeakMemory)...)
	b = append(b, "}\n}\n"...)
	return b, nil
}

// givenBytes is the placement file of s's placement as given (on its
// cluster, the source placement): the file holds it and the cluster it
// runs on, since without a cluster transfer times would be lost.
func (s *Schedule) givenBytes() (*bytes.Buffer, error) {
	p := s.Placement
	given := p
	if s.Cluster != nil {
		if err := (&Schedule{Spec: spec.Spec{Placement: p}}).SetCluster(s.Cluster, s.Given); err != nil {
			return nil, fmt.Errorf("write schedule: %w", err)
		}
		given = s.Given
	} else if len(p.Transfers) > 0 {
		for _, d := range p.Deps {
			if p.Transfer(d) != 0 {
				return nil, fmt.Errorf("write schedule: placement %q has transfer times but the schedule no cluster to record them", p.Name)
			}
		}
	}
	var pb bytes.Buffer
	if err := given.Write(&pb); err != nil {
		return nil, fmt.Errorf("write schedule: %w", err)
	}
	return &pb, nil
}

// appendDecisions writes "decisions", sorted by block and micro-batch
// (nothing without any).
func appendDecisions(b []byte, p *placement.Placement, decisions []Decision) ([]byte, error) {
	if len(decisions) == 0 {
		return b, nil
	}
	ds := append([]Decision(nil), decisions...)
	slices.SortStableFunc(ds, func(a, b Decision) int {
		return cmp.Or(cmp.Compare(a.Block, b.Block), cmp.Compare(a.Micro, b.Micro))
	})
	b = append(b, ",\n  \"decisions\": ["...)
	for x, dc := range ds {
		if dc.Block < 0 || dc.Block >= len(p.Blocks) {
			return nil, fmt.Errorf("write schedule: decision %d: block index %d out of range 0..%d", x, dc.Block, len(p.Blocks)-1)
		}
		if x > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\"block\": "...)
		b = appendString(b, p.Blocks[dc.Block].ID)
		b = append(b, ", \"micro\": "...)
		b = strconv.AppendInt(b, int64(dc.Micro), 10)
		b = append(b, ", \"action\": "...)
		b = appendString(b, string(dc.Action))
		if dc.Action == placement.Offload {
			b = append(b, ", \"offload\": "...)
			b = strconv.AppendInt(b, int64(dc.Start), 10)
			b = append(b, ", \"reload\": "...)
			b = strconv.AppendInt(b, int64(dc.Reload), 10)
		} else {
			b = append(b, ", \"start\": "...)
			b = strconv.AppendInt(b, int64(dc.Start), 10)
		}
		b = append(b, '}')
	}
	b = append(b, "\n  ]"...)
	return b, nil
}

// appendPairs writes "pairs" in SortPairs order (nothing without any).
func appendPairs(b []byte, p *placement.Placement, pairs []Pair) ([]byte, error) {
	if len(pairs) == 0 {
		return b, nil
	}
	ps := append([]Pair(nil), pairs...)
	SortPairs(ps)
	b = append(b, ",\n  \"pairs\": ["...)
	for x, q := range ps {
		for _, r := range []Ref{q.Forward, q.Backward} {
			if r.Block < 0 || r.Block >= len(p.Blocks) {
				return nil, fmt.Errorf("write schedule: pair %d: block index %d out of range 0..%d", x, r.Block, len(p.Blocks)-1)
			}
		}
		if x > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\"forward\": "...)
		b = appendString(b, p.Blocks[q.Forward.Block].ID)
		b = append(b, ", \"forward_micro\": "...)
		b = strconv.AppendInt(b, int64(q.Forward.Micro), 10)
		b = append(b, ", \"backward\": "...)
		b = appendString(b, p.Blocks[q.Backward.Block].ID)
		b = append(b, ", \"backward_micro\": "...)
		b = strconv.AppendInt(b, int64(q.Backward.Micro), 10)
		b = append(b, '}')
	}
	b = append(b, "\n  ]"...)
	return b, nil
}

// appendRepetend writes "repetend".
func appendRepetend(b []byte, p *placement.Placement, rp *Repetend) []byte {
	b = append(b, ",\n  \"repetend\": {\"nr\": "...)
	b = strconv.AppendInt(b, int64(rp.NR), 10)
	b = append(b, ", \"period\": "...)
	b = strconv.AppendInt(b, int64(rp.Period), 10)
	b = append(b, ", \"offsets\": {"...)
	for i, o := range rp.Offsets {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendString(b, p.Blocks[i].ID)
		b = append(b, ": "...)
		b = strconv.AppendInt(b, int64(o), 10)
	}
	b = append(b, "}, \"start\": "...)
	b = strconv.AppendInt(b, int64(rp.Start), 10)
	b = append(b, ", \"iterations\": "...)
	b = strconv.AppendInt(b, int64(rp.Iterations), 10)
	b = append(b, '}')
	return b
}

// appendInstances writes ins as a JSON list, one instance a line in file
// order (sortInstances), indented one level more than indent.
func appendInstances(b []byte, p *placement.Placement, ins []Instance, indent string) []byte {
	b = append(b, '[')
	ins = slices.Clone(ins)
	sortInstances(p, ins)
	for x, in := range ins {
		if x > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
		b = append(b, indent...)
		b = append(b, "  {\"block\": "...)
		b = appendString(b, p.Blocks[in.Block].ID)
		b = append(b, ", \"micro\": "...)
		b = strconv.AppendInt(b, int64(in.Micro), 10)
		b = append(b, ", \"start\": "...)
		b = strconv.AppendInt(b, int64(in.Start), 10)
		b = append(b, '}')
	}
	if len(ins) > 0 {
		b = append(b, '\n')
		b = append(b, indent...)
	}
	return append(b, ']')
}

// appendPeriodic writes the periodic form f in place of "instances"
// (docs/formats.md, "Periodic schedule file").
func appendPeriodic(b []byte, p *placement.Placement, f *PeriodicForm) []byte {
	b = append(b, ",\n  \"periodic\": {\n    \"head\": "...)
	b = appendInstances(b, p, f.Head, "    ")
	b = append(b, ",\n    \"period\": "...)
	b = appendInstances(b, p, f.Period, "    ")
	b = append(b, ",\n    \"shift\": {\"time\": "...)
	b = strconv.AppendInt(b, int64(f.Shift.Time), 10)
	b = append(b, ", \"micro\": "...)
	b = strconv.AppendInt(b, int64(f.Shift.Micro), 10)
	b = append(b, "},\n    \"repetitions\": "...)
	b = strconv.AppendInt(b, int64(f.Repetitions), 10)
	b = append(b, ",\n    \"tail\": "...)
	b = appendInstances(b, p, f.Tail, "    ")
	return append(b, "\n  }"...)
}

func appendString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil { // not for a string
		return strconv.AppendQuote(b, s)
	}
	return append(b, q...)
}

// Load reads the schedule file at path (see Parse). Errors start with the
// path.
func Load(path string) (*Schedule, error) {
	return strictjson.LoadMax(path, limits.ScheduleFileBytes, Parse)
}

// Parse reads a schedule file. It checks the file's structure, the
// placement (placement.Parse), 1 ≤ micro_batches ≤ MaxMicroBatches,
// memory ≥ 0, that instances name existing blocks and that the repetend's
// offsets name every block once. It does not verify the schedule: that is
// Verify's job, which also checks the optional repetend and metrics.
// Errors are one line and name the field or instance at fault.
//
// A periodic file (docs/formats.md, "Periodic schedule file": "periodic"
// in place of "instances") is read as the full schedule: its instances
// built, within the instance limit, and its form kept (Periodic).
func Parse(data []byte) (*Schedule, error) {
	s, err := ParseForm(data)
	if err != nil || s.Periodic == nil {
		return s, err
	}
	return s.Materialize(context.Background())
}

// LoadForm reads the schedule file at path as ParseForm does.
func LoadForm(path string) (*Schedule, error) {
	return strictjson.LoadMax(path, limits.ScheduleFileBytes, ParseForm)
}

// ParseForm is Parse without building a periodic file's instances: its
// schedule has its form (Periodic) and nil Instances, for the verifier
// to check from its period.
func ParseForm(data []byte) (*Schedule, error) {
	raw, err := single(data)
	if err != nil {
		return nil, err
	}
	s := &Schedule{}
	var pl, cl, instances, periodic, decisions, pairs, linkOrder, rep, met json.RawMessage
	var budgets []json.RawMessage
	err = strictjson.Object(raw, []strictjson.Field{
		{Name: "placement", Required: true, Decode: func(v json.RawMessage) error { pl = v; return nil }},
		{Name: "cluster", Decode: func(v json.RawMessage) error { cl = v; return nil }},
		{Name: "budgets", Decode: func(v json.RawMessage) error { return strictjson.Array(v, &budgets) }},
		{Name: "micro_batches", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &s.MicroBatches) }},
		{Name: "memory", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &s.Memory) }},
		{Name: "latency_budget", Decode: func(v json.RawMessage) error { return strictjson.Int(v, &s.Latency) }},
		{Name: "instances", Decode: func(v json.RawMessage) error { instances = v; return nil }},
		{Name: "periodic", Decode: func(v json.RawMessage) error { periodic = v; return nil }},
		{Name: "decisions", Decode: func(v json.RawMessage) error { decisions = v; return nil }},
		{Name: "pairs", Decode: func(v json.RawMessage) error { pairs = v; return nil }},
		{Name: "link_order", Decode: func(v json.RawMessage) error { linkOrder = v; return nil }},
		{Name: "repetend", Decode: func(v json.RawMessage) error { rep = v; return nil }},
		{Name: "metrics", Decode: func(v json.RawMessage) error { met = v; return nil }},
	})
	if err != nil {
		return nil, err
	}
	if strictjson.Type(pl) != "an object" {
		return nil, fmt.Errorf("field \"placement\": want an object, got %s", strictjson.Type(pl))
	}
	if s.Placement, err = placement.Parse(pl); err != nil {
		return nil, fmt.Errorf("field \"placement\": %w", err)
	}
	if s.MicroBatches < 1 || s.MicroBatches > MaxMicroBatches {
		return nil, fmt.Errorf("field \"micro_batches\": %d out of range 1..%d", s.MicroBatches, MaxMicroBatches)
	}
	if err := limits.CheckInstances(s.MicroBatches, len(s.Placement.Blocks)); err != nil {
		return nil, err
	}
	if s.Memory < 0 {
		return nil, fmt.Errorf("field \"memory\": %d is negative (0 means unlimited)", s.Memory)
	}
	if s.Latency < 0 {
		return nil, fmt.Errorf("field \"latency_budget\": %d is negative (leave it out for none)", s.Latency)
	}
	if cl != nil {
		c, err := cluster.Parse(cl)
		if err != nil {
			return nil, fmt.Errorf("field \"cluster\": %w", err)
		}
		q, err := c.Apply(s.Placement)
		if err != nil {
			return nil, fmt.Errorf("field \"cluster\": %w", err)
		}
		s.Cluster, s.Given, s.Placement = c, s.Placement, q
	}
	if budgets != nil {
		if err := decodeBudgets(s, budgets); err != nil {
			return nil, fmt.Errorf("field \"budgets\": %w", err)
		}
	}
	index := make(map[string]int, len(s.Placement.Blocks))
	for i, b := range s.Placement.Blocks {
		index[b.ID] = i
	}
	switch {
	case instances == nil && periodic == nil:
		return nil, fmt.Errorf("missing field \"instances\"")
	case instances != nil && periodic != nil:
		return nil, fmt.Errorf("fields \"instances\" and \"periodic\": want one of them")
	case periodic != nil:
		if s.Periodic, err = decodePeriodic(periodic, index, s); err != nil {
			return nil, fmt.Errorf("field \"periodic\": %w", err)
		}
		if rep != nil {
			return nil, fmt.Errorf("field \"repetend\": a periodic schedule has none (its period is its steady state)")
		}
	default:
		if s.Instances, err = decodeInstances(instances, index); err != nil {
			return nil, fmt.Errorf("field \"instances\": %w", err)
		}
	}
	if decisions != nil {
		if s.Decisions, err = decodeDecisions(decisions, index); err != nil {
			return nil, fmt.Errorf("field \"decisions\": %w", err)
		}
	}
	if pairs != nil {
		if s.Pairs, err = decodePairs(pairs, index); err != nil {
			return nil, fmt.Errorf("field \"pairs\": %w", err)
		}
	}
	if linkOrder != nil {
		if s.LinkOrder, err = decodeLinkOrder(linkOrder, s.Placement, index); err != nil {
			return nil, fmt.Errorf("field \"link_order\": %w", err)
		}
	}
	if rep != nil {
		if s.Repetend, err = decodeRepetend(rep, s.Placement); err != nil {
			return nil, fmt.Errorf("field \"repetend\": %w", err)
		}
	}
	if met != nil {
		if s.Claimed, err = decodeMetrics(met); err != nil {
			return nil, fmt.Errorf("field \"metrics\": %w", err)
		}
	}
	return s, nil
}

// instancesInRange checks that every instance s writes names a block.
func instancesInRange(s *Schedule) error {
	k := len(s.Placement.Blocks)
	lists := [][]Instance{s.Instances}
	if f := s.Periodic; FormHolds(s) {
		lists = [][]Instance{f.Head, f.Period, f.Tail}
	}
	for _, list := range lists {
		for x, in := range list {
			if in.Block < 0 || in.Block >= k {
				return fmt.Errorf("write schedule: instance %d: block index %d out of range 0..%d", x, in.Block, k-1)
			}
		}
	}
	return nil
}

// decodePeriodic reads a periodic form: "head", "period" and "tail"
// (lists of instances), "shift" ({"time", "micro"}) and "repetitions".
// Its shape is checked against s (PeriodicForm.Check), so that nothing
// built from it exceeds the instance limit; whether it is a valid
// schedule is Verify's to check.
func decodePeriodic(raw json.RawMessage, index map[string]int, s *Schedule) (*PeriodicForm, error) {
	f := &PeriodicForm{}
	list := func(dst *[]Instance, name string) func(json.RawMessage) error {
		return func(v json.RawMessage) error {
			var err error
			if *dst, err = decodeInstances(v, index); err != nil {
				return fmt.Errorf("field %q: %w", name, err)
			}
			return nil
		}
	}
	err := strictjson.Object(raw, []strictjson.Field{
		{Name: "head", Required: true, Decode: list(&f.Head, "head")},
		{Name: "period", Required: true, Decode: list(&f.Period, "period")},
		{Name: "shift", Required: true, Decode: func(v json.RawMessage) error {
			return strictjson.Object(v, []strictjson.Field{
				{Name: "time", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &f.Shift.Time) }},
				{Name: "micro", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &f.Shift.Micro) }},
			})
		}},
		{Name: "repetitions", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &f.Repetitions) }},
		{Name: "tail", Required: true, Decode: list(&f.Tail, "tail")},
	})
	if err != nil {
		return nil, err
	}
	if err := f.check(s); err != nil {
		return nil, err
	}
	return f, nil
}

// single returns the one JSON value of data, rejecting trailing data.
func single(data []byte) (json.RawMessage, error) {
	raw, err := strictjson.Top(data, "schedule object")
	if err != nil {
		return nil, err
	}
	if k := strictjson.Type(raw); k != "an object" {
		return nil, fmt.Errorf("want a schedule object, got %s", k)
	}
	return raw, nil
}

func decodeInstances(raw json.RawMessage, index map[string]int) ([]Instance, error) {
	var items []json.RawMessage
	if err := strictjson.Array(raw, &items); err != nil {
		return nil, err
	}
	out := make([]Instance, len(items))
	for x, v := range items {
		in := &out[x]
		var id string
		err := strictjson.Object(v, []strictjson.Field{
			{Name: "block", Required: true, Decode: func(v json.RawMessage) error { return strictjson.String(v, &id) }},
			{Name: "micro", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &in.Micro) }},
			{Name: "start", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &in.Start) }},
		})
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", x, err)
		}
		i, ok := index[id]
		if !ok {
			return nil, fmt.Errorf("item %d: unknown block %q", x, id)
		}
		in.Block = i
	}
	return out, nil
}

// decodeDecisions reads the decisions: each names a block and a
// micro-batch and its action, "offload" with the starts of its offload
// and reload, or "recompute" with the start of the second run. Whether
// the block allows the action is Verify's to check.
func decodeDecisions(raw json.RawMessage, index map[string]int) ([]Decision, error) {
	var items []json.RawMessage
	if err := strictjson.Array(raw, &items); err != nil {
		return nil, err
	}
	out := make([]Decision, len(items))
	for x, v := range items {
		dc := &out[x]
		var id, action string
		var off, rel, start *int
		intField := func(dst **int) func(json.RawMessage) error {
			return func(v json.RawMessage) error {
				*dst = new(int)
				return strictjson.Int(v, *dst)
			}
		}
		err := strictjson.Object(v, []strictjson.Field{
			{Name: "block", Required: true, Decode: func(v json.RawMessage) error { return strictjson.String(v, &id) }},
			{Name: "micro", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &dc.Micro) }},
			{Name: "action", Required: true, Decode: func(v json.RawMessage) error { return strictjson.String(v, &action) }},
			{Name: "offload", Decode: intField(&off)},
			{Name: "reload", Decode: intField(&rel)},
			{Name: "start", Decode: intField(&start)},
		})
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", x, err)
		}
		i, ok := index[id]
		if !ok {
			return nil, fmt.Errorf("item %d: unknown block %q", x, id)
		}
		dc.Block, dc.Action = i, placement.Action(action)
		switch dc.Action {
		case placement.Offload:
			if off == nil || rel == nil || start != nil {
				return nil, fmt.Errorf("item %d: an offload has \"offload\" and \"reload\" times and no \"start\"", x)
			}
			dc.Start, dc.Reload = *off, *rel
		case placement.Recompute:
			if start == nil || off != nil || rel != nil {
				return nil, fmt.Errorf("item %d: a recompute has a \"start\" time and no \"offload\" or \"reload\"", x)
			}
			dc.Start = *start
		default:
			return nil, fmt.Errorf("item %d: action %q (want %q or %q)", x, action, placement.Offload, placement.Recompute)
		}
	}
	return out, nil
}

func decodeRepetend(raw json.RawMessage, p *placement.Placement) (*Repetend, error) {
	rp := &Repetend{}
	var offsets json.RawMessage
	err := strictjson.Object(raw, []strictjson.Field{
		{Name: "nr", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &rp.NR) }},
		{Name: "period", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &rp.Period) }},
		{Name: "offsets", Required: true, Decode: func(v json.RawMessage) error { offsets = v; return nil }},
		{Name: "start", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &rp.Start) }},
		{Name: "iterations", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &rp.Iterations) }},
	})
	if err != nil {
		return nil, err
	}
	// The offsets object has one field per block id, each required.
	rp.Offsets = make([]int, len(p.Blocks))
	fields := make([]strictjson.Field, len(p.Blocks))
	for i, b := range p.Blocks {
		fields[i] = strictjson.Field{Name: b.ID, Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &rp.Offsets[i]) }}
	}
	if err := strictjson.Object(offsets, fields); err != nil {
		return nil, fmt.Errorf("field \"offsets\": %w", err)
	}
	return rp, nil
}

func decodeMetrics(raw json.RawMessage) (*Claimed, error) {
	c := &Claimed{}
	var peak []json.RawMessage
	err := strictjson.Object(raw, []strictjson.Field{
		{Name: "makespan", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &c.Makespan) }},
		{Name: "bubble_rate", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Float(v, &c.BubbleRate) }},
		{Name: "peak_memory", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Array(v, &peak) }},
	})
	if err != nil {
		return nil, err
	}
	c.PeakMemory = make([]int, len(peak))
	for d, v := range peak {
		if err := strictjson.Int(v, &c.PeakMemory[d]); err != nil {
			return nil, fmt.Errorf("field \"peak_memory\": item %d: %w", d, err)
		}
	}
	return c, nil
}

// hasBudgets reports whether some device's budget differs from memory:
// then the file carries the list.
func hasBudgets(budgets []int, memory int) bool {
	for _, b := range budgets {
		if b != memory {
			return true
		}
	}
	return false
}

// decodeBudgets reads the per-device budgets: with a cluster they must be
// those its memories and the schedule's memory give; without one they
// are the devices' capacities.
func decodeBudgets(s *Schedule, items []json.RawMessage) error {
	p := s.Placement
	if len(items) != p.Devices {
		return fmt.Errorf("%d budgets for %d devices", len(items), p.Devices)
	}
	budgets := make([]int, len(items))
	for d, v := range items {
		if err := strictjson.Int(v, &budgets[d]); err != nil {
			return fmt.Errorf("item %d: %w", d, err)
		}
		if budgets[d] < 0 || budgets[d] > placement.MaxMemory {
			return fmt.Errorf("item %d: %d out of range 0..%d (0: unlimited)", d, budgets[d], placement.MaxMemory)
		}
		if s.Memory > 0 && (budgets[d] < 1 || budgets[d] > s.Memory) {
			return fmt.Errorf("item %d: %d out of range 1..%d (memory)", d, budgets[d], s.Memory)
		}
	}
	if s.Cluster != nil {
		if want := s.Budgets(); !slices.Equal(budgets, want) {
			return fmt.Errorf("%v, but the cluster's memories and memory %d give %v", budgets, s.Memory, want)
		}
		return nil
	}
	p.Capacities = budgets
	return nil
}

// decodePairs reads the overlapped pairs: each names a forward block and
// its micro-batch and a backward (or input) block and its micro-batch.
// Whether the placement lets them overlap is Verify's to check.
func decodePairs(raw json.RawMessage, index map[string]int) ([]Pair, error) {
	var items []json.RawMessage
	if err := strictjson.Array(raw, &items); err != nil {
		return nil, err
	}
	out := make([]Pair, len(items))
	for x, v := range items {
		q := &out[x]
		var f, g string
		err := strictjson.Object(v, []strictjson.Field{
			{Name: "forward", Required: true, Decode: func(v json.RawMessage) error { return strictjson.String(v, &f) }},
			{Name: "forward_micro", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &q.Forward.Micro) }},
			{Name: "backward", Required: true, Decode: func(v json.RawMessage) error { return strictjson.String(v, &g) }},
			{Name: "backward_micro", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &q.Backward.Micro) }},
		})
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", x, err)
		}
		var ok bool
		if q.Forward.Block, ok = index[f]; !ok {
			return nil, fmt.Errorf("item %d: unknown block %q", x, f)
		}
		if q.Backward.Block, ok = index[g]; !ok {
			return nil, fmt.Errorf("item %d: unknown block %q", x, g)
		}
	}
	return out, nil
}

// appendLinkOrder writes the recorded link order (Schedule.LinkOrder):
// the links in the order recorded, each with its transfers in order.
func appendLinkOrder(b []byte, p *placement.Placement, order []placement.LinkOrder) ([]byte, error) {
	b = append(b, ",\n  \"link_order\": ["...)
	for x, o := range order {
		if x > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\"from\": "...)
		b = strconv.AppendInt(b, int64(o.Link.From), 10)
		b = append(b, ", \"to\": "...)
		b = strconv.AppendInt(b, int64(o.Link.To), 10)
		b = append(b, ", \"transfers\": ["...)
		for k, t := range o.Transfers {
			if !slices.Contains(p.Deps, t.Dep) {
				return nil, fmt.Errorf("write schedule: link order %d: no dependency %d -> %d", x, t.Dep.From, t.Dep.To)
			}
			if k > 0 {
				b = append(b, ", "...)
			}
			b = append(b, "{\"from\": "...)
			b = appendString(b, p.Blocks[t.Dep.From].ID)
			b = append(b, ", \"to\": "...)
			b = appendString(b, p.Blocks[t.Dep.To].ID)
			b = append(b, ", \"micro\": "...)
			b = strconv.AppendInt(b, int64(t.Micro), 10)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	return append(b, "\n  ]"...), nil
}

// decodeLinkOrder reads "link_order": a list of {"from", "to" (devices),
// "transfers": [{"from", "to" (block IDs of a dependency), "micro"}]}.
// Whether each link lists exactly its transfers is Verify's job.
func decodeLinkOrder(raw json.RawMessage, p *placement.Placement, index map[string]int) ([]placement.LinkOrder, error) {
	var items []json.RawMessage
	if err := strictjson.Array(raw, &items); err != nil {
		return nil, err
	}
	out := make([]placement.LinkOrder, len(items))
	for x, v := range items {
		o := &out[x]
		var ts []json.RawMessage
		err := strictjson.Object(v, []strictjson.Field{
			{Name: "from", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &o.Link.From) }},
			{Name: "to", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &o.Link.To) }},
			{Name: "transfers", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Array(v, &ts) }},
		})
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", x, err)
		}
		for _, dev := range []int{o.Link.From, o.Link.To} {
			if dev < 0 || dev >= p.Devices {
				return nil, fmt.Errorf("item %d: device %d out of range 0..%d", x, dev, p.Devices-1)
			}
		}
		if o.Link.From == o.Link.To {
			return nil, fmt.Errorf("item %d: link %d->%d joins a device to itself", x, o.Link.From, o.Link.To)
		}
		o.Transfers = make([]placement.LinkTransfer, len(ts))
		for k, tv := range ts {
			t := &o.Transfers[k]
			var f, g string
			err := strictjson.Object(tv, []strictjson.Field{
				{Name: "from", Required: true, Decode: func(v json.RawMessage) error { return strictjson.String(v, &f) }},
				{Name: "to", Required: true, Decode: func(v json.RawMessage) error { return strictjson.String(v, &g) }},
				{Name: "micro", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &t.Micro) }},
			})
			if err != nil {
				return nil, fmt.Errorf("item %d: transfer %d: %w", x, k, err)
			}
			var ok bool
			if t.Dep.From, ok = index[f]; !ok {
				return nil, fmt.Errorf("item %d: transfer %d: unknown block %q", x, k, f)
			}
			if t.Dep.To, ok = index[g]; !ok {
				return nil, fmt.Errorf("item %d: transfer %d: unknown block %q", x, k, g)
			}
			if !slices.Contains(p.Deps, t.Dep) {
				return nil, fmt.Errorf("item %d: transfer %d: no dependency %s -> %s", x, k, f, g)
			}
			if t.Micro < 0 || t.Micro >= MaxMicroBatches {
				return nil, fmt.Errorf("item %d: transfer %d: micro-batch %d out of range", x, k, t.Micro)
			}
		}
	}
	return out, nil
}
