package partition

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/tessel-pp/tessel/internal/strictjson"
	"github.com/tessel-pp/tessel/limits"
)

// The graph file of Tarnawski et al. (testdata/dnn-partitioning/README.md): one
// object with maxSizePerFPGA, maxFPGAs, maxCPUs, nodes and edges. Every
// key the published files carry is known; any other is an error, like a
// missing required key, a repeated id or an edge to an unknown id.

// ParseGraph reads a graph in the JSON format of Tarnawski et al.'s
// published set.
func ParseGraph(data []byte) (*Graph, error) {
	raw, err := strictjson.Top(data, "graph object")
	if err != nil {
		return nil, err
	}
	return decodeTarnawski(raw)
}

func decodeTarnawski(raw json.RawMessage) (*Graph, error) {
	g := &Graph{}
	var nodes, edges []json.RawMessage
	var k, l float64
	err := strictjson.Object(raw, []strictjson.Field{
		{Name: "maxSizePerFPGA", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Float(v, &g.Memory) }},
		{Name: "maxFPGAs", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Float(v, &k) }},
		{Name: "maxCPUs", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Float(v, &l) }},
		{Name: "nodes", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Array(v, &nodes) }},
		{Name: "edges", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Array(v, &edges) }},
	})
	if err != nil {
		return nil, err
	}
	if err := limits.Check("nodes", len(nodes), limits.Layers); err != nil {
		return nil, fmt.Errorf("field \"nodes\": %w", err)
	}
	var ok bool
	if g.Accelerators, ok = wholeCount(k); !ok {
		return nil, fmt.Errorf("field \"maxFPGAs\": want a whole number ≥ 0, got %v", k)
	}
	if g.CPUs, ok = wholeCount(l); !ok {
		return nil, fmt.Errorf("field \"maxCPUs\": want a whole number ≥ 0, got %v", l)
	}
	index := make(map[int]int, len(nodes))
	g.Nodes = make([]Node, len(nodes))
	g.IDs = make([]int, len(nodes))
	for i, v := range nodes {
		if err := decodeTarnawskiNode(v, &g.Nodes[i], &g.IDs[i]); err != nil {
			return nil, fmt.Errorf("nodes[%d]: %w", i, err)
		}
		if j, dup := index[g.IDs[i]]; dup {
			return nil, fmt.Errorf("nodes[%d]: id %d already used by nodes[%d]", i, g.IDs[i], j)
		}
		index[g.IDs[i]] = i
	}
	// A node's communication cost is on its outgoing edges; the paper's
	// model has one per node (its appendix B subdivides the rare nodes
	// whose edges disagree; no published graph has one), so differing
	// costs are an error here rather than a silent choice.
	costSet := make([]bool, len(nodes))
	for n, v := range edges {
		var src, dst int
		var cost, size float64
		err := strictjson.Object(v, []strictjson.Field{
			{Name: "sourceId", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &src) }},
			{Name: "destId", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Int(v, &dst) }},
			{Name: "cost", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Float(v, &cost) }},
			{Name: "size", Decode: func(v json.RawMessage) error { return strictjson.Float(v, &size) }},
		})
		if err != nil {
			return nil, fmt.Errorf("edges[%d]: %w", n, err)
		}
		a, ok := index[src]
		if !ok {
			return nil, fmt.Errorf("edges[%d]: unknown sourceId %d", n, src)
		}
		b, ok := index[dst]
		if !ok {
			return nil, fmt.Errorf("edges[%d]: unknown destId %d", n, dst)
		}
		if cost < 0 {
			return nil, fmt.Errorf("edges[%d]: cost %v: want ≥ 0", n, cost)
		}
		if costSet[a] && g.Nodes[a].Comm != cost {
			return nil, fmt.Errorf("edges[%d]: cost %v differs from %v on another edge out of node %d (one cost per node)", n, cost, g.Nodes[a].Comm, src)
		}
		costSet[a] = true
		g.Nodes[a].Comm = cost
		g.Edges = append(g.Edges, [2]int{a, b})
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return g, nil
}

func wholeCount(x float64) (int, bool) {
	if x < 0 || x != math.Trunc(x) || x > 1<<20 {
		return 0, false
	}
	return int(x), true
}

func decodeTarnawskiNode(raw json.RawMessage, v *Node, id *int) error {
	var supported, backward, class float64
	supported = 1
	hasClass := false
	var layer float64
	err := strictjson.Object(raw, []strictjson.Field{
		{Name: "id", Required: true, Decode: func(x json.RawMessage) error { return strictjson.Int(x, id) }},
		{Name: "name", Decode: func(x json.RawMessage) error { return strictjson.String(x, &v.Name) }},
		{Name: "supportedOnFpga", Required: true, Decode: func(x json.RawMessage) error { return flag01(x, &supported) }},
		{Name: "cpuLatency", Required: true, Decode: func(x json.RawMessage) error { return strictjson.Float(x, &v.CPU) }},
		{Name: "fpgaLatency", Required: true, Decode: func(x json.RawMessage) error { return strictjson.Float(x, &v.Acc) }},
		{Name: "isBackwardNode", Decode: func(x json.RawMessage) error { return flag01(x, &backward) }},
		{Name: "colorClass", Decode: func(x json.RawMessage) error { hasClass = true; return strictjson.Float(x, &class) }},
		{Name: "size", Required: true, Decode: func(x json.RawMessage) error { return strictjson.Float(x, &v.Size) }},
		{Name: "layerId", Decode: func(x json.RawMessage) error { return strictjson.Float(x, &layer) }},
	})
	if err != nil {
		return err
	}
	if supported != 0 && supported != 1 {
		return fmt.Errorf("supportedOnFpga %v: want 0 or 1", supported)
	}
	if backward != 0 && backward != 1 {
		return fmt.Errorf("isBackwardNode %v: want 0 or 1", backward)
	}
	for _, w := range []struct {
		name string
		x    float64
	}{{"cpuLatency", v.CPU}, {"fpgaLatency", v.Acc}, {"size", v.Size}} {
		if w.x < 0 {
			return fmt.Errorf("%s %v: want ≥ 0", w.name, w.x)
		}
	}
	v.Class = -1
	if hasClass {
		c, ok := wholeCount(class)
		if !ok {
			return fmt.Errorf("colorClass %v: want a whole number ≥ 0", class)
		}
		v.Class = c
	}
	if supported == 0 {
		v.Acc = math.Inf(1)
	}
	v.Backward = backward == 1
	v.Layer = -1
	return nil
}

