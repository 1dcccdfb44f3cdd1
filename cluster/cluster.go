// Package cluster is the hardware a placement runs on (docs/design.md,
// "Cluster", and docs/formats.md, "Cluster file"): devices with a speed and a memory
// capacity, and links between them with a latency and a time per unit of
// tensor size. Apply turns a placement into the placement as it runs on a
// cluster: every block's time on its devices, every dependency's transfer
// time (placement.Placement.Transfers) and every device's capacity
// (placement.Placement.Capacities). From there on the rest of tessel
// needs no cluster: the one dependency rule (placement's Delay) and the
// one budget rule (placement's Budget) carry it.
//
// A transfer's time never depends on what else crosses the link. With
// QueuedLinks a link carries one transfer at a time, so transfers queue
// (placement's QueuedLinks; how they queue in a schedule is package
// schedule's LinkTimes).
package cluster

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/quantity"
)

// Limits of a cluster file, far beyond any real cluster, that keep every
// time inside placement.MaxTime's range without overflow.
const (
	MinSpeed   = 1e-6
	MaxSpeed   = 1e6
	MaxLatency = placement.MaxTime
	MaxPerUnit = placement.MaxTime
	// MaxMemoryBytes bounds a device's memory in bytes (a petabyte).
	MaxMemoryBytes = 1e15
	// MaxRate bounds a device's peak FLOP rate and memory bandwidth.
	MaxRate = 1e30
	// MaxLinksPerPair bounds the links between two devices.
	MaxLinksPerPair = 16
)

// eps absorbs floating-point error before rounding up: 0.7·10 is
// 7.000000000000001 in float64, and its transfer must take 7, not 8.
const eps = 1e-9

// Device is one device of a cluster.
type Device struct {
	Name   string  // optional, for people
	Speed  float64 // > 0: a block of time t takes ⌈t / Speed⌉ here
	Memory int     // ≥ 0: the device's memory capacity; 0 means unlimited
	// Host, when set, is the device's link to host memory: an offload or
	// a reload of an activation of size z (a block's Activation) takes
	// ⌈Latency + z·PerUnit⌉, at least 1 (the file's "host"; PerUnit is
	// the inverse of the bandwidth).
	Host *Link
	// Switch names the PCIe switch the device reaches the host through:
	// devices with the same non-empty Switch share one host channel
	// (OptPipe eqs 18–19); "" means a channel of its own.
	Switch string
	// MemoryBytes, when > 0, is the device's memory in bytes (the file's
	// "memory_bytes"): tessel plan's memory model takes it, instead of
	// the profile's "device_bytes", as the capacity its stages' state and
	// the schedule's activations share. Memory stays the budget in
	// placement units.
	MemoryBytes float64
	// Type, PeakFLOPs, MemoryBandwidth and Node are for tessel partition
	// and plan with a cluster (docs/heterogeneous.md): the device type a
	// profile's "device_times" name, the peak floating-point operations
	// and the memory bandwidth (bytes) per unit of the profile's time
	// (the roofline of Wu et al., eqs 1–2), and the node the device sits
	// in (tensor parallelism within a node). The file's "type",
	// "peak_flops", "memory_bandwidth" and "node"; zero when absent.
	Type                       string
	PeakFLOPs, MemoryBandwidth float64
	Node                       int
}

// Link is the cost of moving a tensor between two devices: a transfer of
// size z takes ⌈Latency + z·PerUnit⌉.
type Link struct {
	Latency, PerUnit float64
}

// Time is the time a transfer of size z takes on l, rounded up.
func (l Link) Time(z float64) int {
	return ceil(l.Latency + z*l.PerUnit)
}

// Duration is the time a transfer of size z takes on l, not rounded.
func (l Link) Duration(z float64) float64 { return l.Latency + z*l.PerUnit }

// Pair is the link between two devices, both directions. More are the
// pair's other links, where it has several (Wu et al., "Rethinking
// Dynamic Networks and Heterogeneous Computing with Automatic
// Parallelization", §3.1, eq 7: NVLink beside PCIe, two switch ports):
// a transfer takes the fastest for its size, and with QueuedLinks each link
// is a queue of its own and a transfer takes the one where it ends first
// (placement's LinkQueue).
type Pair struct {
	From, To int
	Link
	More []Link
}

