package spec

import (
	"fmt"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/placement"
)

// ClusterSource is where a placement's cluster comes from: a cluster
// file, or the common cases of one without a file (devices of other
// speeds, one transfer time, links that carry one transfer at a time).
// Its errors name the tessel flags that set each field, so that the
// command and a library user read the same line.
type ClusterSource struct {
	File         string
	DeviceSpeed  string
	TransferTime int
	QueuedLinks  bool
}

// Cluster returns the cluster the source gives for n devices, nil for
// none.
func (cs ClusterSource) Cluster(n int) (*cluster.Cluster, error) {
	if cs.TransferTime < 0 {
		return nil, fmt.Errorf("--transfer-time must be at least 0, got %d", cs.TransferTime)
	}
	if cs.File != "" {
		if cs.DeviceSpeed != "" || cs.TransferTime != 0 {
			return nil, fmt.Errorf("--device-speed and --transfer-time are for use without --cluster: put them in the cluster file")
		}
		c, err := cluster.Load(cs.File)
		if err != nil {
			return nil, err
		}
		if len(c.Devices) != n {
			return nil, fmt.Errorf("%s: cluster of %d devices for a placement of %d", cs.File, len(c.Devices), n)
		}
		c.QueuedLinks = c.QueuedLinks || cs.QueuedLinks
		return c, nil
	}
	if cs.DeviceSpeed == "" && cs.TransferTime == 0 {
		if cs.QueuedLinks {
			return nil, fmt.Errorf("--channels: no transfer takes time; give --transfer-time T or a cluster file with links")
		}
		return nil, nil
	}
	c, err := cluster.Simple(n, cs.DeviceSpeed, float64(cs.TransferTime), cs.QueuedLinks)
	if err != nil {
		return nil, fmt.Errorf("--device-speed: %v", err)
	}
	return c, nil
}

// On returns p on the source's cluster (p itself without one) and the
// cluster.
func (cs ClusterSource) On(p *placement.Placement) (*placement.Placement, *cluster.Cluster, error) {
	c, err := cs.Cluster(p.Devices)
	if err != nil || c == nil {
		return p, nil, err
	}
	q, err := c.Apply(p)
	if err != nil {
		return nil, nil, err
	}
	return q, c, nil
}

// Source is where a placement comes from: a built-in shape and its
// options, or a file; an overlap rule for F&B pairs; and the cluster it
// runs on. Every failure to load it is bad input.
type Source struct {
	Name          string // a built-in placement (placement.BuiltinNames)
	File          string // a placement file instead
	Devices       int
	ForwardTime   int
	BackwardTime  int
	Inference     bool
	SplitBackward bool
	InputTime     int
	WeightTime    int
	Chunks        int
	Order         string
	Cluster       ClusterSource
	// Choose lets a file's blocks with candidates and no choice through
	// (the searches choose their devices); without it such a placement
	// is refused.
	Choose bool
	// OverlapTime is --overlap-time's value ("" for none): forwards and
	// backwards may pair into overlapped actions of that time.
	OverlapTime string
	// Conflict, when set, is the reason the built-in's settings do not go
	// together, found while they were read; Load refuses a built-in with
	// it.
	Conflict string
}

// Load returns the placement the source names, on its cluster when it
// has one.
func (s Source) Load() (*placement.Placement, error) {
	p, _, _, err := s.LoadOn()
	return p, err
}

// LoadOn returns the placement the source names on its cluster, the
// placement as given and the cluster (nil, and p itself, without one).
func (s Source) LoadOn() (p, given *placement.Placement, c *cluster.Cluster, err error) {
	given, err = s.LoadGiven()
	if err != nil {
		return nil, nil, nil, err
	}
	p, c, err = s.Cluster.On(given)
	return p, given, c, err
}

// LoadFor is LoadOn with the decisions d, when any, declared on the
// placement as given (LoadDeclared).
func (s Source) LoadFor(d placement.Decisions) (p, given *placement.Placement, c *cluster.Cluster, err error) {
	if p, given, c, err = s.LoadOn(); err != nil || d == (placement.Decisions{}) {
		return p, given, c, err
	}
	p, given, err = s.LoadDeclared(d)
	return p, given, c, err
}

// LoadDeclared is LoadOn with the decisions declared on the placement as
// given (Declare), before its cluster.
func (s Source) LoadDeclared(d placement.Decisions) (p, given *placement.Placement, err error) {
	given, err = s.LoadGiven()
	if err != nil {
		return nil, nil, err
	}
	if given, err = Declare(given, d); err != nil {
		return nil, nil, err
	}
	p, _, err = s.Cluster.On(given)
	return p, given, err
}

// LoadGiven returns the placement the source names, before any cluster.
func (s Source) LoadGiven() (*placement.Placement, error) {
	p, err := s.loadPlain()
	if err != nil || s.OverlapTime == "" {
		return p, err
	}
	return WithOverlap(p, s.OverlapTime)
}

// WithOverlap is p with --overlap-time's rule (a file's own pairs kept).
func WithOverlap(p *placement.Placement, value string) (*placement.Placement, error) {
	o, err := placement.ParseOverlapTime(value)
	if err != nil {
		return nil, fmt.Errorf("--overlap-time: %v", err)
	}
	q, err := p.WithOverlap(o)
	if err != nil {
		return nil, fmt.Errorf("--overlap-time: %v", err)
	}
	return q, nil
}

func (s Source) loadPlain() (*placement.Placement, error) {
	if s.File != "" {
		p, err := placement.Load(s.File)
		if err != nil {
			return nil, err
		}
		if p.Open() && !s.Choose {
			return nil, fmt.Errorf("%s: placement %q has blocks with candidates and no choice: tessel search, optimal and compare choose their devices", s.File, p.Name)
		}
		return p, nil
	}
	if s.Conflict != "" {
		return nil, fmt.Errorf("%s", s.Conflict)
	}
	for _, f := range []struct {
		flag string
		v    int
	}{{"devices", s.Devices}, {"forward-time", s.ForwardTime}, {"backward-time", s.BackwardTime}} {
		if f.v < 1 {
			return nil, fmt.Errorf("--%s must be at least 1, got %d", f.flag, f.v)
		}
	}
	return placement.Builtin(s.Name, s.Options())
}

// Options are the built-in's options the source gives.
func (s Source) Options() placement.Options {
	return placement.Options{
		Devices: s.Devices, ForwardTime: s.ForwardTime, BackwardTime: s.BackwardTime, Inference: s.Inference,
		SplitBackward: s.SplitBackward, InputTime: s.InputTime, WeightTime: s.WeightTime,
		Chunks: s.Chunks, Order: placement.Order(s.Order),
	}
}

// CheckDeclarations rejects decision settings that cannot go together: a
// negative offload time, or one without offload.
func CheckDeclarations(d placement.Decisions) error {
	if d.OffloadTime < 0 {
		return fmt.Errorf("--offload-time must be at least 1, got %d", d.OffloadTime)
	}
	if d.OffloadTime > 0 && !d.Offload {
		return fmt.Errorf("--offload-time needs --offload")
	}
	return nil
}

// Declare applies the decisions' declarations to the placement as given
// (before its cluster): placement.Declare after CheckDeclarations.
func Declare(given *placement.Placement, d placement.Decisions) (*placement.Placement, error) {
	if err := CheckDeclarations(d); err != nil {
		return nil, err
	}
	return placement.Declare(given, d)
}
