package torchcsv

import (
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/placement"
)

// PyTorch's cases of deferred receives (its _defer_recv_ops, exercised in
// test/distributed/pipelining/test_schedule.py), written here from their
// facts: two ranks; two stages with full backwards, two stages with split
// backwards, and a V of four stages (rank 0 holding 0 and 3, rank 1
// holding 1 and 2) running DualPipeV's overlapped forward and backward.
// The first two post every receive at the start of each row, as the
// inputs of PyTorch's cases do; the V's input is the early lowering of
// its compute order (AddSendRecv). The expected rows follow PyTorch's
// rule, worked by hand: a receive moves to just before its consumer,
// except that rank 0, the lower rank, posts the receives it holds from
// rank 1 before each send to rank 1. Input and output both read as
// verified schedules of the same compute order, and DeferRecv of the
// input is the output, action for action.
var deferCases = []struct {
	name, in, want string
	stageRank      []int
}{
	{"no overlap, full backward",
		"0RECV_B0,0RECV_B1,0F0,0SEND_F0,0F1,0SEND_F1,0B0,0B1\n" +
			"1RECV_F0,1RECV_F1,1F0,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n",
		"0F0,0RECV_B0,0RECV_B1,0SEND_F0,0F1,0SEND_F1,0B0,0B1\n" +
			"1RECV_F0,1F0,1B0,1SEND_B0,1RECV_F1,1F1,1B1,1SEND_B1\n",
		[]int{0, 1}},
	{"split backward",
		"0RECV_B0,0RECV_B1,0F0,0SEND_F0,0F1,0SEND_F1,0I0,0W0,0I1,0W1\n" +
			"1RECV_F0,1RECV_F1,1F0,1I0,1SEND_B0,1F1,1I1,1SEND_B1,1W0,1W1\n",
		"0F0,0RECV_B0,0RECV_B1,0SEND_F0,0F1,0SEND_F1,0I0,0W0,0I1,0W1\n" +
			"1RECV_F0,1F0,1I0,1SEND_B0,1RECV_F1,1F1,1I1,1SEND_B1,1W0,1W1\n",
		[]int{0, 1}},
	{"V with overlapped forward and backward",
		"0F0,0SEND_F0,0F1,0SEND_F1,3RECV_F0,0F2,0SEND_F2,3F0,3RECV_F1,3I0,3SEND_B0,3W0,3F1,(0F3;3B1)OVERLAP_F_B,0SEND_F3,3SEND_B1,3RECV_F2,0RECV_B0," +
			"(3F2;0B0)OVERLAP_F_B,3I2,3SEND_B2,3RECV_F3,0RECV_B1,3W2,(3F3;0B1)OVERLAP_F_B,3I3,3SEND_B3,0RECV_B2,3W3,0I2,0W2,0RECV_B3,0I3,0W3\n" +
			"1RECV_F0,1F0,1RECV_F1,2F0,2SEND_F0,1RECV_F2,1F1,2F1,2SEND_F1,2RECV_B0,1F2,2I0,2W0,1RECV_F3,2RECV_B1,(2F2;1B0)OVERLAP_F_B,2SEND_F2,1SEND_B0," +
			"(1F3;2B1)OVERLAP_F_B,2RECV_B2,(2F3;1B1)OVERLAP_F_B,2SEND_F3,1SEND_B1,2I2,2W2,2RECV_B3,1I2,1SEND_B2,1W2,2I3,1I3,1SEND_B3,2W3,1W3\n",
		"0F0,0SEND_F0,0F1,0SEND_F1,0F2,3RECV_F0,0SEND_F2,3F0,3I0,3RECV_F1,3SEND_B0,3W0,3F1,(0F3;3B1)OVERLAP_F_B,0SEND_F3,3SEND_B1,3RECV_F2,0RECV_B0," +
			"(3F2;0B0)OVERLAP_F_B,3I2,3SEND_B2,3W2,3RECV_F3,0RECV_B1,(3F3;0B1)OVERLAP_F_B,3I3,3SEND_B3,3W3,0RECV_B2,0I2,0W2,0RECV_B3,0I3,0W3\n" +
			"1RECV_F0,1F0,2F0,2SEND_F0,1RECV_F1,1F1,2F1,2SEND_F1,1RECV_F2,1F2,2RECV_B0,2I0,2W0,(2F2;1B0)OVERLAP_F_B,2SEND_F2,1SEND_B0,1RECV_F3,2RECV_B1," +
			"(1F3;2B1)OVERLAP_F_B,(2F3;1B1)OVERLAP_F_B,2SEND_F3,1SEND_B1,2RECV_B2,2I2,2W2,1I2,1SEND_B2,1W2,2RECV_B3,2I3,1I3,1SEND_B3,2W3,1W3\n",
		[]int{0, 1, 1, 0}},
}