// Links is every link of the pair: Link, then More.
func (p Pair) Links() []Link { return append([]Link{p.Link}, p.More...) }

// Time is the time a transfer of size z takes on the pair's fastest
// link for it.
func (p Pair) Time(z float64) int {
	t := p.Link.Time(z)
	for _, l := range p.More {
		t = min(t, l.Time(z))
	}
	return t
}

// NodeLink is the link between any two devices of one node (their
// Device.Node): the file's "links": {"nodes": [...]}, given once per node.
type NodeLink struct {
	Node int
	Link
	More []Link
}

// Duration is the time a transfer of size z takes on the pair's fastest
// link for it, not rounded.
func (p Pair) Duration(z float64) float64 {
	t := p.Link.Duration(z)
	for _, l := range p.More {
		t = min(t, l.Duration(z))
	}
	return t
}

// Cluster is the devices a placement runs on, in the placement's device
// order, and the links between them: Pairs lists the links between two
// devices, Nodes the link within a node for the pairs Pairs does not list,
// and Default every other.
type Cluster struct {
	Devices []Device
	Default Link
	Pairs   []Pair
	Nodes   []NodeLink
	// QueuedLinks: every link, in each direction, carries one transfer
	// at a time (the file's "links": {"channels": true}). Without it
	// transfers overlap freely.
	QueuedLinks bool
	// TimeUnit is the unit of the cluster's times (the file's
	// "time_unit": s, ms, us or ns; package quantity): link latencies and
	// times per unit of size, host links, and the rates peak_flops and
	// memory_bandwidth (per unit of time). "" where the file states none:
	// its times are then in the unit of what it runs (the steps of a
	// placement, the time of a model).
	TimeUnit string
}

// InUnit returns c with its times in unit (one of package quantity's),
// each multiplied by the length of c's own unit over unit's and every
// rate divided by it; c itself is left alone. A cluster without a unit is
// taken to be in unit already. The result states unit.
func (c *Cluster) InUnit(unit string) (*Cluster, error) {
	q := c.Clone()
	q.TimeUnit = unit
	if c.TimeUnit == "" || c.TimeUnit == unit {
		return q, nil
	}
	from, err := quantity.ParseTime(c.TimeUnit)
	if err != nil {
		return nil, err
	}
	to, err := quantity.ParseTime(unit)
	if err != nil {
		return nil, err
	}
	q.Scale(from / to)
	return q, q.Validate()
}

// Scale multiplies every time of c by f > 0 (link latencies and times per
// unit of size, host links) and divides every rate by it (peak_flops,
// memory_bandwidth): c in a unit f times shorter.
func (c *Cluster) Scale(f float64) {
	scale := func(l *Link) { l.Latency, l.PerUnit = l.Latency*f, l.PerUnit*f }
	scale(&c.Default)
	for n := range c.Pairs {
		scale(&c.Pairs[n].Link)
		for k := range c.Pairs[n].More {
			scale(&c.Pairs[n].More[k])
		}
	}
	for n := range c.Nodes {
		scale(&c.Nodes[n].Link)
		for k := range c.Nodes[n].More {
			scale(&c.Nodes[n].More[k])
		}
	}
	for d := range c.Devices {
		dev := &c.Devices[d]
		if dev.Host != nil {
			scale(dev.Host)
		}
		dev.PeakFLOPs, dev.MemoryBandwidth = dev.PeakFLOPs/f, dev.MemoryBandwidth/f
	}
}

// Uniform is a cluster of n devices of speed 1, no capacity of their own,
// and every link free.
func Uniform(n int) *Cluster {
	c := &Cluster{Devices: make([]Device, n)}
	for d := range c.Devices {
		c.Devices[d].Speed = 1
	}
	return c
}

