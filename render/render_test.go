package render

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// element is one XML start element met while walking a document.
type element struct {
	name  string
	attrs map[string]string
	text  string // character data directly inside, for <text>
}

// walkXML decodes doc strictly to the end and returns its elements; a
// document that is not well-formed fails the test.
func walkXML(t *testing.T, doc []byte) []element {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	dec.Strict = true
	var out []element
	var open []int // indices into out of the open elements
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := element{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
			open = append(open, len(out)-1)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			if len(open) > 0 {
				out[open[len(open)-1]].text += string(tok)
			}
		}
	}
	if len(open) != 0 {
		t.Fatalf("%d elements left open", len(open))
	}
	return out
}

// kindStyles are the classes and fills the charts promise (docs/formats.md):
// the Tessel paper's blue and orange, the zero-bubble papers' green and
// purple.
var kindStyles = map[placement.Kind][2]string{
	placement.Forward:  {"fwd", "#4e79a7"},
	placement.Backward: {"bwd", "#f28e2b"},
	placement.Input:    {"inp", "#59a14f"},
	placement.Weight:   {"wgt", "#b07aa1"},
}

func hasClass(e element, class string) bool {
	return slices.Contains(strings.Fields(e.attrs["class"]), class)
}

func TestRenderSVG(t *testing.T) {
	scheds := goldenSchedules(t)
	scheds["split"] = splitGroup(t)
	for name, s := range scheds {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := SVG(s, &buf); err != nil {
				t.Fatal(err)
			}
			checkChart(t, s, walkXML(t, buf.Bytes()))
		})
	}
}

// checkChart checks the elements of a chart of s: one bar per instance
// (counted by distinct data-block and data-micro), coloured by kind, with
// its micro-batch number; repetend lines; the title.
func checkChart(t *testing.T, s *schedule.Schedule, elems []element) {
	t.Helper()
	p := s.Placement
	bars := map[schedule.Ref]int{}
	var repetends, svgs int
	var titleText string
	micros := map[string]int{}
	for _, e := range elems {
		switch {
		case e.name == "svg":
			svgs++
		case e.name == "rect" && hasClass(e, "bar"):
			i := p.Index(e.attrs["data-block"])
			var m int
			if _, err := fmt.Sscan(e.attrs["data-micro"], &m); err != nil || i < 0 {
				t.Fatalf("bar with data-block %q data-micro %q", e.attrs["data-block"], e.attrs["data-micro"])
			}
			bars[schedule.Ref{Block: i, Micro: m}]++
			wantClass, wantFill := kindStyles[p.Blocks[i].Kind][0], kindStyles[p.Blocks[i].Kind][1]
			if !hasClass(e, wantClass) || e.attrs["fill"] != wantFill {
				t.Errorf("bar of %s: class %q fill %q, want %s %s", p.Blocks[i].ID, e.attrs["class"], e.attrs["fill"], wantClass, wantFill)
			}
		case e.name == "line" && hasClass(e, "repetend"):
			repetends++
			if e.attrs["stroke"] != colourRepetend {
				t.Errorf("repetend line stroke %q", e.attrs["stroke"])
			}
		case e.name == "text" && hasClass(e, "title"):
			titleText = e.text
		case e.name == "text" && hasClass(e, "micro"):
			micros[e.text]++
		}
	}
	if svgs != 1 {
		t.Errorf("%d svg elements", svgs)
	}
	if len(bars) != len(s.Instances) {
		t.Errorf("%d distinct bars, want one per instance: %d", len(bars), len(s.Instances))
	}
	for _, in := range s.Instances {
		runs := len(rowRuns(p.Blocks[in.Block].Devices))
		if bars[in.Ref()] != runs {
			t.Errorf("%s: %d bars, want %d", refName(s, in.Ref()), bars[in.Ref()], runs)
		}
	}
	wantLines := 0
	if s.Repetend != nil {
		wantLines = s.Repetend.Iterations + 1
	}
	if repetends != wantLines {
		t.Errorf("%d repetend lines, want %d", repetends, wantLines)
	}
	m := schedule.Measure(s)
	for _, want := range []string{p.Name, fmt.Sprintf("N = %d", s.MicroBatches), budgetText(s), fmt.Sprintf("bubble rate %.2f%%", 100*m.BubbleRate)} {
		if !strings.Contains(titleText, want) {
			t.Errorf("title %q lacks %q", titleText, want)
		}
	}
	// Micro-batch numbers: bars are wide enough in these charts.
	for n := range s.MicroBatches {
		if micros[fmt.Sprint(n)] == 0 {
			t.Errorf("no micro-batch number %d in a bar", n)
		}
	}
}

