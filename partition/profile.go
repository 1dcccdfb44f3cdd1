package partition

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tessel-pp/tessel/internal/strictjson"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/profile"
	"github.com/tessel-pp/tessel/quantity"
)

// The layer profile is tessel's own model file, for users (README, "Layer
// profile"):
//
//	{
//	  "name": "gpt-like",
//	  "devices": 4,
//	  "memory": 24,
//	  "layers": [
//	    {"name": "embed", "forward": 3.4, "backward": 6.8, "params": 6, "activations": 1},
//	    {"name": "block1", "forward": 1, "input": 1, "weight": 1, "params": 2, "activations": 1, "comm": 0.05}
//	  ],
//	  "edges": [["embed", "block1"]]
//	}
//
// "layers" is required; a layer needs "name" and "forward" > 0. For
// training, every layer has "backward", or "input" and "weight" (the
// backward split into the gradients for inputs and for weights), never
// both. "params" (memory that stays: weights, gradients, optimizer state)
// and "activations" (what one micro-batch stashes until its backward) are
// in any unit, the unit of "memory", the per-accelerator cap (0 or absent:
// none). "comm" is the time to move the layer's output (and its gradient)
// to another device. "edges" default to a chain in the order given. The
// file is strict like a placement file.
//
// Memory in bytes (one memory model from the profile to the schedule):
// "device_bytes" at the top is each accelerator's memory; a layer then
// gives "param_bytes" (its weights and their gradients) and
// "optimizer_bytes" (the optimizer's state), held for good by the device
// that runs it, "activation_bytes" (what one micro-batch stashes until
// its backward) and "checkpoint_bytes" (what a recomputed micro-batch
// keeps instead: the layer's input; at most "activation_bytes"). With
// "device_bytes" the byte fields replace "params", "activations" and
// "memory", which must then be absent; without it no layer may give a
// byte field. "host_bandwidth" (with "device_bytes") is the bytes an
// accelerator moves to or from host memory per unit of the profile's
// time: it gives every forward block an offload time, its activation
// over the bandwidth (OptPipe's offload and reload).
//
// Measured (tessel profile, package profile): "profile" at the top says
// how the times were measured (profile.Meta); a layer may give
// "output_bytes" (what crosses to the next layer) and "peak_bytes" (its
// peak memory, CUDA), both with "device_bytes", and "spread" (the 10th
// and 90th percentile of each pass's time). "calibration" at the top
// (profile.Calibration) corrects the times as they are read: each pass
// scaled, every layer's "comm" longer by the transfer time, and every
// block of a placement longer by the time per action.

// ParseProfile reads a layer profile.
func ParseProfile(data []byte) (*Graph, error) {
	raw, err := strictjson.Top(data, "model object")
	if err != nil {
		return nil, err
	}
	return decodeProfile(raw)
}

type profileLayer struct {
	name                             string
	forward, backward, input, weight float64
	hasBackward, hasInput, hasWeight bool
	params, activations, comm        float64
	hasUnits                         bool // "params" or "activations"
	bytes                            []string
	paramBytes, optimizerBytes       float64
	activationBytes, checkpointBytes float64
	outputBytes, peakBytes           float64
	spread                           profile.Spread
	// Per-device costs (docs/heterogeneous.md): the roofline's FLOPs and
	// bytes moved per pass, times per device type, and the sizes of the
	// output and the gradients in the cluster links' unit.
	flops, memAccess, bwdFLOPs, bwdMemAccess float64
	hasBwdFLOPs, hasBwdMemAccess             bool
	deviceTimes                              map[string][2]float64
	outputSize, gradSize                     float64
	hasOutputSize, hasGradSize               bool
}

