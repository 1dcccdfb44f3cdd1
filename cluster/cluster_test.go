package cluster

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/fuzzcorpus"
	"github.com/tessel-pp/tessel/placement"
)

var update = flag.Bool("update", false, "rewrite the fuzz seed corpus")

const (
	goodDir = "../testdata/clusters"
	badDir  = "../testdata/bad/clusters"
)

// Every cluster file loads, is written back byte for byte, and parses to
// the same cluster.
func TestRoundTrip(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goodDir, "*.json"))
	if err != nil || len(files) < 3 {
		t.Fatalf("cluster files: %v, %v", files, err)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := c.Write(&buf); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), data) {
			t.Errorf("%s: written form differs:\n%s", path, buf.Bytes())
		}
		if d, err := Parse(buf.Bytes()); err != nil || !d.Equal(c) {
			t.Errorf("%s: parse after write: %v", path, err)
		}
	}
}

// Cluster files get the placement file's treatment: one line per error,
// starting with the path and naming the item.
func TestLoadBad(t *testing.T) {
	tests := []struct{ file, want string }{
		{"speed-zero.json", "cluster: device 0: speed must be in 1e-06..1e+06, got 0"},
		{"memory-negative.json", `cluster: device 0 ("g0"): memory must be in 0..1000000000 (0: unlimited), got -1`},
		{"pair-range.json", "cluster: links: pairs[0]: device 2 out of range 0..1"},
		{"pair-twice.json", "cluster: links: pairs[1]: devices 0 and 1 already linked by pairs[0]"},
		{"pair-self.json", "cluster: links: pairs[0]: a link from device 1 to itself"},
		{"latency-negative.json", "cluster: links: default: latency must be in 0..1000000, got -1"},
		{"unknown-field.json", `cluster: devices[0]: unknown field "colour"`},
		{"missing-memory.json", `cluster: devices[0]: missing field "memory"`},
		{"speed-type.json", `cluster: devices[0]: field "speed": want a number, got a string`},
		{"no-devices.json", "cluster: devices: want 1..4096 devices, got 0"},
		{"trailing.json", "trailing data after the cluster object at line 1, column 42"},
		{"link-missing-field.json", `cluster: links: default: missing field "per_unit"`},
		{"malformed.json", "malformed JSON at line 3"},
		{"null-devices.json", `cluster: field "devices": want an array, got null`},
		{"channels-type.json", `cluster: field "links": field "channels": want true or false, got a number`},
		{"host-negative.json", "cluster: device 0: host: latency must be in 0..1000000, got -1"},
		{"switch-type.json", `cluster: devices[0]: field "switch": want a string, got a number`},
		{"memory-bytes-negative.json", "cluster: device 0: memory_bytes must be in 0..1e+15 (0: none), got -1"},
		{"memory-bytes-type.json", `cluster: devices[0]: field "memory_bytes": want a number, got a string`},
		// The fields of tessel partition and plan on a cluster.
		{"type-type.json", `cluster: devices[0]: field "type": want a string, got a number`},
		{"peak-flops-negative.json", "cluster: device 0: peak_flops and memory_bandwidth must be in 0..1e+30 (0: not given), got -1 and 0"},
		{"node-negative.json", "cluster: device 0: node must be in 0..4095, got -2"},
		{"memory-bandwidth-type.json", `cluster: devices[0]: field "memory_bandwidth": want a number, got a string`},
		{"pair-links-empty.json", "cluster: links: pairs[0]: links: want at least one link"},
		{"pair-links-and-latency.json", `cluster: links: pairs[0]: give either "latency" and "per_unit" (one link) or "links", not both`},
		{"pair-links-negative.json", "cluster: links: pairs[0]: links[1]: latency must be in 0..1000000, got -2"},
		{"pair-links-missing-field.json", `cluster: links: pairs[0]: links[0]: missing field "per_unit"`},
		// Units, and links given once per node.
		{"time-unit-unknown.json", `cluster: field "time_unit": unknown time unit "hours" (want one of ns, us, µs, ms, s)`},
		{"nodes-no-link.json", `cluster: device 1 on node 0 and device 2 on node 1 have no link between them: give "links": {"default"} (the link between nodes) or a pair`},
		{"nodes-twice.json", "cluster: links: nodes[1]: node 0 already given by nodes[0]"},
		{"nodes-no-device.json", "cluster: links: nodes[0]: no device is on node 3"},
		{"nodes-missing-node.json", `cluster: links: nodes[0]: missing field "node"`},
		{"nodes-negative.json", "cluster: links: nodes[0]: latency must be in 0..1000000, got -1"},
	}
	files, _ := filepath.Glob(filepath.Join(badDir, "*.json"))
	if len(files) != len(tests) {
		t.Errorf("%d files in %s, %d in the table: keep them in step", len(files), badDir, len(tests))
	}
	for _, tt := range tests {
		path := filepath.Join(badDir, tt.file)
		_, err := Load(path)
		if err == nil {
			t.Errorf("%s loaded", path)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, path+": ") || !strings.Contains(msg, tt.want) {
			t.Errorf("%s: error %q, want one line starting with the path and containing %q", tt.file, msg, tt.want)
		}
	}
}

