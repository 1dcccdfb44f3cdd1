package torchcsv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// Cases of the public suites, written from their facts (ranks, stages,
// micro-batches, orders), not copied: torchtitan's custom schedule,
// PyTorch's lowering to sends and receives and its activation liveness.

// titanCustom is the order of torchtitan's custom-schedule test
// (tests/assets/custom_schedule.csv, run by its llama3_debugmodel_pp2_custom_csv
// configuration: two ranks, four stages in loop order, eight
// micro-batches): each rank runs the forwards of its first stage, then of
// its second, then the input and weight gradients of two micro-batches at
// a time, second stage first, each I followed by its W.
func titanCustom() string {
	var b strings.Builder
	for r := range 2 {
		var row []string
		for _, s := range []int{r, r + 2} {
			for m := range 8 {
				row = append(row, fmt.Sprintf("%dF%d", s, m))
			}
		}
		for k := 0; k < 8; k += 2 {
			for _, s := range []int{r + 2, r} {
				for m := k; m < k+2; m++ {
					row = append(row, fmt.Sprintf("%dI%d", s, m), fmt.Sprintf("%dW%d", s, m))
				}
			}
		}
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	return b.String()
}

// torchtitan's custom schedule imports as a verified schedule whose
// stages are torchtitan's loop (what its PipelineScheduleMulti builds),
// exports back to itself, and merges its backwards as PyTorch's _merge_bw
// does (each I followed by its W becomes one B).
func TestTorchtitanCustomSchedule(t *testing.T) {
	csv := titanCustom()
	if !strings.HasPrefix(csv, "0F0,0F1,0F2,0F3,0F4,0F5,0F6,0F7,2F0,") || !strings.Contains(csv, ",3I6,3W6,3I7,3W7,1I6,1W6,1I7,1W7\n") {
		t.Fatalf("the order is not torchtitan's:\n%s", csv)
	}
	tab, err := Parse([]byte(csv))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Import(tab, DefaultImportOptions())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Titan(s, TitanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Style != StyleLoop || b.StagesPerRank != 2 || b.MicroBatches != 8 || string(b.Table.Marshal()) != csv {
		t.Errorf("bundle: style %s, %d per rank, %d micro-batches", b.Style, b.StagesPerRank, b.MicroBatches)
	}
	m, err := MergeBackward(s)
	if err != nil {
		t.Fatal(err)
	}
	mt, err := Export(m)
	if err != nil {
		t.Fatal(err)
	}
	want := csv
	for st := range 4 {
		for mb := range 8 {
			want = strings.ReplaceAll(want, fmt.Sprintf("%dI%d,%dW%d", st, mb, st, mb), fmt.Sprintf("%dB%d", st, mb))
		}
	}
	if got := string(mt.Marshal()); got != want {
		t.Errorf("merged\n%s want\n%s", got, want)
	}
	// The same work in the same order, but each gradient leaves its stage
	// after the whole B rather than after the I: no shorter.
	if schedule.Makespan(m) < schedule.Makespan(s) {
		t.Errorf("merged makespan %d, split %d", schedule.Makespan(m), schedule.Makespan(s))
	}
}

// Merging where a W does not follow its I (ZB-V defers weight gradients
// into the bubbles): no I or W is left, each B at its I's place, and the
// merged schedule is verified, no shorter than the split one's.
func TestMergeBackwardDeferredWeights(t *testing.T) {
	tab, s := importTestdata(t, "pytorch-zbv.csv")
	m, err := MergeBackward(s)
	if err != nil {
		t.Fatal(err)
	}
	mt, err := Export(m)
	if err != nil {
		t.Fatal(err)
	}
	for r, row := range mt.Rows {
		var want []string
		for _, a := range tab.Rows[r] {
			switch a.Kind {
			case placement.Input:
				want = append(want, Action{a.Stage, placement.Backward, a.Micro}.String())
			case placement.Weight:
			default:
				want = append(want, a.String())
			}
		}
		var got []string
		for _, a := range row {
			got = append(got, a.String())
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("rank %d: merged %v, want %v", r, got, want)
		}
	}
	if schedule.Makespan(m) < schedule.Makespan(s) {
		t.Errorf("merged makespan %d under the split one's %d", schedule.Makespan(m), schedule.Makespan(s))
	}
	// A schedule with nothing to merge comes back as it is.
	if again, err := MergeBackward(m); err != nil || again != m {
		t.Errorf("merging a merged schedule: %v", err)
	}
}

// PyTorch's lowering of 1F1B on two ranks and two micro-batches (the
// case of its test_schedule's send/receive lowering), as its runtime runs
// a CSV: the runtime drops idle cells before lowering (its
// _add_unshard_reshard skips them), so the ranks take turns from their
// first actions.
func TestPyTorchLowering1F1B(t *testing.T) {
	tab, err := Parse([]byte("0F0,0F1,0B0,0B1\n1F0,1B0,1F1,1B1\n"))
	if err != nil {
		t.Fatal(err)
	}
	ct, err := AddSendRecv(tab)
	if err != nil {
		t.Fatal(err)
	}
	want := "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n" +
		"1RECV_F0,1F0,1RECV_F1,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n"
	if got := string(ct.Marshal()); got != want {
		t.Errorf("lowered\n%s want\n%s", got, want)
	}
	dt, err := DeferRecv(ct, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	want = "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n" +
		"1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n"
	if got := string(dt.Marshal()); got != want {
		t.Errorf("deferred\n%s want\n%s", got, want)
	}
}

// Activation liveness of PyTorch's schedules, from their warmup rules: in
// Interleaved1F1B, rank r of P runs (v−1)·P + 2·(P−1−r) forwards before
// its first backward (its get_rank_warmup_ops, micro-batches per round P),
// then one more, so that many activations are live at its peak; in ZB-V
// every rank holds 2P at its peak (2(P−r)−1 forwards of its first stage,
// r pairs of forwards, then a forward of its second stage before the
// first input and weight gradient). The imported schedules' peak memory,
// one unit per live activation, is that count.
func TestPyTorchLiveness(t *testing.T) {
	const P, v, n = 4, 2, 8
	for _, tc := range []struct {
		file string
		peak func(r int) int
	}{
		{"pytorch-interleaved-1f1b.csv", func(r int) int { return min(n*v, (v-1)*P+2*(P-1-r)) + 1 }},
		{"pytorch-zbv.csv", func(int) int { return 2 * P }},
	} {
		_, s := importTestdata(t, tc.file)
		for r, got := range schedule.Measure(s).PeakMemory {
			if got != tc.peak(r) {
				t.Errorf("%s: rank %d holds %d activations at its peak, want %d", tc.file, r, got, tc.peak(r))
			}
		}
	}
}

// importTestdata parses testdata/name and imports it with the default
// times and memory.
func importTestdata(t *testing.T, name string) (*Table, *schedule.Schedule) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	tab, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Import(tab, DefaultImportOptions())
	if err != nil {
		t.Fatal(err)
	}
	return tab, s
}