func decodeProfile(raw json.RawMessage) (*Graph, error) {
	g := &Graph{}
	var layers, edges []json.RawMessage
	hasEdges, hasMemory := false, false
	deviceBytes := 0.0
	err := strictjson.Object(raw, []strictjson.Field{
		{Name: "name", Decode: func(v json.RawMessage) error { return strictjson.String(v, &g.Name) }},
		{Name: "devices", Decode: func(v json.RawMessage) error { return strictjson.Int(v, &g.Accelerators) }},
		{Name: "memory", Decode: func(v json.RawMessage) error { hasMemory = true; return strictjson.Float(v, &g.Memory) }},
		{Name: "device_bytes", Decode: func(v json.RawMessage) error { g.Bytes = true; return strictjson.Float(v, &deviceBytes) }},
		{Name: "host_bandwidth", Decode: func(v json.RawMessage) error { return strictjson.Float(v, &g.HostBandwidth) }},
		{Name: "layers", Required: true, Decode: func(v json.RawMessage) error { return strictjson.Array(v, &layers) }},
		{Name: "edges", Decode: func(v json.RawMessage) error { hasEdges = true; return strictjson.Array(v, &edges) }},
		{Name: "time_unit", Decode: func(v json.RawMessage) error { return strictjson.String(v, &g.TimeUnit) }},
		{Name: "memory_unit", Decode: func(v json.RawMessage) error { return strictjson.String(v, &g.MemoryUnit) }},
		{Name: "profile", Decode: func(v json.RawMessage) (err error) { g.Profile, err = profile.DecodeMeta(v); return err }},
		{Name: "calibration", Decode: func(v json.RawMessage) (err error) { g.Calibration, err = profile.DecodeCalibration(v); return err }},
	})
	if err != nil {
		return nil, err
	}
	if g.Profile != nil {
		// A measured file's times are in the profile's unit (ms): the
		// file states it there, and its reports print it.
		switch {
		case g.TimeUnit == "":
			g.TimeUnit = g.Profile.TimeUnit
		case g.TimeUnit != g.Profile.TimeUnit:
			return nil, fmt.Errorf("field \"time_unit\": %q, but \"profile\" says its times are in %s", g.TimeUnit, g.Profile.TimeUnit)
		}
	}
	if g.TimeUnit != "" {
		if _, err := quantity.ParseTime(g.TimeUnit); err != nil {
			return nil, fmt.Errorf("field \"time_unit\": %w", err)
		}
	}
	if g.MemoryUnit != "" {
		if _, err := quantity.ParseMemory(g.MemoryUnit); err != nil {
			return nil, fmt.Errorf("field \"memory_unit\": %w", err)
		}
		if g.Bytes {
			return nil, fmt.Errorf("field \"memory_unit\": a profile in bytes (\"device_bytes\") is in bytes: give no memory unit")
		}
	}
	if err := g.checkProfileHeader(hasMemory, deviceBytes); err != nil {
		return nil, err
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("field \"layers\": no layers")
	}
	ls, index, err := decodeLayers(layers, g.Bytes)
	if err != nil {
		return nil, err
	}
	if c := g.Calibration; c != nil {
		// The measured corrections (profile.Calibration), applied as
		// the file is read so that every split and schedule sees them.
		for i := range ls {
			l := &ls[i]
			l.forward *= c.ScaleOf("forward")
			l.backward *= c.ScaleOf("backward")
			l.input *= c.ScaleOf("input")
			l.weight *= c.ScaleOf("weight")
			l.comm += c.Transfer
		}
		g.ActionOverhead = c.ActionOverhead
	}
	if slices.ContainsFunc(ls, func(l profileLayer) bool { return l.spread != nil }) {
		for _, l := range ls {
			g.Spreads = append(g.Spreads, l.spread)
		}
	}
	training := ls[0].hasBackward || ls[0].hasInput
	for i, l := range ls {
		if (l.hasBackward || l.hasInput) != training {
			what := "has no backward time, unlike"
			if !training {
				what = "has a backward time, unlike"
			}
			return nil, fmt.Errorf("layers[%d] (%q) %s layers[0] (%q)", i, l.name, what, ls[0].name)
		}
	}
	deps, err := profileDeps(len(ls), hasEdges, edges, index)
	if err != nil {
		return nil, err
	}
	g.addLayers(ls, deps, training)
	devices := g.Accelerators
	if devices == 0 {
		g.Accelerators = 1 // validated with one device; the caller sets the count
	}
	if err := g.Validate(); err != nil {
		return nil, err
	}
	g.Accelerators = devices
	return g, nil
}