// Apply: a block's time is ⌈t / speed⌉ of its slowest device, a transfer
// ⌈latency + size·per_unit⌉ (the largest over the pairs of two groups, 0
// when they share a device), and memories become capacities (design
// notes, "Cluster file").
func TestApply(t *testing.T) {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load(filepath.Join(goodDir, "hetero-4.json"))
	if err != nil {
		t.Fatal(err)
	}
	f1, f2, fs, b2 := p.Index("f1"), p.Index("f2"), p.Index("fs"), p.Index("b2")
	p.Sizes = map[placement.Dep]float64{{From: f1, To: f2}: 3}
	q, err := c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	// b2 (time 3) on device 2 of speed 0.5: 6; the shard forward (time 1)
	// on all devices: the slowest's 2.
	if got := q.Blocks[b2].Time; got != 6 {
		t.Errorf("b2 takes %d on a half-speed device, want 6", got)
	}
	if got := q.Blocks[fs].Time; got != 2 {
		t.Errorf("the shard forward takes %d, want its slowest member's 2", got)
	}
	if got := q.Blocks[f1].Time; got != 1 {
		t.Errorf("f1 takes %d on a device of speed 1, want 1", got)
	}
	// f1 (device 1) → f2 (device 2), size 3, on the pair 1–2: ⌈2 + 3·1⌉ = 5.
	if got := q.Transfer(placement.Dep{From: f1, To: f2}); got != 5 {
		t.Errorf("f1 -> f2 transfer %d, want 5", got)
	}
	// fs (all devices) → f0 (device 0): they share device 0.
	if got := q.Transfer(placement.Dep{From: fs, To: p.Index("f0")}); got != 0 {
		t.Errorf("fs -> f0 transfer %d between groups that share a device, want 0", got)
	}
	// f0 → f1 on the default link, size 1: ⌈0.5 + 0.25⌉ = 1.
	if got := q.Transfer(placement.Dep{From: p.Index("f0"), To: f1}); got != 1 {
		t.Errorf("f0 -> f1 transfer %d, want 1", got)
	}
	if got := fmt.Sprint(q.Budgets(7)); got != "[7 7 6 6]" {
		t.Errorf("budgets under memory 7: %s, want [7 7 6 6]", got)
	}
	if p.Transfers != nil || p.Blocks[b2].Time != 3 || p.Capacities != nil {
		t.Error("Apply changed its argument")
	}
	// A group transfer takes the largest of its pairs: a block on devices
	// {0,1} feeding one on {2,3} crosses the slow pair 1–2.
	g := &placement.Placement{Name: "groups", Devices: 4, Blocks: []placement.Block{
		{ID: "a", Kind: placement.Forward, Devices: []int{0, 1}, Time: 1},
		{ID: "b", Kind: placement.Forward, Devices: []int{2, 3}, Time: 1},
	}, Deps: []placement.Dep{{From: 0, To: 1}}}
	gq, err := c.Apply(g)
	if err != nil {
		t.Fatal(err)
	}
	if got := gq.Transfer(placement.Dep{From: 0, To: 1}); got != 3 {
		t.Errorf("group transfer %d, want the slow pair's ⌈2 + 1⌉ = 3", got)
	}
	if _, err := Uniform(3).Apply(p); err == nil || err.Error() != `cluster of 3 devices for placement "m-shape" of 4` {
		t.Errorf("device count mismatch: %v", err)
	}
}

// A cluster of speed 1 and free links changes nothing, and rounding up
// forgives floating-point error: 0.7·10 takes 7.
func TestApplyNeutralAndRounding(t *testing.T) {
	p, err := placement.Builtin("nn-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	q, err := Uniform(4).Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	if !q.Equal(p) || q.Transfers != nil || q.Capacities != nil {
		t.Error("a neutral cluster changed the placement")
	}
	if got := (Link{PerUnit: 0.7}).Time(10); got != 7 {
		t.Errorf("0.7·10 takes %d, want 7", got)
	}
	if got := (Link{Latency: 0.1, PerUnit: 0.2}).Time(1); got != 1 {
		t.Errorf("0.1 + 0.2 takes %d, want 1", got)
	}
	if got := Uniform(1).BlockTime(1, []int{0}); got != 1 {
		t.Errorf("block time %d, want 1", got)
	}
	c := Uniform(1)
	c.Devices[0].Speed = 3
	if got := c.BlockTime(1, []int{0}); got != 1 {
		t.Errorf("a fast device takes %d, want at least 1", got)
	}
}