func TestRenderHTML(t *testing.T) {
	scheds := goldenSchedules(t)
	for name, s := range scheds {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := HTML(s, &buf); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			elems := walkXML(t, buf.Bytes())
			checkChart(t, s, elems)
			// Self-contained: no reference to anything outside the page
			// (the SVG namespace is a name, not a resource).
			rest := strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, "")
			for _, ref := range []string{"http:", "https:", "src=", "href=", "url(", "@import"} {
				if strings.Contains(rest, ref) {
					t.Errorf("page refers to an external resource: %q", ref)
				}
			}
			cells := map[string]string{}
			var key string
			for _, e := range elems {
				switch e.name {
				case "th":
					key = e.text
				case "td":
					cells[key] = e.text
				}
			}
			m := schedule.Measure(s)
			want := map[string]string{
				"placement":              s.Placement.Name,
				"makespan":               fmt.Sprint(m.Makespan),
				"peak memory per device": intList(m.PeakMemory),
				"verifier":               "valid",
			}
			for k, v := range want {
				if cells[k] != v {
					t.Errorf("table %q = %q, want %q", k, cells[k], v)
				}
			}
		})
	}
	// An invalid schedule says so.
	s := *scheds["v-shape-1f1b"]
	s.Memory = 1
	var buf bytes.Buffer
	if err := HTML(&s, &buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `<td class="invalid">invalid: `) {
		t.Error("the page of an invalid schedule does not say it is invalid")
	}
}

func TestRenderTrace(t *testing.T) {
	scheds := goldenSchedules(t)
	scheds["split"] = splitGroup(t)
	for name, s := range scheds {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Trace(s, &buf); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				TraceEvents []struct {
					Name string
					Cat  string
					Ph   string
					Ts   int64
					Dur  int64
					Pid  int
					Tid  int
					Args struct {
						Name    string
						Block   string
						Micro   int
						Devices []int
					}
				} `json:"traceEvents"`
				DisplayTimeUnit string `json:"displayTimeUnit"`
			}
			dec := json.NewDecoder(&buf)
			dec.DisallowUnknownFields()
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("not valid trace JSON: %v", err)
			}
			p := s.Placement
			seen := map[schedule.Ref]bool{}
			threads := 0
			for _, e := range doc.TraceEvents {
				switch e.Ph {
				case "X":
					i := p.Index(e.Args.Block)
					r := schedule.Ref{Block: i, Micro: e.Args.Micro}
					if i < 0 || seen[r] {
						t.Fatalf("event %s: unknown or repeated instance", e.Name)
					}
					seen[r] = true
					b := p.Blocks[i]
					if e.Tid != b.Devices[0] || !slices.Equal(e.Args.Devices, b.Devices) || e.Dur != int64(b.Time)*TraceUnit || e.Pid != 0 || e.Cat != string(b.Kind) {
						t.Errorf("event %s: tid %d devices %v dur %d", e.Name, e.Tid, e.Args.Devices, e.Dur)
					}
				case "M":
					if e.Name == "thread_name" {
						threads++
					}
				default:
					t.Errorf("unexpected phase %q", e.Ph)
				}
			}
			if len(seen) != len(s.Instances) {
				t.Errorf("%d X events, want one per instance: %d", len(seen), len(s.Instances))
			}
			for _, in := range s.Instances {
				if !seen[in.Ref()] {
					t.Errorf("no event for %s", refName(s, in.Ref()))
				}
			}
			if threads != p.Devices {
				t.Errorf("%d thread names, want %d", threads, p.Devices)
			}
		})
	}
}

// The renderings of the small k-shape schedule, in testdata/render, and
// every rendering is deterministic.
func TestRenderGolden(t *testing.T) {
	s := goldenSchedules(t)["k-shape-greedy"]
	for _, r := range []struct {
		ext    string
		render func(*schedule.Schedule, io.Writer) error
	}{{"svg", SVG}, {"html", HTML}, {"trace.json", Trace}, {"txt", Text}} {
		var a, b bytes.Buffer
		if err := r.render(s, &a); err != nil {
			t.Fatal(err)
		}
		if err := r.render(s, &b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s rendering differs between two runs", r.ext)
		}
		golden(t, filepath.Join("render", "k-shape-greedy."+r.ext), a.Bytes())
	}
}

func TestRenderErrors(t *testing.T) {
	bad := &schedule.Schedule{Spec: spec.Spec{Placement: &placement.Placement{Name: "bad", Devices: 1}, MicroBatches: 1}}
	for _, r := range []func(*schedule.Schedule, io.Writer) error{Text, SVG, HTML, Trace} {
		if err := r(nil, io.Discard); err == nil {
			t.Error("rendering nil succeeded")
		}
		if err := r(bad, io.Discard); err == nil || !strings.Contains(err.Error(), "no blocks") {
			t.Errorf("rendering an invalid placement: %v", err)
		}
	}
}