// Validate checks the cluster on its own: at least one device, speeds in
// MinSpeed..MaxSpeed, memories in 0..placement.MaxMemory, latencies and
// per-unit times finite and in 0..MaxLatency and 0..MaxPerUnit, pairs
// between two distinct devices in range, each pair of devices listed once
// (in either direction). The error is one line naming the item.
func (c *Cluster) Validate() error {
	if len(c.Devices) < 1 || len(c.Devices) > placement.MaxDevices {
		return fmt.Errorf("cluster: devices: want 1..%d devices, got %d", placement.MaxDevices, len(c.Devices))
	}
	for d, dev := range c.Devices {
		if err := limits.CheckName("device name", dev.Name); err != nil {
			return fmt.Errorf("cluster: device %d: %w", d, err)
		}
		if !(dev.Speed >= MinSpeed && dev.Speed <= MaxSpeed) {
			return fmt.Errorf("cluster: %s: speed must be in %g..%g, got %g", deviceName(d, dev.Name), MinSpeed, MaxSpeed, dev.Speed)
		}
		if dev.Memory < 0 || dev.Memory > placement.MaxMemory {
			return fmt.Errorf("cluster: %s: memory must be in 0..%d (0: unlimited), got %d", deviceName(d, dev.Name), placement.MaxMemory, dev.Memory)
		}
		if !(dev.MemoryBytes >= 0 && dev.MemoryBytes <= MaxMemoryBytes) {
			return fmt.Errorf("cluster: %s: memory_bytes must be in 0..%g (0: none), got %g", deviceName(d, dev.Name), float64(MaxMemoryBytes), dev.MemoryBytes)
		}
		if !(dev.PeakFLOPs >= 0 && dev.PeakFLOPs <= MaxRate) || !(dev.MemoryBandwidth >= 0 && dev.MemoryBandwidth <= MaxRate) {
			return fmt.Errorf("cluster: %s: peak_flops and memory_bandwidth must be in 0..%g (0: not given), got %g and %g", deviceName(d, dev.Name), float64(MaxRate), dev.PeakFLOPs, dev.MemoryBandwidth)
		}
		if dev.Node < 0 || dev.Node >= placement.MaxDevices {
			return fmt.Errorf("cluster: %s: node must be in 0..%d, got %d", deviceName(d, dev.Name), placement.MaxDevices-1, dev.Node)
		}
		if dev.Host != nil {
			if err := checkLink(*dev.Host); err != nil {
				return fmt.Errorf("cluster: %s: host: %w", deviceName(d, dev.Name), err)
			}
		}
	}
	if c.TimeUnit != "" {
		if _, err := quantity.ParseTime(c.TimeUnit); err != nil {
			return fmt.Errorf("cluster: time_unit: %w", err)
		}
	}
	if err := checkLink(c.Default); err != nil {
		return fmt.Errorf("cluster: links: default: %w", err)
	}
	seen := map[[2]int]int{}
	for n, pr := range c.Pairs {
		name := fmt.Sprintf("cluster: links: pairs[%d]", n)
		for _, d := range []int{pr.From, pr.To} {
			if d < 0 || d >= len(c.Devices) {
				return fmt.Errorf("%s: device %d out of range 0..%d", name, d, len(c.Devices)-1)
			}
		}
		if pr.From == pr.To {
			return fmt.Errorf("%s: a link from device %d to itself", name, pr.From)
		}
		key := [2]int{min(pr.From, pr.To), max(pr.From, pr.To)}
		if m, dup := seen[key]; dup {
			return fmt.Errorf("%s: devices %d and %d already linked by pairs[%d]", name, key[0], key[1], m)
		}
		seen[key] = n
		if err := checkLink(pr.Link); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if len(pr.More) >= MaxLinksPerPair {
			return fmt.Errorf("%s: want at most %d links, got %d", name, MaxLinksPerPair, len(pr.More)+1)
		}
		for k, l := range pr.More {
			if err := checkLink(l); err != nil {
				return fmt.Errorf("%s: links[%d]: %w", name, k+1, err)
			}
		}
	}
	on := map[int]bool{}
	for _, d := range c.Devices {
		on[d.Node] = true
	}
	seenNode := map[int]int{}
	for k, n := range c.Nodes {
		name := fmt.Sprintf("cluster: links: nodes[%d]", k)
		if m, dup := seenNode[n.Node]; dup {
			return fmt.Errorf("%s: node %d already given by nodes[%d]", name, n.Node, m)
		}
		seenNode[n.Node] = k
		if !on[n.Node] {
			return fmt.Errorf("%s: no device is on node %d", name, n.Node)
		}
		if len(n.More) >= MaxLinksPerPair {
			return fmt.Errorf("%s: want at most %d links, got %d", name, MaxLinksPerPair, len(n.More)+1)
		}
		for i, l := range append([]Link{n.Link}, n.More...) {
			if err := checkLink(l); err != nil {
				if len(n.More) == 0 {
					return fmt.Errorf("%s: %w", name, err)
				}
				return fmt.Errorf("%s: links[%d]: %w", name, i, err)
			}
		}
	}
	return nil
}