// checkProfileHeader checks the profile's fields besides its layers and
// edges, and sets the memory cap in bytes where the profile is in bytes.
func (g *Graph) checkProfileHeader(hasMemory bool, deviceBytes float64) error {
	if g.Accelerators < 0 {
		return fmt.Errorf("field \"devices\": want ≥ 0, got %d", g.Accelerators)
	}
	if g.Memory < 0 {
		return fmt.Errorf("field \"memory\": want ≥ 0, got %v", g.Memory)
	}
	if g.Bytes {
		if !(deviceBytes > 0) || math.IsInf(deviceBytes, 0) {
			return fmt.Errorf("field \"device_bytes\": want a finite number > 0, got %v", deviceBytes)
		}
		if hasMemory {
			return fmt.Errorf("field \"memory\": give \"device_bytes\" or \"memory\", not both")
		}
		g.Memory = deviceBytes
	}
	if g.HostBandwidth != 0 && (!g.Bytes || !(g.HostBandwidth > 0) || math.IsInf(g.HostBandwidth, 0)) {
		if !g.Bytes {
			return fmt.Errorf("field \"host_bandwidth\": needs \"device_bytes\" (activations in bytes)")
		}
		return fmt.Errorf("field \"host_bandwidth\": want a finite number > 0, got %v", g.HostBandwidth)
	}
	if err := limits.CheckName("model name", g.Name); err != nil {
		return fmt.Errorf("field \"name\": %w", err)
	}
	return nil
}

// decodeLayers decodes and checks the profile's layers; index maps a
// layer's name to its position.
func decodeLayers(layers []json.RawMessage, bytes bool) (ls []profileLayer, index map[string]int, err error) {
	if err := limits.Check("layers", len(layers), limits.Layers); err != nil {
		return nil, nil, fmt.Errorf("field \"layers\": %w", err)
	}
	ls = make([]profileLayer, len(layers))
	index = map[string]int{}
	for i, v := range layers {
		l := &ls[i]
		err := strictjson.Object(v, l.fields())
		if err == nil {
			err = limits.CheckName("name", l.name)
		}
		if err == nil {
			err = l.check(bytes)
		}
		if err != nil {
			var peek struct{ Name string }
			_ = json.Unmarshal(v, &peek)
			if peek.Name != "" {
				return nil, nil, fmt.Errorf("layers[%d] (%q): %w", i, peek.Name, err)
			}
			return nil, nil, fmt.Errorf("layers[%d]: %w", i, err)
		}
		if j, dup := index[l.name]; dup {
			return nil, nil, fmt.Errorf("layers[%d]: name %q already used by layers[%d]", i, l.name, j)
		}
		index[l.name] = i
	}
	return ls, index, nil
}

