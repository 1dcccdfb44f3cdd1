package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// --svg, --html and --schedules write one chart and one schedule file per
// method that has a schedule; every schedule file re-verifies, the SVG is
// well-formed XML, and existing files are kept without --force.
func TestCompareFiles(t *testing.T) {
	dir := t.TempDir()
	svg, page, scheds := filepath.Join(dir, "c.svg"), filepath.Join(dir, "c.html"), filepath.Join(dir, "s")
	args := []string{"compare", "--placement", "k-shape", "--memory", "6", "--nr", "3", "-n", "8", "--svg", svg, "--html", page, "--schedules", scheds}
	if code, _, errOut := runCLI(t, args...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	files, err := filepath.Glob(filepath.Join(scheds, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schedule files: %v", err)
	}
	for _, f := range files {
		s, err := schedule.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := verify.Schedule(s); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	data, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	charts := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "svg" {
			charts++
		}
	}
	if charts != len(files)+1 {
		t.Errorf("%d nested charts for %d schedules", charts-1, len(files))
	}
	html, _ := os.ReadFile(page)
	if strings.Count(string(html), "<h2>") != len(files) || !strings.Contains(string(html), "<table>") {
		t.Errorf("HTML page lacks the table or a chart")
	}
	if code, _, _ := runCLI(t, args...); code != 2 {
		t.Errorf("second run without --force: exit %d, want 2", code)
	}
}
