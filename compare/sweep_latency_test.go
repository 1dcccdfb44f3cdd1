package compare

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/search"
)

// Fig. 11 and 12 (the Tessel paper's §VI-C) under a latency budget (its
// §VI-D): every point's repetend meets the budget in its steady state,
// so its bubble rate is never below the point's without the budget; the
// tables name the budget; a budget below the critical path is an error
// that is search.ErrLatency.
func TestSweepLatency(t *testing.T) {
	p, err := placement.Builtin("m-shape", placement.Options{Devices: 4, Inference: true})
	if err != nil {
		t.Fatal(err)
	}
	ps := []*placement.Placement{p}
	opt := SweepOptions{NRs: []int{1, 2, 3}, Memories: []int{8}, Jobs: 1}
	free, err := Sweep(context.Background(), ps, opt)
	if err != nil {
		t.Fatal(err)
	}
	// Files: the tables and charts of --out-dir, named SweepFileNames.
	files, err := free.Files("csv")
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := free.Fig11.Write(&table, "csv", false); err != nil {
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
	opt.Latency = 5
	tight, err := Sweep(context.Background(), ps, opt)
	if err != nil {
		t.Fatal(err)
	}
	worse := false
	for k, pt := range tight.Fig11.Points {
		f := free.Fig11.Points[k]
		if pt.BubbleRate == nil || f.BubbleRate == nil {
			t.Fatalf("N_R ≤ %d: no repetend", pt.X)
		}
		if *pt.BubbleRate < *f.BubbleRate {
			t.Errorf("N_R ≤ %d: rate %v under the budget, below %v without it", pt.X, *pt.BubbleRate, *f.BubbleRate)
		}
		worse = worse || *pt.BubbleRate > *f.BubbleRate
		r, err := search.SteadyRepetend(context.Background(), p, search.SteadyOptions{MaxNR: pt.X, Jobs: 1, Latency: 5})
		if err != nil || r.Best == nil {
			t.Fatalf("N_R ≤ %d: %v", pt.X, err)
		}
		if l := r.Best.Latency(p); l > 5 {
			t.Errorf("N_R ≤ %d: steady-state latency %d over the budget 5", pt.X, l)
		}
	}
	if !worse {
		t.Error("the budget changed no point: the test shows nothing")
	}
	var out bytes.Buffer
	if err := tight.Write(&out, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "latency budget 5") {
		t.Errorf("the tables do not name the budget:\n%s", out.String())
	}
	opt.Latency = 4
	if _, err := Sweep(context.Background(), ps, opt); !errors.Is(err, search.ErrLatency) {
		t.Errorf("budget 4 below the critical path 5: error %v, want search.ErrLatency", err)
	}
}