func checkLink(l Link) error {
	if !(l.Latency >= 0 && l.Latency <= MaxLatency) {
		return fmt.Errorf("latency must be in 0..%d, got %g", MaxLatency, l.Latency)
	}
	if !(l.PerUnit >= 0 && l.PerUnit <= MaxPerUnit) {
		return fmt.Errorf("per_unit must be in 0..%d, got %g", MaxPerUnit, l.PerUnit)
	}
	return nil
}

func deviceName(d int, name string) string {
	if name == "" {
		return fmt.Sprintf("device %d", d)
	}
	return fmt.Sprintf("device %d (%q)", d, name)
}

// Link returns the link between devices a and b (a ≠ b): their pair's
// (its first, where it has several), or Default.
func (c *Cluster) Link(a, b int) Link {
	return c.Pair(a, b).Link
}

// Pair returns the pair of devices a and b (a ≠ b), every link of it:
// the one listed, else their node's where they share a node that has one
// (Nodes), else Default's alone.
func (c *Cluster) Pair(a, b int) Pair {
	for _, pr := range c.Pairs {
		if pr.From == a && pr.To == b || pr.From == b && pr.To == a {
			return pr
		}
	}
	if len(c.Nodes) > 0 && a >= 0 && b >= 0 && a < len(c.Devices) && b < len(c.Devices) && c.Devices[a].Node == c.Devices[b].Node {
		for _, n := range c.Nodes {
			if n.Node == c.Devices[a].Node {
				return Pair{From: a, To: b, Link: n.Link, More: n.More}
			}
		}
	}
	return Pair{From: a, To: b, Link: c.Default}
}

// LinksUniform says whether every two devices are linked alike (Default).
func (c *Cluster) LinksUniform() bool { return len(c.Pairs) == 0 && len(c.Nodes) == 0 }

// Transfer is the time a tensor of size z takes from the devices of one
// block to those of another: 0 when they share a device, else the largest
// over the pairs of devices, one from each group.
func (c *Cluster) Transfer(from, to []int, z float64) int {
	worst := 0
	for _, a := range from {
		for _, b := range to {
			if a == b {
				return 0
			}
			worst = max(worst, c.Pair(a, b).Time(z))
		}
	}
	return worst
}

// BlockTime is the time of a block of time t on a device group: the
// slowest member's ⌈t / speed⌉, at least 1.
func (c *Cluster) BlockTime(t int, devices []int) int {
	slow := math.Inf(1)
	for _, d := range devices {
		slow = min(slow, c.Devices[d].Speed)
	}
	return max(1, ceil(float64(t)/slow))
}

// ceil rounds x up, forgiving floating-point error below eps; never below
// 0, and at most 1<<40 (past every limit, so that the callers' range
// checks refuse it, where converting a larger float would overflow).
func ceil(x float64) int {
	if !(x < 1<<40) {
		return 1 << 40
	}
	return max(0, int(math.Ceil(x-eps)))
}

// Apply returns p as it runs on c (p itself is left alone): every block's
// time is BlockTime on its devices, and p's Timing is c's: every
// dependency between blocks on different devices gets its transfer time
// (Transfer, with the dependency's size), and devices with a memory get
// it as their capacity. The name stays. The cluster must have as many
// devices as p; a time past placement.MaxTime is an error naming the
// block or dependency. Applied to a placement that already runs on a
// cluster, it replaces that one's Timing but scales the times again:
// apply a cluster to the placement as given. With QueuedLinks, a
// dependency between blocks on one device each whose pair has several
// links gets each link's time (placement's Lanes): each link is a queue
// of its own.
func (c *Cluster) Apply(p *placement.Placement) (*placement.Placement, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if len(c.Devices) != p.Devices {
		return nil, fmt.Errorf("cluster of %d devices for placement %q of %d", len(c.Devices), p.Name, p.Devices)
	}
	c, err := c.inSteps(p)
	if err != nil {
		return nil, err
	}
	return c.timed(p)
}

