package study_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/golden"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/study"
)

func sweepJSON(t *testing.T, opts study.SweepOptions) compare.SweepResult {
	t.Helper()
	opts.Format = "json"
	var out bytes.Buffer
	if err := study.Sweep(context.Background(), opts, &out); err != nil {
		t.Fatal(err)
	}
	var o compare.SweepResult
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func smallSweep() study.SweepOptions {
	return study.SweepOptions{Placements: []string{"v-shape", "k-shape"}, Devices: 4, ForwardTime: 1, BackwardTime: 3, NR: "1-5", Memory: "1-5", Format: "table"}
}

// rates lists one placement's bubble rates by x (-1: no repetend).
func rates(f compare.Figure, placement string) []float64 {
	var out []float64
	for _, pt := range f.Points {
		if pt.Placement != placement {
			continue
		}
		r := -1.0
		if pt.BubbleRate != nil {
			r = *pt.BubbleRate
		}
		out = append(out, r)
	}
	return out
}

// TestSweepPaper pins the shapes of the paper's ablation figures.
//
// Reference: Fig. 11, §VI-C: with memory unconstrained the bubble rate
// falls as N_R grows and "the V-Shape placement requires a minimum of 4
// micro-batches, which corresponds to the number of devices" to reach 0.
//
// Reference: Fig. 12, §VI-C: with N_R fixed where Fig. 11 reaches 0, "a
// lower memory capacity corresponds to a larger bubble rate" and "as the
// memory capacity becomes sufficiently large, all schedules can
// ultimately achieve a zero bubble rate".
func TestSweepPaper(t *testing.T) {
	o := sweepJSON(t, smallSweep())
	v := rates(o.Fig11, "v-shape")
	if len(v) != 5 {
		t.Fatalf("v-shape Fig. 11: %d points, want 5", len(v))
	}
	for k, r := range v {
		nr := k + 1
		if nr < 4 && r <= 0 {
			t.Errorf("Fig. 11 v-shape N_R ≤ %d: bubble rate %v, want > 0", nr, r)
		}
		if nr >= 4 && r != 0 {
			t.Errorf("Fig. 11 v-shape N_R ≤ %d: bubble rate %v, want exactly 0", nr, r)
		}
	}
	if o.Fig12.NR["v-shape"] != 4 {
		t.Errorf("Fig. 12 v-shape at N_R %d, want 4 (where Fig. 11 reaches 0)", o.Fig12.NR["v-shape"])
	}
	for _, name := range []string{"v-shape", "k-shape"} {
		for _, fig := range []compare.Figure{o.Fig11, o.Fig12} {
			rs := rates(fig, name)
			last := rs[len(rs)-1]
			if last != 0 {
				t.Errorf("Fig. %s %s: rates %v do not reach 0", fig.Figure, name, rs)
			}
			prev := 2.0 // above any rate; "none" (-1) only below the first repetend
			for k, r := range rs {
				if r < 0 && k > 0 && rs[k-1] >= 0 {
					t.Errorf("Fig. %s %s: no repetend at x=%d after one at x=%d: %v", fig.Figure, name, fig.Xs[k], fig.Xs[k-1], rs)
				}
				if r >= 0 && r > prev {
					t.Errorf("Fig. %s %s: bubble rate rises at x=%d: %v", fig.Figure, name, fig.Xs[k], rs)
				}
				if r >= 0 {
					prev = r
				}
			}
		}
	}
	// A budget of 1 leaves no room for k-shape's cross block after a
	// branch forward: no repetend at all.
	if k := rates(o.Fig12, "k-shape"); k[0] != -1 {
		t.Errorf("Fig. 12 k-shape M=1: %v, want no repetend", k[0])
	}
}

// TestSweepOutDir writes the files, refuses to overwrite them without
// --force, and the charts are well-formed, deterministic SVG.
func TestSweepOutDir(t *testing.T) {
	dir := t.TempDir()
	opts := smallSweep()
	opts.Placements, opts.NR, opts.Memory, opts.Format, opts.OutDir = []string{"v-shape"}, "3-4", "3-4", "csv", dir
	var out bytes.Buffer
	if err := study.Sweep(context.Background(), opts, &out); err != nil {
		t.Fatal(err)
	}
	want := []string{"fig11.csv", "fig11.svg", "fig12.csv", "fig12.svg"}
	for _, f := range want {
		if !strings.Contains(out.String(), filepath.Join(dir, f)) {
			t.Errorf("stdout does not say it wrote %s:\n%s", f, out.String())
		}
	}
	first := map[string][]byte{}
	for _, f := range want {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		first[f] = data
	}
	if got := string(first["fig11.csv"]); got != "figure,placement,nr,memory,bubble_rate,period,repetend_nr,proven\n"+
		"11,v-shape,3,0,0.500000,8,2,true\n11,v-shape,4,0,0.000000,4,4,true\n" {
		t.Errorf("fig11.csv:\n%s", got)
	}
	for _, f := range []string{"fig11.svg", "fig12.svg"} {
		d := xml.NewDecoder(bytes.NewReader(first[f]))
		for {
			_, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s is not well-formed XML: %v", f, err)
			}
		}
	}

	err := study.Sweep(context.Background(), opts, io.Discard)
	if !inputerr.Is(err) || !strings.Contains(err.Error(), "exists (use --force") {
		t.Fatalf("second run without --force: want a usage error, got %v", err)
	}
	opts.Force = true
	if err := study.Sweep(context.Background(), opts, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, f := range want {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, first[f]) {
			t.Errorf("%s differs between two runs", f)
		}
	}
}

// TestSweepTable pins the table layout of a tiny sweep.
func TestSweepTable(t *testing.T) {
	opts := smallSweep()
	opts.Placements, opts.NR, opts.Memory = []string{"v-shape", "k-shape"}, "2-4", "3-4"
	for _, format := range []string{"table", "markdown"} {
		opts.Format = format
		var out bytes.Buffer
		if err := study.Sweep(context.Background(), opts, &out); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "sweep-small."+textfmt.Ext(format), out.Bytes())
	}
}

func TestSweepUsage(t *testing.T) {
	for _, c := range []struct {
		change func(*study.SweepOptions)
		want   string
	}{
		{func(o *study.SweepOptions) { o.Format = "xml" }, `unknown --format "xml"`},
		{func(o *study.SweepOptions) { o.Placements = nil }, "names no placement"},
		{func(o *study.SweepOptions) { o.Placements = []string{"w-shape"} }, "w-shape"},
		{func(o *study.SweepOptions) { o.NR = "4-2" }, "--nr"},
		{func(o *study.SweepOptions) { o.Memory = "x" }, "--memory"},
		{func(o *study.SweepOptions) { o.Fig12NR = -1 }, "--fig12-nr"},
	} {
		opts := smallSweep()
		c.change(&opts)
		err := study.Sweep(context.Background(), opts, io.Discard)
		if !inputerr.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want a usage error with %q, got %v", c.want, err)
		}
	}
}