// fields are the fields of a layer, decoded into l.
func (l *profileLayer) fields() []strictjson.Field {
	return []strictjson.Field{
		{Name: "name", Required: true, Decode: func(x json.RawMessage) error { return strictjson.String(x, &l.name) }},
		{Name: "forward", Required: true, Decode: func(x json.RawMessage) error { return strictjson.Float(x, &l.forward) }},
		{Name: "backward", Decode: func(x json.RawMessage) error { l.hasBackward = true; return strictjson.Float(x, &l.backward) }},
		{Name: "input", Decode: func(x json.RawMessage) error { l.hasInput = true; return strictjson.Float(x, &l.input) }},
		{Name: "weight", Decode: func(x json.RawMessage) error { l.hasWeight = true; return strictjson.Float(x, &l.weight) }},
		{Name: "params", Decode: func(x json.RawMessage) error { l.hasUnits = true; return strictjson.Float(x, &l.params) }},
		{Name: "activations", Decode: func(x json.RawMessage) error { l.hasUnits = true; return strictjson.Float(x, &l.activations) }},
		{Name: "comm", Decode: func(x json.RawMessage) error { return strictjson.Float(x, &l.comm) }},
		l.byteField("param_bytes", &l.paramBytes),
		l.byteField("optimizer_bytes", &l.optimizerBytes),
		l.byteField("activation_bytes", &l.activationBytes),
		l.byteField("checkpoint_bytes", &l.checkpointBytes),
		l.byteField("output_bytes", &l.outputBytes),
		l.byteField("peak_bytes", &l.peakBytes),
		{Name: "spread", Decode: func(x json.RawMessage) (err error) { l.spread, err = profile.DecodeSpread(x); return err }},
		{Name: "flops", Decode: func(x json.RawMessage) error { return strictjson.Float(x, &l.flops) }},
		{Name: "memory_access", Decode: func(x json.RawMessage) error { return strictjson.Float(x, &l.memAccess) }},
		{Name: "backward_flops", Decode: func(x json.RawMessage) error { l.hasBwdFLOPs = true; return strictjson.Float(x, &l.bwdFLOPs) }},
		{Name: "backward_memory_access", Decode: func(x json.RawMessage) error {
			l.hasBwdMemAccess = true
			return strictjson.Float(x, &l.bwdMemAccess)
		}},
		{Name: "device_times", Decode: l.decodeDeviceTimes},
		{Name: "output_size", Decode: func(x json.RawMessage) error { l.hasOutputSize = true; return strictjson.Float(x, &l.outputSize) }},
		{Name: "grad_size", Decode: func(x json.RawMessage) error { l.hasGradSize = true; return strictjson.Float(x, &l.gradSize) }},
	}
}

// profileDeps are the dependencies between layers: the edges given, or a
// chain in file order without "edges".
func profileDeps(n int, hasEdges bool, edges []json.RawMessage, index map[string]int) ([][2]int, error) {
	var deps [][2]int
	if !hasEdges {
		for i := 1; i < n; i++ {
			deps = append(deps, [2]int{i - 1, i})
		}
	}
	for k, v := range edges {
		var ends []json.RawMessage
		if err := strictjson.Array(v, &ends); err != nil {
			return nil, fmt.Errorf("edges[%d]: %w", k, err)
		}
		if len(ends) != 2 {
			return nil, fmt.Errorf("edges[%d]: want [from, to], got %d names", k, len(ends))
		}
		var d [2]int
		for e, ev := range ends {
			var name string
			if err := strictjson.String(ev, &name); err != nil {
				return nil, fmt.Errorf("edges[%d][%d]: %w", k, e, err)
			}
			i, ok := index[name]
			if !ok {
				return nil, fmt.Errorf("edges[%d]: unknown layer %q", k, name)
			}
			d[e] = i
		}
		deps = append(deps, d)
	}
	return deps, nil
}

// addLayers adds one forward node per layer (0..n-1) and, for training,
// one backward node (n..2n-1) of the same colour class, with the edges
// mirrored and each forward feeding its own backward (the stashed
// activations).
func (g *Graph) addLayers(ls []profileLayer, deps [][2]int, training bool) {
	n := len(ls)
	for i, l := range ls {
		static, act := l.params, l.activations
		if g.Bytes {
			static, act = l.paramBytes+l.optimizerBytes, l.activationBytes
		}
		g.Nodes = append(g.Nodes, Node{Name: l.name, Acc: l.forward, CPU: l.forward, Size: static + act, Comm: l.comm, Class: i, Layer: i,
			FLOPs: l.flops, MemoryAccess: l.memAccess, TypeTimes: l.typeTimes(0)})
		out, grad := 1.0, l.params
		if g.Bytes {
			grad = l.paramBytes
		}
		if l.hasOutputSize {
			out = l.outputSize
		}
		if l.hasGradSize {
			grad = l.gradSize
		}
		g.OutputSizes = append(g.OutputSizes, out)
		g.GradSizes = append(g.GradSizes, grad)
		g.Activations = append(g.Activations, act)
		g.Static = append(g.Static, static)
		g.Checkpoints = append(g.Checkpoints, l.checkpointBytes)
	}
	if training {
		for i, l := range ls {
			b := l.backward
			if l.hasInput {
				b = l.input + l.weight
			}
			bf, bm := 2*l.flops, 2*l.memAccess
			if l.hasBwdFLOPs {
				bf = l.bwdFLOPs
			}
			if l.hasBwdMemAccess {
				bm = l.bwdMemAccess
			}
			g.Nodes = append(g.Nodes, Node{Name: l.name, Acc: b, CPU: b, Comm: l.comm, Backward: true, Class: i, Input: l.input, Weight: l.weight, Layer: i,
				FLOPs: bf, MemoryAccess: bm, TypeTimes: l.typeTimes(1)})
			g.Activations = append(g.Activations, 0)
			g.Static = append(g.Static, 0)
			g.Checkpoints = append(g.Checkpoints, 0)
		}
	}
	g.Edges = append(g.Edges, deps...)
	if training {
		for _, d := range deps {
			g.Edges = append(g.Edges, [2]int{n + d[1], n + d[0]})
		}
		for i := range n {
			g.Edges = append(g.Edges, [2]int{i, n + i})
		}
	}
}

