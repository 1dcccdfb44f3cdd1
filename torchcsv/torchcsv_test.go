package torchcsv

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestParseAction(t *testing.T) {
	for _, tc := range []struct {
		cell string
		want Action
		err  string
	}{
		{"0F1", Action{0, placement.Forward, 1}, ""},
		{" 12B3 ", Action{12, placement.Backward, 3}, ""},
		{"2I0", Action{2, placement.Input, 0}, ""},
		{"3W10", Action{3, placement.Weight, 10}, ""},
		{"F1", Action{}, "want STAGE TYPE MICRO-BATCH"},
		{"0F", Action{}, "no micro-batch"},
		{"01", Action{}, "no type"},
		{"0f1", Action{}, `type "f" is not F, B, I or W`},
		{"0BW1", Action{}, "compute_comms"},
		{"0F1a", Action{}, `micro-batch "1a" is not a number`},
		{"0F1234567890", Action{}, "more than 9 digits"},
	} {
		got, err := ParseAction(tc.cell)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseAction(%q) = %v, %v; want error %q", tc.cell, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseAction(%q) = %v, %v; want %v", tc.cell, got, err, tc.want)
		}
		if s := got.String(); s != strings.TrimSpace(tc.cell) {
			t.Errorf("%v.String() = %q, want %q", got, s, strings.TrimSpace(tc.cell))
		}
	}
}

