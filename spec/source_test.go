package spec_test

import (
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// v4 is the built-in v-shape on 4 devices, as the command's defaults give
// it.
func v4() spec.Source {
	return spec.Source{Name: "v-shape", Devices: 4, ForwardTime: 1, BackwardTime: 2, InputTime: 1, WeightTime: 1, Chunks: 1, Order: "loop"}
}

func TestSourceLoadErrors(t *testing.T) {
	with := func(f func(*spec.Source)) spec.Source {
		s := v4()
		f(&s)
		return s
	}
	for _, tc := range []struct {
		name string
		src  spec.Source
		want string
	}{
		{"no devices", with(func(s *spec.Source) { s.Devices = 0 }), "--devices must be at least 1, got 0"},
		{"backward time", with(func(s *spec.Source) { s.BackwardTime = -1 }), "--backward-time must be at least 1, got -1"},
		{"conflict first", with(func(s *spec.Source) { s.Devices, s.Conflict = 0, "--order needs --chunks 2 or more" }), "--order needs --chunks 2 or more"},
		{"unknown built-in", with(func(s *spec.Source) { s.Name = "no-such-shape" }), "no-such-shape"},
		{"negative transfer", with(func(s *spec.Source) { s.Cluster.TransferTime = -1 }), "--transfer-time must be at least 0, got -1"},
		{"speed with a file", with(func(s *spec.Source) {
			s.Cluster = spec.ClusterSource{File: "../testdata/clusters/four-half-speed.json", DeviceSpeed: "0=2"}
		}), "--device-speed and --transfer-time are for use without --cluster"},
		{"cluster of other size", with(func(s *spec.Source) {
			s.Devices = 2
			s.Cluster.File = "../testdata/clusters/four-half-speed.json"
		}), "cluster of 4 devices for a placement of 2"},
		{"channels without transfers", with(func(s *spec.Source) { s.Cluster.QueuedLinks = true }), "--channels: no transfer takes time"},
		{"bad speed", with(func(s *spec.Source) { s.Cluster.DeviceSpeed = "x" }), "--device-speed: "},
		{"bad overlap", with(func(s *spec.Source) { s.OverlapTime = "fast" }), "--overlap-time: "},
		{"candidates without Choose", spec.Source{File: "../testdata/placements/where-branches.json"}, "has blocks with candidates and no choice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := tc.src.LoadOn()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestSourceLoadOn(t *testing.T) {
	src := v4()
	p, given, c, err := src.LoadOn()
	if err != nil {
		t.Fatal(err)
	}
	if c != nil || p != given || p.Devices != 4 {
		t.Fatalf("without a cluster: p %p, given %p, cluster %v", p, given, c)
	}
	src.Cluster = spec.ClusterSource{TransferTime: 2, QueuedLinks: true}
	p, given, c, err = src.LoadOn()
	if err != nil {
		t.Fatal(err)
	}
	if c == nil || !c.QueuedLinks || p == given || !p.QueuedLinks {
		t.Fatalf("--transfer-time 2 --channels: cluster %+v, placement on it has channels %v", c, p.QueuedLinks)
	}
	if given.Transfers != nil || p.Transfers == nil {
		t.Errorf("the transfers are the cluster's: given %v, timed %v", given.Transfers != nil, p.Transfers != nil)
	}
	src.Cluster = spec.ClusterSource{File: "../testdata/clusters/four-half-speed.json"}
	if _, _, c, err = src.LoadOn(); err != nil || c == nil || len(c.Devices) != 4 {
		t.Fatalf("cluster file: %v, %v", c, err)
	}
	choose := spec.Source{File: "../testdata/placements/where-branches.json", Choose: true}
	if _, err := choose.Load(); err != nil {
		t.Errorf("a placement with candidates, Choose set: %v", err)
	}
}

func TestSourceDecisions(t *testing.T) {
	for _, tc := range []struct {
		d    placement.Decisions
		want string
	}{
		{placement.Decisions{OffloadTime: -1}, "--offload-time must be at least 1, got -1"},
		{placement.Decisions{OffloadTime: 2}, "--offload-time needs --offload"},
		{placement.Decisions{Offload: true, OffloadTime: 2}, ""},
	} {
		err := spec.CheckDeclarations(tc.d)
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.d, err, tc.want)
		}
	}
	src := v4()
	p, given, _, err := src.LoadFor(placement.Decisions{Offload: true, OffloadTime: 2})
	if err != nil {
		t.Fatal(err)
	}
	if p != given {
		t.Fatalf("without a cluster the placement is the one given")
	}
	plain, _ := src.Load()
	offloadable := 0
	for i := range p.Blocks {
		if p.OffloadTime(i) == 2 {
			offloadable++
		}
		if plain.OffloadTime(i) != 0 {
			t.Fatalf("the plain placement declares an offload time on block %d", i)
		}
	}
	if offloadable == 0 {
		t.Errorf("--offload --offload-time 2 declared no offload time")
	}
}