// byteField decodes one of a layer's byte fields.
func (l *profileLayer) byteField(name string, v *float64) strictjson.Field {
	return strictjson.Field{Name: name, Decode: func(x json.RawMessage) error {
		l.bytes = append(l.bytes, name)
		return strictjson.Float(x, v)
	}}
}

func (l *profileLayer) check(bytes bool) error {
	if l.name == "" {
		return fmt.Errorf("empty name")
	}
	if !bytes && len(l.bytes) > 0 {
		return fmt.Errorf("field %q: byte sizes need \"device_bytes\" at the top of the profile", l.bytes[0])
	}
	if bytes && l.hasUnits {
		return fmt.Errorf("\"params\" and \"activations\" do not go with \"device_bytes\": give \"param_bytes\", \"optimizer_bytes\" and \"activation_bytes\"")
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"param_bytes", l.paramBytes}, {"optimizer_bytes", l.optimizerBytes}, {"activation_bytes", l.activationBytes}, {"checkpoint_bytes", l.checkpointBytes},
		{"output_bytes", l.outputBytes}, {"peak_bytes", l.peakBytes}} {
		if !(x.v >= 0) || math.IsInf(x.v, 0) {
			return fmt.Errorf("%s %v: want a finite number ≥ 0", x.name, x.v)
		}
	}
	if l.checkpointBytes > l.activationBytes {
		return fmt.Errorf("checkpoint_bytes %v: more than activation_bytes %v (a recomputed micro-batch keeps part of the activation)", l.checkpointBytes, l.activationBytes)
	}
	if l.forward <= 0 {
		return fmt.Errorf("forward time %v: want > 0", l.forward)
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"flops", l.flops}, {"memory_access", l.memAccess}, {"backward_flops", l.bwdFLOPs}, {"backward_memory_access", l.bwdMemAccess},
		{"output_size", l.outputSize}, {"grad_size", l.gradSize}} {
		if !(x.v >= 0) || math.IsInf(x.v, 0) {
			return fmt.Errorf("%s %v: want a finite number ≥ 0", x.name, x.v)
		}
	}
	if (l.hasBwdFLOPs || l.hasBwdMemAccess) && l.flops == 0 && l.memAccess == 0 {
		return fmt.Errorf("\"backward_flops\" and \"backward_memory_access\" need \"flops\" or \"memory_access\"")
	}
	for _, name := range sortedKeys(l.deviceTimes) {
		if t := l.deviceTimes[name]; (t[1] > 0) != (l.hasBackward || l.hasInput) {
			if t[1] > 0 {
				return fmt.Errorf("device_times: %q: a backward time for a layer without one", name)
			}
			return fmt.Errorf("device_times: %q: no backward time for a layer with one", name)
		}
	}
	if l.hasInput != l.hasWeight {
		return fmt.Errorf("give both \"input\" and \"weight\", or \"backward\"")
	}
	for _, pass := range sortedKeys(l.spread) {
		if pass == "backward" && !l.hasBackward || (pass == "input" || pass == "weight") && !l.hasInput {
			return fmt.Errorf("spread: %q: the layer has no %s time", pass, pass)
		}
	}
	if l.hasBackward && l.hasInput {
		return fmt.Errorf("give \"backward\" or \"input\" and \"weight\", not both")
	}
	for _, x := range []struct {
		name string
		v    float64
	}{{"backward", l.backward}, {"input", l.input}, {"weight", l.weight}, {"params", l.params}, {"activations", l.activations}, {"comm", l.comm}} {
		if x.v < 0 {
			return fmt.Errorf("%s %v: want ≥ 0", x.name, x.v)
		}
	}
	if l.hasBackward && l.backward == 0 || l.hasInput && l.input+l.weight == 0 {
		return fmt.Errorf("backward time 0: want > 0")
	}
	return nil
}

