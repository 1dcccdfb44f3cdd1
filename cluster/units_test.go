package cluster

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/quantity"
)

// A node's link, given once, links every two of its devices that no pair
// lists; a pair listed wins; devices on different nodes take the default.
func TestNodeLinks(t *testing.T) {
	c, err := Parse([]byte(`{"devices": [{"speed": 1, "memory": 0}, {"speed": 1, "memory": 0}, {"speed": 1, "memory": 0},
		{"speed": 1, "memory": 0, "node": 1}, {"speed": 1, "memory": 0, "node": 1}],
		"links": {"default": {"latency": 9, "per_unit": 0},
		"nodes": [{"node": 0, "latency": 1, "per_unit": 0}, {"node": 1, "links": [{"latency": 2, "per_unit": 0}, {"latency": 3, "per_unit": 0}]}],
		"pairs": [{"from": 0, "to": 2, "latency": 5, "per_unit": 0}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		a, b  int
		want  Link
		links int
	}{
		{0, 1, Link{Latency: 1}, 1}, {1, 2, Link{Latency: 1}, 1}, // node 0's
		{2, 0, Link{Latency: 5}, 1},                              // the pair listed
		{3, 4, Link{Latency: 2}, 2},                              // node 1's two links
		{0, 3, Link{Latency: 9}, 1}, {2, 4, Link{Latency: 9}, 1}, // between nodes
	} {
		pr := c.Pair(tc.a, tc.b)
		if pr.Link != tc.want || len(pr.Links()) != tc.links {
			t.Errorf("devices %d and %d: %+v, want %+v with %d links", tc.a, tc.b, pr, tc.want, tc.links)
		}
	}
	if c.LinksUniform() {
		t.Error("a cluster with node links is not uniform")
	}
	// The written form keeps the node links once each.
	var b strings.Builder
	if err := c.Write(&b); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); strings.Count(got, `"node": `) != 4 || !strings.Contains(got, `"nodes": [`) {
		t.Errorf("written form:\n%s", got)
	}
}

// Several nodes with no link between them are an error, not free; a
// pair for every two devices on different nodes, or a default, will do.
func TestNodesLinked(t *testing.T) {
	dev := `{"speed": 1, "memory": 0, "node": %s}`
	devices := strings.Join([]string{strings.Replace(dev, "%s", "0", 1), strings.Replace(dev, "%s", "1", 1)}, ", ")
	for _, tc := range []struct {
		links string
		ok    bool
	}{
		{``, false},
		{`, "links": {"pairs": []}`, false},
		{`, "links": {"nodes": [{"node": 0, "latency": 1, "per_unit": 0}]}`, false},
		{`, "links": {"pairs": [{"from": 1, "to": 0, "latency": 1, "per_unit": 0}]}`, true},
		{`, "links": {"default": {"latency": 0, "per_unit": 0}}`, true}, // said, so free is meant
	} {
		_, err := Parse([]byte(`{"devices": [` + devices + `]` + tc.links + `}`))
		if (err == nil) != tc.ok {
			t.Errorf("links %q: error %v, want ok %v", tc.links, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "have no link between them") {
			t.Errorf("links %q: error %q", tc.links, err)
		}
	}
	// One node: the old files, every transfer free without links.
	if _, err := Parse([]byte(`{"devices": [{"speed": 1, "memory": 0}, {"speed": 1, "memory": 0}]}`)); err != nil {
		t.Error(err)
	}
}

// A cluster in seconds, converted to milliseconds: every time a thousand
// times larger, every rate a thousand times smaller.
func TestInUnit(t *testing.T) {
	c := &Cluster{TimeUnit: "s", Devices: []Device{{Speed: 1, PeakFLOPs: 1e15, MemoryBandwidth: 2e12, Host: &Link{Latency: 1e-5, PerUnit: 4e-11}}, {Speed: 1}},
		Default: Link{Latency: 1e-5, PerUnit: 8e-11}, Pairs: []Pair{{From: 0, To: 1, Link: Link{Latency: 2e-6, PerUnit: 5e-12}, More: []Link{{Latency: 1, PerUnit: 0}}}}}
	q, err := c.InUnit("ms")
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	if q.TimeUnit != "ms" || !near(q.Default.Latency, 0.01) || !near(q.Default.PerUnit, 8e-8) || !near(q.Pairs[0].PerUnit, 5e-9) ||
		!near(q.Pairs[0].More[0].Latency, 1000) || !near(q.Devices[0].Host.PerUnit, 4e-8) || !near(q.Devices[0].PeakFLOPs, 1e12) || !near(q.Devices[0].MemoryBandwidth, 2e9) {
		t.Errorf("in ms: %+v %+v", q, q.Devices[0])
	}
	if c.Default.Latency != 1e-5 || c.TimeUnit != "s" {
		t.Error("InUnit changed its receiver")
	}
	if _, err := c.InUnit("hours"); err == nil {
		t.Error("an unknown unit converted")
	}
}

// On a placement that says what its steps are, a cluster's times are
// converted to steps: a 0.17 ms NVLink hop of the Llama clusters is
// charged 0.17 ms, not a step of the search; a cluster in a unit on a
// placement in bare steps is refused.
func TestApplyInSteps(t *testing.T) {
	c, err := Load(filepath.Join(goodDir, "llama-8x80.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 8})
	if err != nil {
		t.Fatal(err)
	}
	const z = 2 * 4096 * 4096 // one bf16 activation of the sequence
	p.Sizes = map[placement.Dep]float64{}
	for _, d := range p.Deps {
		p.Sizes[d] = z
	}
	if _, err := c.Apply(p); err == nil || !strings.Contains(err.Error(), "whose times are steps of no stated length") {
		t.Errorf("a cluster in ms on bare steps: %v", err)
	}
	for _, step := range []float64{0.001, 0.002, 0.01} {
		p.Units = &quantity.Scale{Time: "ms", Step: step}
		q, err := c.Apply(p)
		if err != nil {
			t.Fatal(err)
		}
		want := 0.002 + z*5e-9 // ms
		for _, d := range p.Deps {
			if x := q.Transfer(d); x > 0 && math.Abs(float64(x)*step-want) > step {
				t.Errorf("step %g ms: a %.4f ms transfer charged %d steps = %g ms", step, want, x, float64(x)*step)
			}
		}
	}
	// The same cluster without a unit is taken in the placement's unit.
	noUnit := c.Clone()
	noUnit.TimeUnit = ""
	p.Units = &quantity.Scale{Time: "ms", Step: 0.001}
	a, err := c.Apply(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := noUnit.Apply(p)
	if err != nil || !a.Equal(b) {
		t.Errorf("a cluster without a unit on a placement in ms differs from one in ms: %v", err)
	}
	// In seconds: the same times, a thousand times smaller numbers.
	inS, err := c.InUnit("s")
	if err != nil {
		t.Fatal(err)
	}
	if d, err := inS.Apply(p); err != nil || !a.Equal(d) {
		t.Errorf("the cluster in s differs from the cluster in ms: %v", err)
	}
}
