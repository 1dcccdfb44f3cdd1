package timeline

import (
	"flag"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/internal/fuzzcorpus"
)

var update = flag.Bool("update", false, "rewrite the fuzz seed corpus")

const (
	goodDir = "../testdata/timelines"
	badDir  = "../testdata/bad/timelines"
)

// Every example timeline parses; every bad one fails with one line that
// names the change or field, as the test table says.
func TestParseFiles(t *testing.T) {
	good, _ := filepath.Glob(filepath.Join(goodDir, "*.json"))
	if len(good) == 0 {
		t.Fatal("no example timelines")
	}
	for _, path := range good {
		if _, err := Load(path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	want := map[string]string{
		"empty-changes.json":         "timeline: changes: want at least one change",
		"no-kind.json":               "changes[0]: want exactly one of",
		"two-kinds.json":             "changes[0]: want exactly one of",
		"out-of-order.json":          "changes[1]: iteration 2 is before the change before it (5)",
		"at-negative.json":           "changes[0]: at: iteration must be in 0..",
		"leave-twice.json":           "changes[0]: leave[1]: device 1 listed twice",
		"leave-empty.json":           "changes[0]: leave: want at least one device",
		"link-self.json":             "changes[0]: link: a link from device 2 to itself",
		"link-latency-negative.json": "changes[0]: link: latency must be in 0..",
		"link-missing-field.json":    "changes[0]:",
		"speed-zero.json":            "changes[0]: speed: speed must be in",
		"join-no-memory.json":        "changes[0]:",
		"join-link-twice.json":       "changes[0]: join: links[1]: device 0 already linked by links[0]",
		"unknown-field.json":         "changes[0]:",
		"trailing.json":              "trailing data",
		"malformed.json":             "timeline:",
		"null-changes.json":          "timeline:",
		"at-type.json":               "changes[0]:",
	}
	bad, _ := filepath.Glob(filepath.Join(badDir, "*.json"))
	if len(bad) != len(want) {
		t.Errorf("%d bad timelines, %d in the table", len(bad), len(want))
	}
	for _, path := range bad {
		_, err := Load(path)
		w, ok := want[filepath.Base(path)]
		switch {
		case !ok:
			t.Errorf("%s: not in the table", path)
		case err == nil:
			t.Errorf("%s: parsed", path)
		case strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: error spans lines: %q", path, err)
		case !strings.HasPrefix(err.Error(), path+": timeline: ") || !strings.Contains(err.Error(), w):
			t.Errorf("%s: error %q, want it to contain %q", path, err, w)
		}
	}
}

func TestSteps(t *testing.T) {
	tl, err := Load(filepath.Join(goodDir, "node-fails.json"))
	if err != nil {
		t.Fatal(err)
	}
	steps := tl.Steps()
	var at []int
	var n []int
	for _, s := range steps {
		at, n = append(at, s[0].At), append(n, len(s))
	}
	if !reflect.DeepEqual(at, []int{100, 250, 400}) || !reflect.DeepEqual(n, []int{1, 1, 2}) {
		t.Errorf("steps at %v with %v changes", at, n)
	}
}

// Apply: each kind of change on a cluster of 4 devices, and the device
// numbers it follows (Wu et al., §3: links and devices come and go).
func TestApply(t *testing.T) {
	base := cluster.Uniform(4)
	base.Default = cluster.Link{Latency: 1}
	base.Pairs = []cluster.Pair{{From: 2, To: 3, Link: cluster.Link{Latency: 5}}}
	for _, c := range []struct {
		name    string
		ch      Change
		devices int
		was     []int
		check   func(*cluster.Cluster) bool
		err     string
	}{
		{name: "link", ch: Change{Link: &cluster.Pair{From: 1, To: 0, Link: cluster.Link{Latency: 10}}}, devices: 4, was: []int{0, 1, 2, 3},
			check: func(q *cluster.Cluster) bool { return q.Link(0, 1).Latency == 10 && q.Link(2, 3).Latency == 5 }},
		{name: "link replaced", ch: Change{Link: &cluster.Pair{From: 3, To: 2, Link: cluster.Link{Latency: 50}}}, devices: 4, was: []int{0, 1, 2, 3},
			check: func(q *cluster.Cluster) bool { return len(q.Pairs) == 1 && q.Link(2, 3).Latency == 50 }},
		{name: "default", ch: Change{Default: &cluster.Link{Latency: 3}}, devices: 4, was: []int{0, 1, 2, 3},
			check: func(q *cluster.Cluster) bool { return q.Link(0, 1).Latency == 3 }},
		{name: "speed", ch: Change{Speed: &SpeedChange{Device: 2, Speed: 0.5}}, devices: 4, was: []int{0, 1, 2, 3},
			check: func(q *cluster.Cluster) bool { return q.Devices[2].Speed == 0.5 }},
		{name: "leave", ch: Change{Leave: []int{1}}, devices: 3, was: []int{0, 2, 3},
			check: func(q *cluster.Cluster) bool { return q.Link(1, 2).Latency == 5 }},
		{name: "leave pair gone", ch: Change{Leave: []int{3}}, devices: 3, was: []int{0, 1, 2},
			check: func(q *cluster.Cluster) bool { return len(q.Pairs) == 0 }},
		{name: "join", ch: Change{Join: &Join{Device: cluster.Device{Speed: 2}, Links: []JoinLink{{To: 0, Link: cluster.Link{Latency: 7}}}}}, devices: 5, was: []int{0, 1, 2, 3, -1},
			check: func(q *cluster.Cluster) bool {
				return q.Link(4, 0).Latency == 7 && q.Link(4, 1).Latency == 1 && q.Devices[4].Speed == 2
			}},
		{name: "link out of range", ch: Change{Link: &cluster.Pair{From: 0, To: 4}}, err: "link: device 4 out of range 0..3"},
		{name: "leave out of range", ch: Change{Leave: []int{0, 9}}, err: "leave[1]: device 9 out of range 0..3"},
		{name: "all leave", ch: Change{Leave: []int{0, 1, 2, 3}}, err: "leave: all 4 devices leave"},
		{name: "join link out of range", ch: Change{Join: &Join{Device: cluster.Device{Speed: 1}, Links: []JoinLink{{To: 4}}}}, err: "join: links[0]: device 4 out of range"},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, was, err := Apply(base, c.ch)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(q.Devices) != c.devices || !reflect.DeepEqual(was, c.was) || !c.check(q) {
				t.Errorf("%d devices, was %v, cluster %+v", len(q.Devices), was, q)
			}
			if len(base.Devices) != 4 || len(base.Pairs) != 1 || base.Pairs[0].Latency != 5 || base.Devices[2].Speed != 1 {
				t.Errorf("the cluster given changed: %+v", base)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		tl, err := Parse(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if err := tl.Validate(); err != nil {
			t.Fatalf("parsed but invalid: %v", err)
		}
		c := cluster.Uniform(4)
		for _, ch := range tl.Changes {
			q, _, err := Apply(c, ch)
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("apply error spans lines: %q", err)
				}
				return
			}
			c = q
		}
	})
}

// TestFuzzCorpus keeps the seed corpus in step with the timeline files;
// -update rewrites it.
func TestFuzzCorpus(t *testing.T) {
	fuzzcorpus.Check(t, filepath.Join("testdata", "fuzz", "FuzzParse"), []string{goodDir, badDir}, *update, "./timeline")
}