// Assignment is a split given as node ids per device, as the published
// set's expert files have it: Accelerators[i] and CPUs[j] list the ids on
// accelerator i and CPU core j.
type Assignment struct {
	Accelerators [][]int
	CPUs         [][]int
}

// ParseAssignment reads a split in the published set's output format
// (the expert files): {"cpus": [{"load", "nodes"}], "fpgas": [{"load",
// "nodes"}], "maxLoad"}; the loads are ignored (the files carry -1),
// tessel computes them.
func ParseAssignment(data []byte) (*Assignment, error) {
	raw, err := strictjson.Top(data, "split object")
	if err != nil {
		return nil, err
	}
	var a Assignment
	var cpus, fpgas []json.RawMessage
	var maxLoad float64
	err = strictjson.Object(raw, []strictjson.Field{
		{Name: "cpus", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Array(v, &cpus) }},
		{Name: "fpgas", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Array(v, &fpgas) }},
		{Name: "maxLoad", Decode: func(v json.RawMessage) error { return strictjson.Float(v, &maxLoad) }},
	})
	if err != nil {
		return nil, err
	}
	dev := func(list []json.RawMessage, what string) ([][]int, error) {
		out := make([][]int, len(list))
		for i, v := range list {
			var ids []json.RawMessage
			var load float64
			err := strictjson.Object(v, []strictjson.Field{
				{Name: "load", Decode: func(x json.RawMessage) error { return strictjson.Float(x, &load) }},
				{Name: "nodes", Required: true, Decode: func(x json.RawMessage) error { return strictjson.Array(x, &ids) }},
			})
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", what, i, err)
			}
			out[i] = make([]int, len(ids))
			for n, x := range ids {
				if err := strictjson.Int(x, &out[i][n]); err != nil {
					return nil, fmt.Errorf("%s[%d]: nodes[%d]: %w", what, i, n, err)
				}
			}
		}
		return out, nil
	}
	if a.CPUs, err = dev(cpus, "cpus"); err != nil {
		return nil, err
	}
	if a.Accelerators, err = dev(fpgas, "fpgas"); err != nil {
		return nil, err
	}
	return &a, nil
}

// Split turns an assignment by node ids (Graph.IDs) into a split of g: every node on
// exactly one device. Devices beyond the graph's counts are an error.
func (a *Assignment) Split(g *Graph) (*Split, error) {
	if g.IDs == nil {
		return nil, fmt.Errorf("the graph has no node ids (a layer profile names its layers)")
	}
	if len(a.Accelerators) > g.Accelerators || len(a.CPUs) > g.CPUs {
		return nil, fmt.Errorf("split uses %d accelerators and %d CPUs, the graph has %d and %d",
			len(a.Accelerators), len(a.CPUs), g.Accelerators, g.CPUs)
	}
	index := make(map[int]int, len(g.IDs))
	for i, id := range g.IDs {
		index[id] = i
	}
	dev := make([]int, len(g.Nodes))
	for i := range dev {
		dev[i] = -1
	}
	put := func(lists [][]int, base int) error {
		for d, ids := range lists {
			for _, id := range ids {
				v, ok := index[id]
				if !ok {
					return fmt.Errorf("unknown node id %d", id)
				}
				if dev[v] >= 0 {
					return fmt.Errorf("node id %d on two devices", id)
				}
				dev[v] = base + d
			}
		}
		return nil
	}
	if err := put(a.Accelerators, 0); err != nil {
		return nil, err
	}
	if err := put(a.CPUs, g.Accelerators); err != nil {
		return nil, err
	}
	var missing []int
	for v, d := range dev {
		if d < 0 {
			missing = append(missing, g.IDs[v])
		}
	}
	if len(missing) > 0 {
		sort.Ints(missing)
		return nil, fmt.Errorf("%d nodes on no device (first id %d)", len(missing), missing[0])
	}
	return NewSplit(g, dev)
}

// flag01 decodes the published files' flags, which the files write as 0/1 or as
// false/true.
func flag01(raw json.RawMessage, x *float64) error {
	if strictjson.Type(raw) == "a boolean" {
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return err
		}
		*x = 0
		if b {
			*x = 1
		}
		return nil
	}
	if err := strictjson.Float(raw, x); err != nil {
		return fmt.Errorf("want 0, 1, false or true")
	}
	return nil
}

// LoadAssignment reads the split in an expert file at path
// (ParseAssignment) and places it on g (Assignment.Split). A file that
// cannot be read returns the os error (it names the path); a bad file or
// a split g cannot take, an error "path: reason".
func LoadAssignment(path string, g *Graph) (*Split, error) {
	data, err := limits.ReadFile(path, limits.FileBytes)
	if err != nil {
		return nil, err
	}
	a, err := ParseAssignment(data)
	var s *Split
	if err == nil {
		s, err = a.Split(g)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return s, nil
}