// FuzzParse: never a panic, errors on one line, and what parses is valid
// and round-trips byte for byte. The seed corpus holds every cluster file
// and bad cluster file (TestFuzzCorpus).
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := c.Write(&buf); err != nil {
			t.Fatalf("write: %v", err)
		}
		d, err := Parse(buf.Bytes())
		if err != nil || !d.Equal(c) {
			t.Fatalf("round trip: %v\n%s", err, buf.Bytes())
		}
		var again bytes.Buffer
		if err := d.Write(&again); err != nil || !bytes.Equal(again.Bytes(), buf.Bytes()) {
			t.Fatalf("second write differs (%v)", err)
		}
		// Timing on the cluster: what Apply returns validates, and no
		// block takes less than on a device of the fastest speed.
		for _, opt := range []placement.Options{{Devices: len(c.Devices)}, {Devices: len(c.Devices), SplitBackward: true, Chunks: 2}} {
			p, err := placement.Builtin("v-shape", opt)
			if err != nil {
				continue
			}
			q, err := c.Apply(p)
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("apply error spans lines: %q", err)
				}
				continue
			}
			if err := q.Validate(); err != nil {
				t.Fatalf("the placement on the cluster is invalid: %v", err)
			}
			for i, b := range q.Blocks {
				if b.Time < 1 || float64(b.Time) < float64(p.Blocks[i].Time)/MaxSpeed {
					t.Fatalf("block %s takes %d on the cluster, %d as given", b.ID, b.Time, p.Blocks[i].Time)
				}
			}
		}
	})
}

// TestFuzzCorpus keeps the seed corpus in step with the cluster files;
// -update rewrites it.
func TestFuzzCorpus(t *testing.T) {
	fuzzcorpus.Check(t, filepath.Join("testdata", "fuzz", "FuzzParse"), []string{goodDir, badDir}, *update, "./cluster")
}