// timed is Apply of p on c, c in p's steps: the one place a placement's
// Timing is set.
func (c *Cluster) timed(p *placement.Placement) (*placement.Placement, error) {
	var (
		q   *placement.Placement
		t   placement.Timing
		err error
	)
	if p.Open() {
		q, t, err = c.applyOpen(p)
	} else {
		q, t, err = c.applyPinned(p)
	}
	if err != nil {
		return nil, err
	}
	q.Timing = t
	if err := q.Validate(); err != nil {
		return nil, err
	}
	return q, nil
}

// applyPinned is Apply of a placement whose blocks have their devices:
// p's blocks with their times on c, and its timing.
func (c *Cluster) applyPinned(p *placement.Placement) (*placement.Placement, placement.Timing, error) {
	var t placement.Timing
	q := p.Clone()
	for i := range q.Blocks {
		b := &q.Blocks[i]
		bt := c.BlockTime(b.Time, b.Devices)
		if bt > placement.MaxTime {
			return nil, t, fmt.Errorf("placement %q: block %q: time %d on the cluster is more than %d", p.Name, b.ID, bt, placement.MaxTime)
		}
		b.Time = bt
	}
	for _, d := range q.Deps {
		from, to := q.Blocks[d.From], q.Blocks[d.To]
		x := c.Transfer(from.Devices, to.Devices, q.Size(d))
		if x > placement.MaxTime {
			return nil, t, fmt.Errorf("placement %q: dependency %s -> %s: transfer time %d on the cluster is more than %d", p.Name, from.ID, to.ID, x, placement.MaxTime)
		}
		if x > 0 {
			if t.Transfers == nil {
				t.Transfers = map[placement.Dep]int{}
			}
			t.Transfers[d] = x
		}
	}
	t.QueuedLinks = c.QueuedLinks
	if c.QueuedLinks {
		for _, d := range q.Deps {
			// Transfers holds no dependency within a device.
			from, to := q.Blocks[d.From].Devices, q.Blocks[d.To].Devices
			if len(from) != 1 || len(to) != 1 || from[0] == to[0] || t.Transfers[d] == 0 {
				continue
			}
			pr := c.Pair(from[0], to[0])
			if len(pr.More) == 0 {
				continue
			}
			ts := make([]int, 0, len(pr.More)+1)
			for _, l := range pr.Links() {
				ts = append(ts, l.Time(q.Size(d)))
			}
			if t.Lanes == nil {
				t.Lanes = map[placement.Dep][]int{}
			}
			t.Lanes[d] = ts
		}
	}
	if err := c.applyDevices(q, &t); err != nil {
		return nil, t, err
	}
	if p.HasCandidates() {
		// A chosen placement keeps what every other choice costs, so
		// that a search may choose again (placement's Reopen).
		open, err := c.timed(p.Reopen())
		if err != nil {
			return nil, t, err
		}
		t.Costs = open.Costs
	}
	return q, t, nil
}

// inSteps is c with its times in p's steps: a cluster in a named unit,
// or without one on a placement that says what its steps are (its
// Units: the cluster is then in the model's unit), is converted; a
// cluster without a unit on a placement without one is in steps already.
func (c *Cluster) inSteps(p *placement.Placement) (*Cluster, error) {
	u := p.Units
	switch {
	case !u.HasTime() && c.TimeUnit == "":
		return c, nil
	case !u.HasTime():
		return nil, fmt.Errorf("cluster in %s for placement %q, whose times are steps of no stated length: give the cluster without \"time_unit\" (its times in steps), or the placement's \"units\"", c.TimeUnit, p.Name)
	case c.TimeUnit != "" && u.Time == "":
		return nil, fmt.Errorf("cluster in %s for placement %q, whose model states no time unit: give the cluster without \"time_unit\" (in the model's unit)", c.TimeUnit, p.Name)
	}
	f := 1 / u.Step
	if c.TimeUnit != "" && c.TimeUnit != u.Time {
		from, _ := quantity.TimeSeconds(c.TimeUnit)
		to, _ := quantity.TimeSeconds(u.Time)
		f *= from / to
	}
	q := c.Clone()
	q.Scale(f)
	return q, nil
}

