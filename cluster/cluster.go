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
// Channels a link carries one transfer at a time, so transfers queue
// (placement's Channels; how they queue in a schedule is package
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

// Pair is the link between two devices, both directions. More are the
// pair's other links, where it has several (Wu et al., "Rethinking
// Dynamic Networks and Heterogeneous Computing with Automatic
// Parallelization", §3.1, eq 7: NVLink beside PCIe, two switch ports):
// a transfer takes the fastest for its size, and with Channels each link
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

// Cluster is the devices a placement runs on, in the placement's device
// order, and the links between them: Pairs lists the links that differ
// from Default.
type Cluster struct {
	Devices []Device
	Default Link
	Pairs   []Pair
	// Channels: every link, in each direction, carries one transfer at a
	// time (the file's "links": {"channels": true}). Without it
	// transfers overlap freely.
	Channels bool
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
// the one listed, or Default's alone.
func (c *Cluster) Pair(a, b int) Pair {
	for _, pr := range c.Pairs {
		if pr.From == a && pr.To == b || pr.From == b && pr.To == a {
			return pr
		}
	}
	return Pair{From: a, To: b, Link: c.Default}
}

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
// time is BlockTime on its devices, every dependency between blocks on
// different devices gets its transfer time (Transfer, with the
// dependency's size), and devices with a memory get it as their capacity.
// The name stays. The cluster must have as many devices as p; a time past
// placement.MaxTime is an error naming the block or dependency. Applied to
// a placement that already runs on a cluster, it replaces that one's
// transfers, capacities and channels but scales the times again: apply a cluster to
// the placement as given. With Channels, a dependency between blocks on
// one device each whose pair has several links gets each link's time
// (placement's Lanes): each link is a queue of its own.
func (c *Cluster) Apply(p *placement.Placement) (*placement.Placement, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if len(c.Devices) != p.Devices {
		return nil, fmt.Errorf("cluster of %d devices for placement %q of %d", len(c.Devices), p.Name, p.Devices)
	}
	if p.Open() {
		return c.applyOpen(p)
	}
	q := p.Clone()
	for i := range q.Blocks {
		b := &q.Blocks[i]
		t := c.BlockTime(b.Time, b.Devices)
		if t > placement.MaxTime {
			return nil, fmt.Errorf("placement %q: block %q: time %d on the cluster is more than %d", p.Name, b.ID, t, placement.MaxTime)
		}
		b.Time = t
	}
	q.Transfers = nil
	for _, d := range q.Deps {
		from, to := q.Blocks[d.From], q.Blocks[d.To]
		x := c.Transfer(from.Devices, to.Devices, q.Size(d))
		if x > placement.MaxTime {
			return nil, fmt.Errorf("placement %q: dependency %s -> %s: transfer time %d on the cluster is more than %d", p.Name, from.ID, to.ID, x, placement.MaxTime)
		}
		if x > 0 {
			if q.Transfers == nil {
				q.Transfers = map[placement.Dep]int{}
			}
			q.Transfers[d] = x
		}
	}
	q.Channels = c.Channels
	q.Lanes = nil
	if c.Channels {
		for _, d := range q.Deps {
			from, to := q.Blocks[d.From].Devices, q.Blocks[d.To].Devices
			if len(from) != 1 || len(to) != 1 || from[0] == to[0] || q.Transfer(d) == 0 {
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
			if q.Lanes == nil {
				q.Lanes = map[placement.Dep][]int{}
			}
			q.Lanes[d] = ts
		}
	}
	if err := c.applyDevices(q); err != nil {
		return nil, err
	}
	if p.HasCandidates() {
		// A chosen placement keeps what every other choice costs, so
		// that a search may choose again (placement's Reopen).
		open, err := c.applyOpen(p.Reopen())
		if err != nil {
			return nil, err
		}
		q.Costs = open.Costs
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	return q, nil
}

// applyOpen is Apply of a placement with blocks still to choose
// (placement's Open): times and transfers are set for every choice
// (placement's Costs), so that placement.Choose(c.Apply(p), choice) is
// c.Apply(placement.Choose(p, choice)). Block times stay as given; the
// capacities, channels and host channels are the cluster's as for a
// pinned placement. A block with candidates cannot declare an activation
// size (its offload time would depend on the choice).
func (c *Cluster) applyOpen(p *placement.Placement) (*placement.Placement, error) {
	q := p.Clone()
	costs := &placement.Costs{Times: make([][]int, len(q.Blocks)), Transfers: map[placement.Dep][][]int{}}
	for i, b := range q.Blocks {
		if len(b.Candidates) > 0 && b.Activation > 0 {
			return nil, fmt.Errorf("placement %q: block %q: an activation size with candidates is not supported (give \"offload\")", p.Name, b.ID)
		}
		for _, g := range q.DeviceOptions(i) {
			t := c.BlockTime(b.Time, g)
			if t > placement.MaxTime {
				return nil, fmt.Errorf("placement %q: block %q: time %d on devices %v of the cluster is more than %d", p.Name, b.ID, t, g, placement.MaxTime)
			}
			costs.Times[i] = append(costs.Times[i], t)
		}
		if len(b.Candidates) == 0 {
			q.Blocks[i].Time = costs.Times[i][0]
		}
	}
	q.Transfers = nil
	for _, d := range q.Deps {
		from, to := q.DeviceOptions(d.From), q.DeviceOptions(d.To)
		m := make([][]int, len(from))
		any := false
		for a, fg := range from {
			m[a] = make([]int, len(to))
			for b, tg := range to {
				x := c.Transfer(fg, tg, q.Size(d))
				if x > placement.MaxTime {
					return nil, fmt.Errorf("placement %q: dependency %s -> %s: transfer time %d on the cluster is more than %d", p.Name, q.Blocks[d.From].ID, q.Blocks[d.To].ID, x, placement.MaxTime)
				}
				m[a][b] = x
				any = any || x > 0
			}
		}
		if any {
			costs.Transfers[d] = m
		}
	}
	q.Costs = costs
	q.Channels = c.Channels
	if err := c.applyDevices(q); err != nil {
		return nil, err
	}
	if err := q.Validate(); err != nil {
		return nil, err
	}
	return q, nil
}

// applyDevices gives q, a placement on c, c's host links (applyHost) and
// its devices' memories as budgets (Capacities; nil where no device
// gives one).
func (c *Cluster) applyDevices(q *placement.Placement) error {
	if err := c.applyHost(q); err != nil {
		return err
	}
	q.Capacities = nil
	for d, dev := range c.Devices {
		if dev.Memory > 0 {
			if q.Capacities == nil {
				q.Capacities = make([]int, q.Devices)
			}
			q.Capacities[d] = dev.Memory
		}
	}
	return nil
}

// applyHost sets the offload time of every block that declares an
// activation size and whose devices have host links (the slowest link's
// time), and the devices' host channels from their switches.
func (c *Cluster) applyHost(q *placement.Placement) error {
	for i := range q.Blocks {
		b := &q.Blocks[i]
		if b.Activation <= 0 {
			continue
		}
		t, linked := 0, false
		for _, d := range b.Devices {
			if h := c.Devices[d].Host; h != nil {
				t, linked = max(t, max(1, h.Time(b.Activation))), true
			}
		}
		if !linked {
			continue
		}
		if t > placement.MaxTime {
			return fmt.Errorf("placement %q: block %q: offload time %d on the cluster is more than %d", q.Name, b.ID, t, placement.MaxTime)
		}
		b.Offload = t
	}
	q.HostChannels = nil
	first := map[string]int{}
	for d, dev := range c.Devices {
		if dev.Switch == "" {
			continue
		}
		if q.HostChannels == nil {
			q.HostChannels = make([]int, len(c.Devices))
			for x := range q.HostChannels {
				q.HostChannels[x] = x
			}
		}
		if f, ok := first[dev.Switch]; ok {
			q.HostChannels[d] = f
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
	if len(c.Devices) != len(o.Devices) || len(c.Pairs) != len(o.Pairs) || c.Default != o.Default || c.Channels != o.Channels {
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
	return true
}

// Clone returns a deep copy.
func (c *Cluster) Clone() *Cluster {
	q := &Cluster{Devices: append([]Device(nil), c.Devices...), Default: c.Default, Pairs: append([]Pair(nil), c.Pairs...), Channels: c.Channels}
	for n, pr := range q.Pairs {
		q.Pairs[n].More = slices.Clone(pr.More)
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
// tensor, carrying one transfer at a time with channels.
func Simple(n int, speeds string, latency float64, channels bool) (*Cluster, error) {
	c := Uniform(n)
	if speeds != "" {
		var err error
		if c, err = ParseSpeeds(speeds, n); err != nil {
			return nil, err
		}
	}
	c.Default.Latency = latency
	c.Channels = channels
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