// Empty cells are idle steps: dropped on reading. Quotes, CRLF and spaces
// as other CSV writers produce them are read too; an empty line is a rank
// without actions.
func TestParse(t *testing.T) {
	tab, err := Parse([]byte(",0F0, \"0B0\"\r\n\r\n,,1F0,1B0,\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(tab.Marshal()), "0F0,0B0\n\n1F0,1B0\n"; got != want {
		t.Errorf("Marshal = %q, want %q", got, want)
	}
}

// Every bad file gives one line that names the problem; the stage of the
// pipeline that refuses it is the one that should.
func TestBadFiles(t *testing.T) {
	for _, tc := range []struct {
		file, stage, err string
	}{
		{"empty.csv", "parse", "no actions: want one line of actions per rank"},
		{"unknown-type.csv", "parse", `line 1 (rank 0), cell 2: action "0X0": type "X" is not F, B, I or W`},
		{"comm-action.csv", "parse", "communication actions belong to the compute_comms format"},
		{"no-micro.csv", "parse", "no micro-batch"},
		{"no-stage.csv", "parse", "want STAGE TYPE MICRO-BATCH"},
		{"trailing-junk.csv", "parse", `micro-batch "1x" is not a number`},
		{"stage-on-two-ranks.csv", "validate", "stage 0 is on rank 0 and on rank 1: each stage runs on one rank"},
		{"backward-before-forward.csv", "validate", "rank 0, action 1 (0B0): runs before the forward 0F0"},
		{"weight-before-input.csv", "validate", "rank 0, action 2 (0W0): runs before the input gradient 0I0"},
		{"no-weight.csv", "validate", "stage 0: micro-batch 0 has an input gradient but no weight gradient (0W0)"},
		{"missing-forward.csv", "validate", "stage 0: no forward of micro-batch 1"},
		{"duplicate.csv", "validate", "rank 0, action 2 (0F0): appears twice"},
		{"backward-and-input.csv", "validate", "micro-batch 0 of stage 0 already has its 0B0"},
		{"no-backward.csv", "validate", "stage 0: micro-batch 1 has neither a full backward (0B1) nor an input gradient (0I1)"},
		{"huge-stage.csv", "validate", "stage or micro-batch beyond the 2 actions of the file"},
		{"deadlock.csv", "import", "the ranks' orders cannot run (PyTorch would wait forever)"},
		{"mixed.csv", "import", "stage 0 runs full backwards (B) for some micro-batches and input and weight gradients (I, W) for others"},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "bad", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		stage := "parse"
		tab, err := Parse(data)
		if err == nil {
			stage = "validate"
			_, err = Validate(tab)
		}
		if err == nil {
			stage = "import"
			_, err = Import(tab, DefaultImportOptions())
		}
		switch {
		case err == nil:
			t.Errorf("%s: accepted", tc.file)
		case stage != tc.stage || !strings.Contains(err.Error(), tc.err):
			t.Errorf("%s: %s: %v; want %s: %q", tc.file, stage, err, tc.stage, tc.err)
		case strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: error of more than one line: %q", tc.file, err)
		}
	}
}

// A CSV as PyTorch's built-in schedules dump it (1F1B; a split backward
// with idle cells and CRLF) imports into the schedule in the golden file,
// and exports back to the same actions.
func TestImportGolden(t *testing.T) {
	for _, name := range []string{"1f1b", "split-idle-cells"} {
		data, err := os.ReadFile(filepath.Join("testdata", name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		tab, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		opt := DefaultImportOptions()
		opt.Name = name
		s, err := Import(tab, opt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b bytes.Buffer
		if err := s.Write(&b); err != nil {
			t.Fatal(err)
		}
		golden := filepath.Join("testdata", name+".golden.json")
		if *update {
			if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./torchcsv -update)", err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("%s: imported schedule differs from %s (run go test ./torchcsv -update and review)", name, golden)
		}
		back, err := Export(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(back.Marshal()), string(tab.Marshal()); got != want {
			t.Errorf("%s: export(import) =\n%s\nwant\n%s", name, got, want)
		}
	}
}

// Import takes the times and memory it is given, and its budget: a budget
// below the schedule's peak is an error naming the device.
func TestImportOptions(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "1f1b.csv"))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultImportOptions()
	opt.ForwardTime, opt.BackwardTime = 2, 5
	s, err := Import(tab, opt)
	if err != nil {
		t.Fatal(err)
	}
	// 1F1B on 4 stages, 8 micro-batches: the critical path of one
	// micro-batch (4 forwards, 4 backwards) plus 7 more (F+B) on the last
	// stage: 4·2 + 4·5 + 7·7 = 77.
	if got := schedule.Makespan(s); got != 77 {
		t.Errorf("makespan %d, want 77", got)
	}
	if got := schedule.Measure(s).PeakMemory; !slices.Equal(got, []int{4, 3, 2, 1}) {
		t.Errorf("peak memory %v, want [4 3 2 1] (1F1B)", got)
	}
	opt.Memory = 3
	if _, err := Import(tab, opt); err == nil || !strings.Contains(err.Error(), "device 0") {
		t.Errorf("budget 3 under a peak of 4: got %v, want an error naming device 0", err)
	}
}

// CSVs of PyTorch's own schedules, as PyTorch 2.11 computes them for 4
// ranks, 8 stages and 8 micro-batches (pipeline_order written with
// csv.writer, empty cells for idle steps): interleaved 1F1B (loop
// placement, B), interleaved zero bubble (loop, I and W) and ZB-V (V
// placement, I and W). Each passes the validator, imports into a verified
// schedule with the stage→rank map of its file, and exports back to its
// own actions.
func TestPyTorchSchedules(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stageRank []int
		split     bool
	}{
		{"pytorch-interleaved-1f1b", []int{0, 1, 2, 3, 0, 1, 2, 3}, false},
		{"pytorch-interleaved-zb", []int{0, 1, 2, 3, 0, 1, 2, 3}, true},
		{"pytorch-zbv", []int{0, 1, 2, 3, 3, 2, 1, 0}, true},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", tc.name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		tab, err := Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		sum, err := Validate(tab)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if sum.Ranks != 4 || sum.MicroBatches != 8 || !slices.Equal(sum.StageRank, tc.stageRank) || sum.Split[0] != tc.split {
			t.Errorf("%s: %+v, want 4 ranks, 8 micro-batches, stages on %v, split %v", tc.name, sum, tc.stageRank, tc.split)
		}
		s, err := Import(tab, DefaultImportOptions())
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		back, err := Export(s)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(back.Marshal()) != string(tab.Marshal()) {
			t.Errorf("%s: export(import) differs from the file's actions", tc.name)
		}
	}
}