// applyOpen is Apply of a placement with blocks still to choose
// (placement's Open): times and transfers are set for every choice
// (placement's Costs), so that placement.Choose(c.Apply(p), choice) is
// c.Apply(placement.Choose(p, choice)). Block times stay as given; the
// capacities, link queues and host channels are the cluster's as for a
// pinned placement. A block with candidates cannot declare an activation
// size (its offload time would depend on the choice).
func (c *Cluster) applyOpen(p *placement.Placement) (*placement.Placement, placement.Timing, error) {
	var t placement.Timing
	q := p.Clone()
	costs := &placement.Costs{Times: make([][]int, len(q.Blocks)), Transfers: map[placement.Dep][][]int{}}
	for i, b := range q.Blocks {
		if len(b.Candidates) > 0 && b.Activation > 0 {
			return nil, t, fmt.Errorf("placement %q: block %q: an activation size with candidates is not supported (give \"offload\")", p.Name, b.ID)
		}
		for _, g := range q.DeviceOptions(i) {
			bt := c.BlockTime(b.Time, g)
			if bt > placement.MaxTime {
				return nil, t, fmt.Errorf("placement %q: block %q: time %d on devices %v of the cluster is more than %d", p.Name, b.ID, bt, g, placement.MaxTime)
			}
			costs.Times[i] = append(costs.Times[i], bt)
		}
		if len(b.Candidates) == 0 {
			q.Blocks[i].Time = costs.Times[i][0]
		}
	}
	for _, d := range q.Deps {
		from, to := q.DeviceOptions(d.From), q.DeviceOptions(d.To)
		m := make([][]int, len(from))
		any := false
		for a, fg := range from {
			m[a] = make([]int, len(to))
			for b, tg := range to {
				x := c.Transfer(fg, tg, q.Size(d))
				if x > placement.MaxTime {
					return nil, t, fmt.Errorf("placement %q: dependency %s -> %s: transfer time %d on the cluster is more than %d", p.Name, q.Blocks[d.From].ID, q.Blocks[d.To].ID, x, placement.MaxTime)
				}
				m[a][b] = x
				any = any || x > 0
			}
		}
		if any {
			costs.Transfers[d] = m
		}
	}
	t.Costs = costs
	t.QueuedLinks = c.QueuedLinks
	if err := c.applyDevices(q, &t); err != nil {
		return nil, t, err
	}
	return q, t, nil
}

// applyDevices gives q, a placement on c, c's host links (applyHost) and
// t its devices' memories as capacities (nil where no device gives one).
func (c *Cluster) applyDevices(q *placement.Placement, t *placement.Timing) error {
	if err := c.applyHost(q, t); err != nil {
		return err
	}
	for d, dev := range c.Devices {
		if dev.Memory > 0 {
			if t.Capacities == nil {
				t.Capacities = make([]int, q.Devices)
			}
			t.Capacities[d] = dev.Memory
		}
	}
	return nil
}

// applyHost sets the offload time of every block of q that declares an
// activation size and whose devices have host links (the slowest link's
// time), and t's host channels from the devices' switches.
func (c *Cluster) applyHost(q *placement.Placement, t *placement.Timing) error {
	for i := range q.Blocks {
		b := &q.Blocks[i]
		if b.Activation <= 0 {
			continue
		}
		ot, linked := 0, false
		for _, d := range b.Devices {
			if h := c.Devices[d].Host; h != nil {
				ot, linked = max(ot, max(1, h.Time(b.Activation))), true
			}
		}
		if !linked {
			continue
		}
		if ot > placement.MaxTime {
			return fmt.Errorf("placement %q: block %q: offload time %d on the cluster is more than %d", q.Name, b.ID, ot, placement.MaxTime)
		}
		b.Offload = ot
	}
	first := map[string]int{}
	for d, dev := range c.Devices {
		if dev.Switch == "" {
			continue
		}
		if t.Switches == nil {
			t.Switches = make([]int, len(c.Devices))
			for x := range t.Switches {
				t.Switches[x] = x
			}
		}
		if f, ok := first[dev.Switch]; ok {
			t.Switches[d] = f
		} else {
			first[dev.Switch] = d
		}
	}
	return nil
}

