package chart

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"
)

func sample() *Line {
	return &Line{
		Title: "Fig. 11 <test> & co", XLabel: "N_R", YLabel: "bubble rate", YSuffix: "%", IntegerX: true,
		Series: []Series{
			{Name: "v-shape", Points: []Point{{1, 75}, {2, 50}, {3, 50}, {4, 0}}},
			{Name: "m-shape", Points: []Point{{1, 66.67}, {2, math.NaN()}, {3, 40}, {4, 25}}},
			{Name: "x-shape", Points: []Point{{1, 50}, {2, 20}, {3, 0}, {4, 0}}},
			{Name: "nn-shape", Points: []Point{{1, 60}, {2, 38.46}, {3, 33.33}, {4, 20}}},
			{Name: "k-shape", Points: []Point{{1, 33.33}, {2, 11.11}, {3, 0}, {4, 0}}},
			{Name: "sixth", Points: []Point{{1, 1}}},
		},
	}
}

func render(t *testing.T, c *Line) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestWellFormed parses the SVG as XML and counts what it must draw.
func TestWellFormed(t *testing.T) {
	svg := render(t, sample())
	d := xml.NewDecoder(strings.NewReader(svg))
	count := map[string]int{}
	var root string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
			}
			for _, a := range se.Attr {
				if a.Name.Local == "class" {
					count[a.Value]++
				}
			}
			count[se.Name.Local]++
		}
	}
	if root != "svg" {
		t.Errorf("root element %q, want svg", root)
	}
	if count["series"] != 6 || count["legend"] != 6 {
		t.Errorf("%d series groups and %d legend entries, want 6 each", count["series"], count["legend"])
	}
	// m-shape's gap at N_R = 2 splits its line in two runs, but its lone
	// point at N_R = 1 makes no line: 1 + 1 (m-shape: 3-4 only) + 1 + 1 + 1.
	if count["polyline"] != 5 {
		t.Errorf("%d polylines, want 5 (the gap breaks m-shape's line, a single point draws none)", count["polyline"])
	}
	if !strings.Contains(svg, "Fig. 11 &lt;test&gt; &amp; co") {
		t.Error("title not escaped")
	}
	for _, tick := range []string{">0%<", ">20%<", ">80%<", ">1<", ">4<"} {
		if !strings.Contains(svg, tick) {
			t.Errorf("no tick label %s", tick)
		}
	}
	if strings.Contains(svg, "NaN") {
		t.Error("NaN written into the SVG")
	}
}

// TestDeterministic: the same chart gives the same bytes every time.
func TestDeterministic(t *testing.T) {
	first := render(t, sample())
	for range 5 {
		if got := render(t, sample()); got != first {
			t.Fatal("two renderings of the same chart differ")
		}
	}
}

func TestErrors(t *testing.T) {
	for name, c := range map[string]*Line{
		"no series": {Title: "t"},
		"no points": {Title: "t", Series: []Series{{Name: "a"}}},
		"infinite":  {Title: "t", Series: []Series{{Name: "a", Points: []Point{{1, math.Inf(1)}}}}},
		"NaN x":     {Title: "t", Series: []Series{{Name: "a", Points: []Point{{math.NaN(), 1}}}}},
		"too small": {Title: "t", Width: 100, Height: 100, Series: []Series{{Name: "a", Points: []Point{{1, 1}}}}},
	} {
		if err := c.WriteSVG(io.Discard); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi  float64
		n       int
		integer bool
		want    []float64
	}{
		{0, 75, 6, false, []float64{0, 20, 40, 60, 80}},
		{0, 100, 6, false, []float64{0, 20, 40, 60, 80, 100}},
		{1, 8, 10, true, []float64{1, 2, 3, 4, 5, 6, 7, 8}},
		{3, 16, 10, true, []float64{2, 4, 6, 8, 10, 12, 14, 16}},
		{0, 0.5, 5, false, []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5}},
		{5, 5, 5, true, []float64{5}},
	} {
		got := ticks(c.lo, c.hi, c.n, c.integer)
		for i := range got {
			got[i] = math.Round(got[i]*1e9) / 1e9
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ticks(%v, %v, %d, %v) = %v, want %v", c.lo, c.hi, c.n, c.integer, got, c.want)
		}
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1.5: "1.5", 2.004: "2", -0.001: "0", 123.456: "123.46", 10: "10"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestSinglePoint: one x value is centred, not a division by zero.
func TestSinglePoint(t *testing.T) {
	svg := render(t, &Line{Title: "one", IntegerX: true, Series: []Series{{Name: "a", Points: []Point{{4, 0}}}}})
	if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
		t.Errorf("bad coordinates:\n%s", svg)
	}
}
