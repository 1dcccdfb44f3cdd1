package fsdpplan_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/fsdpplan"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/fsdp"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/torchcsv"
)

// imported is a compute-only CSV imported with the default costs.
func imported(t *testing.T, csv string) *schedule.Schedule {
	t.Helper()
	rd, err := torchcsv.Read([]byte(csv), torchcsv.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := torchcsv.Import(rd.Table, torchcsv.DefaultImportOptions())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// PyTorch's lowering (_add_unshard_reshard, then _add_reduce_grad, as
// torch/distributed/pipelining/runtime.py has them at pytorch/pytorch
// commit 7da5af48a46866735d7d34a8fb24e5e9456952af): before each compute
// the next max_active_stages distinct stages are held, the others
// released first, the missing ones gathered in order of use; a stage's
// gradients are reduced right after its last weight gradient; what is
// held at the end is released. The rank order is the one of PyTorch's
// activation-liveness example (two stages on one rank, two
// micro-batches: F0,0 F1,0 F0,1 B1,0 B0,0 F1,1 B1,1 B0,1).
func TestPyTorchLowering(t *testing.T) {
	s := imported(t, "0F0,1F0,0F1,1B0,0B0,1F1,1B1,0B1\n")
	for _, tc := range []struct {
		maxActive int
		want      string
	}{
		{1, "0UNSHARD,0F0,0RESHARD,1UNSHARD,1F0,1RESHARD,0UNSHARD,0F1,0RESHARD,1UNSHARD,1B0,1RESHARD,0UNSHARD,0B0," +
			"0RESHARD,1UNSHARD,1F1,1B1,1REDUCE_GRAD,1RESHARD,0UNSHARD,0B1,0REDUCE_GRAD,0RESHARD\n"},
		{2, "0UNSHARD,1UNSHARD,0F0,1F0,0F1,1B0,0B0,1F1,1B1,1REDUCE_GRAD,1RESHARD,0B1,0REDUCE_GRAD,0RESHARD\n"},
	} {
		m := model(s, tc.maxActive, 1, 1, 1)
		fs, err := fsdpplan.PyTorch(s, m, fsdp.Lookahead{Policy: "full"})
		if err != nil {
			t.Fatal(err)
		}
		ct, _, err := torchcsv.ExportFSDP(fs, torchcsv.CommsOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := string(ct.Marshal()); got != tc.want {
			t.Errorf("max_active_stages %d:\n got %s want %s", tc.maxActive, got, tc.want)
		}
		// The CSV reads back as the same plan and schedule.
		rd, err := torchcsv.Read(ct.Marshal(), torchcsv.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		back, err := torchcsv.ImportFSDP(rd, s, &m)
		if err != nil {
			t.Fatal(err)
		}
		if back.Makespan != fs.Makespan || !slices.Equal(back.Peak, fs.Peak) {
			t.Errorf("max_active_stages %d: read back makespan %d peaks %v, want %d %v", tc.maxActive, back.Makespan, back.Peak, fs.Makespan, fs.Peak)
		}
	}
}

// unshard_lookahead as PyTorch's pipelining documentation states it
// (section "Controlling FSDP Unshard Lookahead"): "full" issues
// max_active_stages on every rank; "auto" min(rank + 2,
// max_active_stages), which for PP4 with max_active_stages 4 is
// (2, 3, 4, 4); a tuple gives each rank its own.
func TestLookaheadDistances(t *testing.T) {
	for _, tc := range []struct {
		policy string
		m      int
		want   []int
	}{
		{"auto", 4, []int{2, 3, 4, 4}},
		{"full", 4, []int{4, 4, 4, 4}},
		{"auto", 2, []int{2, 2, 2, 2}},
		{"1,3,2,9", 4, []int{1, 3, 2, 4}},
	} {
		l, err := fsdp.ParseLookahead(tc.policy)
		if err != nil {
			t.Fatal(err)
		}
		for d, want := range tc.want {
			if got := l.Distance(d, tc.m); got != want {
				t.Errorf("%s, max_active_stages %d: rank %d distance %d, want %d", tc.policy, tc.m, d, got, want)
			}
		}
	}
	for _, bad := range []string{"", "0", "x", "1,,2", "-1"} {
		if _, err := fsdp.ParseLookahead(bad); err == nil {
			t.Errorf("lookahead %q accepted", bad)
		}
	}
}

// PP4 with four stages per rank (interleaved 1F1B, eight micro-batches),
// max_active_stages 4: PyTorch's "full" gathers four stages ahead,
// "auto" (2, 3, 4, 4); tessel's placement is never longer and, where a
// smaller residency window costs no time, holds less.
func TestCompareWithPyTorch(t *testing.T) {
	s := built(t, "1f1b-interleaved", placement.Options{Devices: 4, Chunks: 4, Order: placement.Loop}, 8)
	m := model(s, 4, 5, 2, 2)
	res, err := fsdpplan.Search(context.Background(), s, m, fsdpplan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	full, auto, tessel := res.Compared[0], res.Compared[1], res.Compared[2]
	if full.Name != "full" || auto.Name != "auto" || tessel.Name != "tessel" {
		t.Fatalf("compared %+v", res.Compared)
	}
	for _, c := range []fsdpplan.Placed{full, auto} {
		if tessel.Makespan > c.Makespan || tessel.Makespan == c.Makespan && tessel.Peak > c.Peak {
			t.Errorf("tessel %+v worse than PyTorch's %+v", tessel, c)
		}
	}
	if tessel.Makespan == full.Makespan && tessel.Peak >= full.Peak {
		t.Errorf("tessel %+v holds no less than full %+v at the same makespan", tessel, full)
	}
	for _, name := range []string{"full", "auto"} {
		l, _ := fsdp.ParseLookahead(name)
		fs, err := fsdpplan.PyTorch(s, m, l)
		if err != nil {
			t.Fatal(err)
		}
		if err := fsdpplan.Verify(fs); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%+v", res.Compared)
}

// A compute_comms file's FSDP actions that leave a compute ungathered are
// refused, naming the stage.
func TestImportRefusesUngathered(t *testing.T) {
	s := imported(t, "0F0,0B0\n1F0,1B0\n")
	rd, err := torchcsv.Read([]byte("0UNSHARD,0F0,0SEND_F0,0RECV_B0,0RESHARD,0B0,0REDUCE_GRAD\n1RECV_F0,1F0,1B0,1SEND_B0\n"), torchcsv.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = torchcsv.ImportFSDP(rd, s, nil)
	if err == nil || !strings.Contains(err.Error(), "stage 0 (f0)") || !strings.Contains(err.Error(), "not gathered") {
		t.Errorf("got %v, want a refusal naming stage 0 (f0) not gathered", err)
	}
}