// Equal reports whether c and o are the same cluster, pairs in the same
// order.
func (c *Cluster) Equal(o *Cluster) bool {
	if c == nil || o == nil {
		return c == o
	}
	if len(c.Devices) != len(o.Devices) || len(c.Pairs) != len(o.Pairs) || c.Default != o.Default || c.QueuedLinks != o.QueuedLinks || c.TimeUnit != o.TimeUnit {
		return false
	}
	for d := range c.Devices {
		a, b := c.Devices[d], o.Devices[d]
		if a.Name != b.Name || a.Speed != b.Speed || a.Memory != b.Memory || a.Switch != b.Switch || a.MemoryBytes != b.MemoryBytes ||
			a.Type != b.Type || a.PeakFLOPs != b.PeakFLOPs || a.MemoryBandwidth != b.MemoryBandwidth || a.Node != b.Node ||
			(a.Host == nil) != (b.Host == nil) || a.Host != nil && *a.Host != *b.Host {
			return false
		}
	}
	for n, a := range c.Pairs {
		b := o.Pairs[n]
		if a.From != b.From || a.To != b.To || a.Link != b.Link || !slices.Equal(a.More, b.More) {
			return false
		}
	}
	if len(c.Nodes) != len(o.Nodes) {
		return false
	}
	for n, a := range c.Nodes {
		b := o.Nodes[n]
		if a.Node != b.Node || a.Link != b.Link || !slices.Equal(a.More, b.More) {
			return false
		}
	}
	return true
}

// Clone returns a deep copy.
func (c *Cluster) Clone() *Cluster {
	q := &Cluster{Devices: append([]Device(nil), c.Devices...), Default: c.Default, Pairs: append([]Pair(nil), c.Pairs...), QueuedLinks: c.QueuedLinks, TimeUnit: c.TimeUnit}
	for n, pr := range q.Pairs {
		q.Pairs[n].More = slices.Clone(pr.More)
	}
	if c.Nodes != nil {
		q.Nodes = append([]NodeLink(nil), c.Nodes...)
		for n, nl := range q.Nodes {
			q.Nodes[n].More = slices.Clone(nl.More)
		}
	}
	for d, dev := range q.Devices {
		if dev.Host != nil {
			h := *dev.Host
			q.Devices[d].Host = &h
		}
	}
	return q
}

// Simple is the cluster of n devices given without a file (tessel's
// --device-speed, --transfer-time and --channels): speeds as ParseSpeeds
// reads them ("": every device speed 1), every link taking latency per
// tensor, carrying one transfer at a time when queued (QueuedLinks).
func Simple(n int, speeds string, latency float64, queued bool) (*Cluster, error) {
	c := Uniform(n)
	if speeds != "" {
		var err error
		if c, err = ParseSpeeds(speeds, n); err != nil {
			return nil, err
		}
	}
	c.Default.Latency = latency
	c.QueuedLinks = queued
	return c, nil
}

// ParseSpeeds reads device speeds written D=S,... (device D of n runs at
// speed S) into a cluster of n devices (Uniform), the others at speed 1.
func ParseSpeeds(s string, n int) (*Cluster, error) {
	c := Uniform(n)
	for _, item := range strings.Split(s, ",") {
		ds, ss, ok := strings.Cut(strings.TrimSpace(item), "=")
		d, derr := strconv.Atoi(ds)
		sp, serr := strconv.ParseFloat(ss, 64)
		if !ok || derr != nil || serr != nil {
			return nil, fmt.Errorf("%q is not D=S (a device and its speed)", item)
		}
		if d < 0 || d >= n {
			return nil, fmt.Errorf("device %d out of range 0..%d", d, n-1)
		}
		if !(sp >= MinSpeed && sp <= MaxSpeed) {
			return nil, fmt.Errorf("device %d: speed must be in %g..%g, got %s", d, MinSpeed, MaxSpeed, ss)
		}
		c.Devices[d].Speed = sp
	}
	return c, nil
}