// Parse reads a model file in either format: a layer profile (an object
// with "layers") or a graph of Tarnawski et al.'s published set (an object with "nodes").
func Parse(data []byte) (*Graph, error) {
	raw, err := strictjson.Top(data, "model object")
	if err != nil {
		return nil, err
	}
	if strictjson.Type(raw) != "an object" {
		return nil, fmt.Errorf("want a model object, got %s", strictjson.Type(raw))
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, strictjson.SyntaxError(data, err)
	}
	_, layers := keys["layers"]
	_, nodes := keys["nodes"]
	switch {
	case layers && !nodes:
		return decodeProfile(raw)
	case nodes && !layers:
		return decodeTarnawski(raw)
	}
	return nil, fmt.Errorf("want a layer profile (with \"layers\") or a graph of Tarnawski et al. (with \"nodes\")")
}

// Load reads the model file at path (see Parse). Errors start with the
// path.
func Load(path string) (*Graph, error) {
	return strictjson.Load(path, Parse)
}

// Overrides change a model's own settings (tessel partition's --devices,
// --cpus and --memory, whose names its errors use).
type Overrides struct {
	Devices int      // accelerators k; 0: the model's
	CPUs    int      // CPU cores ℓ; -1: the model's
	Memory  *float64 // memory cap of one accelerator; nil: the model's
}