func TestDeferRecvPyTorchCases(t *testing.T) {
	for _, tc := range deferCases {
		in, err := ParseComms([]byte(tc.in))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := DeferRecv(in, tc.stageRank)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(got.Marshal()) != tc.want {
			t.Errorf("%s: deferred\n%s want\n%s", tc.name, got.Marshal(), tc.want)
		}
		var tables []string
		for _, file := range []string{tc.in, tc.want} {
			rd, err := Read([]byte(file), ReadOptions{})
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
				continue
			}
			if rd.Format != FormatComputeComms {
				t.Errorf("%s: read as %s", tc.name, rd.Format)
			}
			if _, err := Import(rd.Table, DefaultImportOptions()); err != nil {
				t.Errorf("%s: import: %v", tc.name, err)
			}
			tables = append(tables, string(rd.Table.Marshal()))
		}
		if len(tables) == 2 && tables[0] != tables[1] {
			t.Errorf("%s: the deferred file's compute order differs:\n%s%s", tc.name, tables[0], tables[1])
		}
		// Deferring twice changes nothing: every receive is already just
		// before its consumer or before a send to its peer.
		again, err := DeferRecv(got, tc.stageRank)
		if err != nil || string(again.Marshal()) != tc.want {
			t.Errorf("%s: deferring the deferred rows: %v\n%s", tc.name, err, again.Marshal())
		}
	}
}

// The V case's input is PyTorch's early lowering of its compute order,
// and the export with deferred receives writes the expected rows.
func TestDeferCaseFromCompute(t *testing.T) {
	tc := deferCases[2]
	kept, err := Read([]byte(tc.in), ReadOptions{KeepOverlaps: true})
	if err != nil {
		t.Fatal(err)
	}
	early, err := AddSendRecv(kept.Table)
	if err != nil {
		t.Fatal(err)
	}
	if string(early.Marshal()) != tc.in {
		t.Fatalf("early lowering\n%s want\n%s", early.Marshal(), tc.in)
	}
	o := DefaultImportOptions()
	if o.Overlap, err = placement.ParseOverlapTime("2"); err != nil {
		t.Fatal(err)
	}
	s, err := Import(kept.Table, o)
	if err != nil {
		t.Fatal(err)
	}
	ct, order, err := ExportCommsWith(s, CommsOptions{Recv: RecvDeferred})
	if err != nil || order != RecvDeferred {
		t.Fatalf("export: %v (%s)", err, order)
	}
	if string(ct.Marshal()) != tc.want {
		t.Errorf("export with deferred receives\n%s want\n%s", ct.Marshal(), tc.want)
	}
}

// What deadlocks in PyTorch's runtime (a compute waits for a send its
// peer posts only after a compute that waits in turn) is refused with
// the cycle; a receive no compute consumes, PyTorch's _defer_recv_ops
// refuses too.
func TestRecvRefuses(t *testing.T) {
	for _, tc := range []struct{ csv, err string }{
		{"0F0,0RECV_B0,0B0,0SEND_F0\n1RECV_F0,1F0,1B0,1SEND_B0\n",
			"rank 0 at action 3 (0B0) waits for 1SEND_B0, rank 1's action 4; rank 1 at action 2 (1F0) waits for 0SEND_F0, rank 0's action 4"},
		// Three ranks: rank 2 waits too (for rank 1's send), but outside
		// the cycle, which names ranks 0 and 1 only.
		{"0F0,0RECV_B0,0B0,0SEND_F0\n1RECV_F0,1RECV_B0,1F0,1B0,1SEND_F0,1SEND_B0\n2RECV_F0,2F0,2B0,2SEND_B0\n",
			"rank 0 at action 3 (0B0) waits for 1SEND_B0, rank 1's action 6; rank 1 at action 3 (1F0) waits for 0SEND_F0, rank 0's action 4"},
		{"0F0,0SEND_F0,0B0,0RECV_B0\n1RECV_F0,1F0,1B0,1SEND_B0\n", "rank 0, action 3 (0B0): runs before its receive 0RECV_B0 (action 4)"},
	} {
		_, err := Read([]byte(tc.csv), ReadOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want one line with %q", tc.csv, err, tc.err)
		}
	}
	ct, err := ParseComms([]byte("0F0,0SEND_F0,0RECV_B0\n1RECV_F0,1F0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DeferRecv(ct, []int{0, 1}); err == nil || !strings.Contains(err.Error(), "rank 0: 0RECV_B0 is consumed by no compute action after it") {
		t.Errorf("unconsumed receive: got %v", err)
	}
}
