package render

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/schedule"
)

// The text renderings of the golden schedules, in testdata/text.
func TestRenderTextGolden(t *testing.T) {
	for name, s := range goldenSchedules(t) {
		var buf bytes.Buffer
		if err := Text(s, &buf); err != nil {
			t.Fatal(err)
		}
		golden(t, filepath.Join("text", name+".txt"), buf.Bytes())
	}
}

func TestRenderText(t *testing.T) {
	scheds := goldenSchedules(t)
	render := func(s *schedule.Schedule) string {
		var buf bytes.Buffer
		if err := Text(s, &buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}

	// 1F1B on v-shape(4): device 3 runs f0, then b0 for three units, at
	// time 3 (Fig. 4b); the repetend row brackets [3, 7).
	v := render(scheds["v-shape-1f1b"])
	lines := strings.Split(v, "\n")
	row := func(prefix string) string {
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("no line %q in\n%s", prefix, v)
		return ""
	}
	dev3, rep := row("dev 3"), row("repetend ")
	lead := strings.Index(dev3, "f0")
	if want := "f0 b0 -- -- f1"; dev3[lead:lead+len(want)] != want {
		t.Errorf("dev 3 row %q, want %q at time 3", dev3, want)
	}
	if lead != 9+3*3 || len(rep) != lead+11 || rep[lead:] != "[=========]" {
		t.Errorf("repetend row %q, want [3,7) bracketed under\n%s", rep, dev3)
	}

	// m-shape: the shard blocks on every device are upper case.
	m := render(scheds["m-shape-greedy"])
	if strings.Count(m, "F0") != 4 || strings.Count(m, "B2") != 4 {
		t.Errorf("want F0 and B2 once on each of the 4 devices:\n%s", m)
	}

	// Long schedules are cut at MaxTextUnits.
	long := render(scheds["v-shape-long"])
	if !strings.Contains(long, "(cut: 44 more time units not shown, makespan 244)") {
		t.Errorf("no cut note in\n%s", long)
	}
	for _, l := range strings.Split(long, "\n") {
		// "dev 0" and 4 spaces, then cells of "b59" and a space.
		if strings.HasPrefix(l, "dev ") && len(l) > 9+MaxTextUnits*4 {
			t.Errorf("row longer than %d units: %d chars", MaxTextUnits, len(l))
		}
	}

	// Overlaps are drawn, not hidden.
	s := *scheds["v-shape-1f1b"]
	s.Instances = append([]schedule.Instance(nil), s.Instances...)
	s.Instances[0].Start++
	if got := render(&s); !strings.Contains(got, "##") || !strings.Contains(got, "# overlap") {
		t.Errorf("no overlap marker in\n%s", got)
	}
}