// LoadWith reads the model file at path (Load) with o applied and checks
// that the result can be split: it has a device count, CPU cores only
// where the graph has CPU times (Tarnawski et al.'s format), and a finite
// cap ≥ 0. A model without a name takes the file's base name.
func LoadWith(path string, o Overrides) (*Graph, error) {
	g, err := Load(path)
	if err != nil {
		return nil, err
	}
	if o.Devices < 0 {
		return nil, fmt.Errorf("--devices must be at least 1, got %d", o.Devices)
	}
	if o.Devices > 0 {
		g.Accelerators = o.Devices
	}
	if g.Accelerators == 0 {
		return nil, fmt.Errorf("%s: no device count: give --devices or \"devices\" in the model", path)
	}
	if o.CPUs < -1 {
		return nil, fmt.Errorf("--cpus must be at least 0, got %d", o.CPUs)
	}
	if o.CPUs > 0 && g.IDs == nil {
		return nil, fmt.Errorf("%s: a layer profile has no CPU times: --cpus applies to graphs in Tarnawski et al.'s format", path)
	}
	if o.CPUs >= 0 {
		g.CPUs = o.CPUs
	}
	if err := limits.Check("accelerators", g.Accelerators, limits.Devices); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := limits.Check("CPUs", g.CPUs, limits.Devices); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if o.Memory != nil {
		if *o.Memory < 0 || math.IsNaN(*o.Memory) || math.IsInf(*o.Memory, 0) {
			return nil, fmt.Errorf("--memory must be a finite number ≥ 0, got %v", *o.Memory)
		}
		g.Memory = *o.Memory
	}
	if g.Name == "" {
		g.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	return g, nil
}

// decodeDeviceTimes reads a layer's "device_times": per device type (a
// cluster device's "type"), {"forward": f, "backward": b}, the layer's
// times there (b only for training, split between input and weight as the
// layer's own are).
func (l *profileLayer) decodeDeviceTimes(raw json.RawMessage) error {
	if strictjson.Type(raw) != "an object" {
		return fmt.Errorf("want an object of device types, got %s", strictjson.Type(raw))
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return err
	}
	var fields []strictjson.Field
	l.deviceTimes = map[string][2]float64{}
	for _, name := range sortedKeys(keys) {
		fields = append(fields, strictjson.Field{Name: name, Decode: func(v json.RawMessage) error {
			var t [2]float64
			err := strictjson.Object(v, []strictjson.Field{
				{Name: "forward", Required: true, Decode: func(x json.RawMessage) error { return strictjson.Float(x, &t[0]) }},
				{Name: "backward", Decode: func(x json.RawMessage) error { return strictjson.Float(x, &t[1]) }},
			})
			if err != nil {
				return err
			}
			if !(t[0] > 0) || math.IsInf(t[0], 0) || !(t[1] >= 0) || math.IsInf(t[1], 0) {
				return fmt.Errorf("want a finite forward > 0 and backward ≥ 0, got %v and %v", t[0], t[1])
			}
			if name == "" {
				return fmt.Errorf("an empty device type")
			}
			l.deviceTimes[name] = t
			return nil
		}})
	}
	return strictjson.Object(raw, fields)
}

// typeTimes is the layer's time per device type in one pass (0 forward,
// 1 backward); nil without "device_times".
func (l *profileLayer) typeTimes(pass int) map[string]float64 {
	if len(l.deviceTimes) == 0 {
		return nil
	}
	m := make(map[string]float64, len(l.deviceTimes))
	for k, t := range l.deviceTimes {
		m[k] = t[pass]
	}
	return m
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// UnitWarnings are the values of a layer profile that look like another
// unit than the rest: a layer time a thousand times (between 500 and
// 2000 times) shorter or longer than the median layer's of the same pass
// (a layer in seconds among layers in milliseconds), and byte fields
// under a kilobyte (a size in GB given as bytes). Each is one line for
// people; the profile is used as given. Graphs of Tarnawski et al.'s
// set get none.
func UnitWarnings(g *Graph) []string {
	if g.IDs != nil {
		return nil
	}
	unit := g.TimeUnit
	if unit == "" {
		unit = "the profile's unit"
	}
	var out []string
	for _, backward := range []bool{false, true} {
		var ts []float64
		for _, v := range g.Nodes {
			if v.Backward == backward {
				ts = append(ts, v.Acc)
			}
		}
		if len(ts) < 3 {
			continue
		}
		sorted := append([]float64(nil), ts...)
		sort.Float64s(sorted)
		median := sorted[len(sorted)/2]
		pass := "forward"
		if backward {
			pass = "backward"
		}
		for _, v := range g.Nodes {
			if v.Backward != backward || !(v.Acc > 0) {
				continue
			}
			r := median / v.Acc
			switch {
			case r >= 500 && r <= 2000:
				out = append(out, fmt.Sprintf("layer %q: %s %g is %.0f× shorter than the median layer's %g (%s): a time in another unit?", v.Name, pass, v.Acc, r, median, unit))
			case r <= 1.0/500 && r >= 1.0/2000:
				out = append(out, fmt.Sprintf("layer %q: %s %g is %.0f× longer than the median layer's %g (%s): a time in another unit?", v.Name, pass, v.Acc, 1/r, median, unit))
			}
		}
	}
	if g.Bytes {
		if g.Memory > 0 && g.Memory < 1e6 {
			out = append(out, fmt.Sprintf("device_bytes %g: under a megabyte: a memory in GB given as bytes?", g.Memory))
		}
		for i, v := range g.Nodes {
			if v.Backward {
				continue
			}
			for _, x := range []struct {
				name string
				v    float64
			}{{"static (param_bytes + optimizer_bytes)", g.Static[i]}, {"activation_bytes", g.Activations[i]}} {
				if x.v > 0 && x.v < 1e3 {
					out = append(out, fmt.Sprintf("layer %q: %s %g: under a kilobyte: a size in GB or MB given as bytes?", v.Name, x.name, x.v))
				}
			}
		}
	}
	return out
}
