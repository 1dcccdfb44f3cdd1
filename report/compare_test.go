package report

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/compare"
	"github.com/tessel-pp/tessel/inference"
	"github.com/tessel-pp/tessel/placement"
)

// A comparison's CSV with masked times shows the placeholder, never a
// time; the table has a title and a legend.
func TestWriteComparisonMasked(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := compare.Run(context.Background(), p, compare.Options{MicroBatches: 8, Memory: 4})
	if err != nil {
		t.Fatal(err)
	}
	cmp.MaskTimes = true
	var out bytes.Buffer
	if err := WriteComparison(&out, cmp, "csv"); err != nil || !strings.Contains(out.String(), compare.TimePlaceholder) {
		t.Errorf("csv with masked times: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := WriteComparison(&out, cmp, "table"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{ComparisonTitle(cmp) + "\n\n", "\n× = no straightforward adaptation"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
	charts, err := ComparisonCharts(cmp)
	if err != nil || len(charts) == 0 {
		t.Fatalf("charts: %d, %v", len(charts), err)
	}
	if page := ComparisonHTML(cmp, charts); !bytes.Contains(page, []byte("<h2>"+charts[0].Title+"</h2>")) {
		t.Errorf("page without the first chart's heading")
	}
	if svg := StackedSVG(charts); !bytes.HasPrefix(svg, []byte("<svg ")) || bytes.Count(svg, []byte("<svg ")) != len(charts)+1 {
		t.Errorf("stacked SVG of %d charts:\n%.300s", len(charts), svg)
	}
}

// The latency sweep's files (the table and the charts of --latency
// --out-dir) and every format.
func TestLatencySweepFiles(t *testing.T) {
	p, err := placement.Load(filepath.Join("..", "testdata", "placements", "flava-infer.json"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.LatencySweep(context.Background(), p, compare.LatencyOptions{MicroBatches: []int{1, 2, 4}, Budgets: []int{200}, Inference: inference.Options{Efficiency: 0.8}})
	if err != nil {
		t.Fatal(err)
	}
	if files, err := LatencyFiles(res, "markdown"); err != nil || len(files) < 3 || files[0].Name != "latency.md" || files[1].Name != "latency.svg" || files[2].Name != "latency-max.svg" {
		t.Errorf("files %v, %v; want latency.md, latency.svg, latency-max.svg", files, err)
	}
	for _, c := range []interface{ WriteSVG(io.Writer) error }{LatencySweepChart(res), LatencyMaxChart(res)} {
		if err := c.WriteSVG(io.Discard); err != nil {
			t.Errorf("chart: %v", err)
		}
	}
	for _, f := range []string{"table", "csv", "json", "markdown"} {
		if err := WriteLatencySweep(io.Discard, res, f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// The sweep's files are named SweepFileNames, the figure's table first;
// under a latency budget the tables name it.
func TestSweepFiles(t *testing.T) {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4, Inference: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.Sweep(context.Background(), []*placement.Placement{p}, compare.SweepOptions{NRs: []int{1, 2}, Memories: []int{8}, Jobs: 1, Latency: 5})
	if err != nil {
		t.Fatal(err)
	}
	files, err := SweepFiles(res, "csv")
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := WriteFigure(&table, &res.Fig11, "csv", false); err != nil {
		t.Fatal(err)
	}
	for k, name := range SweepFileNames("csv") {
		if k >= len(files) || files[k].Name != name || len(files[k].Data) == 0 {
			t.Fatalf("files %v, want %v", files, SweepFileNames("csv"))
		}
	}
	if !bytes.Equal(files[0].Data, table.Bytes()) {
		t.Errorf("fig11.csv:\n%s\nwant\n%s", files[0].Data, table.Bytes())
	}
	var out bytes.Buffer
	if err := WriteSweep(&out, res, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "latency budget 5") {
		t.Errorf("the tables do not name the budget:\n%s", out.String())
	}
}

// A row whose baseline does not fit shows its status and note, and the
// table's legend says what the status means; per-device budgets head it.
func TestWriteComparisonNoFit(t *testing.T) {
	c := &compare.Comparison{Placement: "p", Devices: 2, Memory: 2, MicroBatches: 4, Budgets: []int{2, 3},
		Rows: []compare.Row{{Method: "PipeOffload", Placement: "p", MicroBatches: 4, Status: compare.StatusNoFit, Note: "does not fit: device 0 needs 3 per micro-batch, 2 left"}}}
	var out bytes.Buffer
	if err := WriteComparison(&out, c, "table"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"memory [2 3]", "│ does not fit ", "device 0 needs 3 per micro-batch", "does not fit = the baseline's rule finds no schedule"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in\n%s", want, out.String())
		}
	}
}