// A device's host link turns a block's activation size into its offload
// time, and devices on one PCIe switch share a host channel (Qi et al.,
// "OptPipe", Appendix C, eqs 18–19).
func TestApplyHost(t *testing.T) {
	c, err := Load(filepath.Join(goodDir, "four-host-switch.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := placement.Load("../testdata/placements/split-v-shape-offload.json")
	if err != nil {
		t.Fatal(err)
	}
	q, err := c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	// f0 declares time 2 and no size; f1's size 3.5 on gpu1 takes
	// ⌈0.5 + 3.5·0.5⌉ = 3; f2's on gpu2 ⌈0.5 + 3.5⌉ = 4; f3 none.
	for id, want := range map[string]int{"f0": 2, "f1": 3, "f2": 4, "f3": 0} {
		if got := q.OffloadTime(q.Index(id)); got != want {
			t.Errorf("offload time of %s = %d, want %d", id, got, want)
		}
	}
	for d, want := range []int{0, 0, 2, 2} {
		if got := q.HostChannel(d); got != want {
			t.Errorf("host channel of device %d = %d, want %d", d, got, want)
		}
	}
	if p.HostChannel(3) != 3 {
		t.Errorf("without a cluster device 3 has channel %d, want its own", p.HostChannel(3))
	}
	if !reflect.DeepEqual(p.Timing, placement.Timing{}) {
		t.Errorf("Apply changed the placement as written: Timing %+v", p.Timing)
	}
	// A second cluster replaces the first's Timing whole: queued links,
	// capacities and transfers of its own, no switches.
	o := Uniform(4)
	o.Default.Latency, o.QueuedLinks, o.Devices[1].Memory = 2, true, 9
	r, err := o.Apply(q)
	if err != nil {
		t.Fatal(err)
	}
	if !r.QueuedLinks || r.Switches != nil || !slices.Equal(r.Capacities, []int{0, 9, 0, 0}) || len(r.Transfers) == 0 {
		t.Errorf("on a second cluster: Timing %+v, want queued links, device 1's capacity, transfers and no switches", r.Timing)
	}
}
func TestParseSpeeds(t *testing.T) {
	for _, c := range []struct {
		in     string
		speeds string // "" when an error is wanted
	}{
		{"2=0.5", "[1 1 0.5 1]"},
		{" 0=2 , 3=0.25", "[2 1 1 0.25]"},
		{"4=1", ""},
		{"-1=1", ""},
		{"1", ""},
		{"1=fast", ""},
		{"1=0", ""},
	} {
		got, err := ParseSpeeds(c.in, 4)
		if c.speeds == "" {
			if err == nil {
				t.Errorf("%q: no error", c.in)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		var sp []float64
		for _, d := range got.Devices {
			sp = append(sp, d.Speed)
		}
		if fmt.Sprint(sp) != c.speeds {
			t.Errorf("%q: speeds %v, want %s", c.in, sp, c.speeds)
		}
	}
}

// ParseSpeeds never panics: it returns a cluster whose speeds are in
// range, or an error.
func FuzzParseSpeeds(f *testing.F) {
	for _, s := range []string{"2=0.5", " 0=2 , 3=0.25", "4=1", "-1=1", "1", "1=fast", "1=0", "1=1e7", "", ",", "0=NaN", "0=+Inf"} {
		f.Add(s, 4)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 1 || n > 64 {
			return
		}
		c, err := ParseSpeeds(s, n)
		if err != nil {
			return
		}
		for d, dev := range c.Devices {
			if !(dev.Speed >= MinSpeed && dev.Speed <= MaxSpeed) {
				t.Fatalf("%q: device %d speed %v", s, d, dev.Speed)
			}
		}
	})
}

// A pair of several links (Wu et al., "Rethinking Dynamic Networks and
// Heterogeneous Computing with Automatic Parallelization", §3.1, eq 7): a
// transfer takes the fastest for its size; with channels each link is a
// queue of its own (placement's Lanes).
func TestApplySeveralLinks(t *testing.T) {
	c := Uniform(2)
	c.Pairs = []Pair{{From: 0, To: 1, Link: Link{Latency: 3}, More: []Link{{PerUnit: 1}}}}
	p := &placement.Placement{Name: "two", Devices: 2,
		Blocks: []placement.Block{
			{ID: "a", Kind: placement.Forward, Devices: []int{0}, Time: 1, Memory: 1},
			{ID: "b", Kind: placement.Forward, Devices: []int{1}, Time: 1, Memory: 1},
			{ID: "c", Kind: placement.Forward, Devices: []int{1}, Time: 1, Memory: 1},
		},
		Deps:  []placement.Dep{{From: 0, To: 1}, {From: 0, To: 2}},
		Sizes: map[placement.Dep]float64{{From: 0, To: 2}: 5},
	}
	q, err := c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	// Size 1: the second link (1) beats the first (3); size 5: the first (3) beats 5.
	if q.Transfer(p.Deps[0]) != 1 || q.Transfer(p.Deps[1]) != 3 || q.Lanes != nil {
		t.Errorf("transfers %v, lanes %v", q.Transfers, q.Lanes)
	}
	c.QueuedLinks = true
	q, err = c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(q.Lanes[p.Deps[0]], []int{3, 1}) || !slices.Equal(q.Lanes[p.Deps[1]], []int{3, 5}) {
		t.Errorf("lanes %v", q.Lanes)
	}
	if c.Link(1, 0) != (Link{Latency: 3}) || c.Pair(1, 0).Time(1) != 1 {
		t.Errorf("link %v", c.Link(1, 0))
	}
	d := c.Clone()
	d.Pairs[0].More[0].PerUnit = 2
	if c.Pairs[0].More[0].PerUnit != 1 || c.Equal(d) {
		t.Error("Clone shares the links")
	}
}

// Simple is the cluster of --device-speed, --transfer-time and
// --channels: the speeds given, every link the latency given.
func TestSimple(t *testing.T) {
	c, err := Simple(4, "2=0.5", 3, true)
	if err != nil {
		t.Fatal(err)
	}
	var sp []float64
	for _, d := range c.Devices {
		sp = append(sp, d.Speed)
	}
	if fmt.Sprint(sp) != "[1 1 0.5 1]" || c.Default.Latency != 3 || !c.QueuedLinks {
		t.Errorf("speeds %v, latency %v, channels %v", sp, c.Default.Latency, c.QueuedLinks)
	}
	if c, err := Simple(2, "", 0, false); err != nil || len(c.Devices) != 2 || c.Devices[1].Speed != 1 || c.QueuedLinks {
		t.Errorf("uniform: %+v, %v", c, err)
	}
	if _, err := Simple(4, "9=1", 1, false); err == nil {
		t.Error("a speed of device 9 of 4: no error")
	}
}
