package torchcsv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Files in both of PyTorch's forms, each feature of the format once:
// every one reads into a valid table with the notes that say how, and
// imports as a verified schedule.
func TestRead(t *testing.T) {
	for _, tc := range []struct {
		file, format string
		naming       Naming
		notes        []string // one substring per note, in order
		table        string   // the compute table read
	}{
		{"overlap-mixed.csv", FormatComputeOnly, NamingAuto,
			[]string{"1 OVERLAP_F_B action(s) imported as their two actions back to back", "stage 3 runs full backwards (B) for some micro-batches"},
			"0F0,0F1,3F0,3I0,3W0,3F1,0B0,3I1,3W1,0B1\n1F0,2F0,1F1,2F1,2B0,1B0,2B1,1B1\n"},
		{"older-naming.csv", FormatComputeOnly, NamingAuto,
			[]string{"read with PyTorch's older naming (B input gradient, BW full backward), as the file has W (0W0) and no I; --torch-naming current"},
			"0F0,0F1,0I0,0W0,0I1,0W1\n1F0,1I0,1F1,1I1,1W0,1W1\n"},
		{"older-naming-comms.csv", FormatComputeComms, NamingAuto,
			[]string{"as the file has BW (0BW0)", "compute_comms format: 8 sends and receives checked", "3 UNSHARD, RESHARD or REDUCE_GRAD action(s)"},
			"0F0,0F1,0B0,0B1\n1F0,1I0,1F1,1I1,1W0,1W1\n"},
		{"older-naming-comms.csv", FormatComputeComms, NamingOld,
			[]string{"compute_comms format", "UNSHARD"},
			"0F0,0F1,0B0,0B1\n1F0,1I0,1F1,1I1,1W0,1W1\n"},
		{"current-comms.csv", FormatComputeComms, NamingAuto,
			[]string{"compute_comms format: 8 sends and receives"},
			"0F0,0F1,0B0,0B1\n1F0,1I0,1F1,1I1,1W0,1W1\n"},
		// A receive posted before the send it waits for: PyTorch posts it
		// without waiting, and the compute waits for the data.
		{"recv-before-send.csv", FormatComputeComms, NamingAuto,
			[]string{"compute_comms format: 4 sends and receives"},
			"0F0,0B0\n1F0,1B0\n"},
		{"../split-idle-cells.csv", FormatComputeOnly, NamingAuto, nil, ""},
		{"../1f1b.csv", FormatComputeOnly, NamingAuto, nil, ""},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "read", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		rd, err := Read(data, ReadOptions{Naming: tc.naming})
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if rd.Format != tc.format {
			t.Errorf("%s: format %s, want %s", tc.file, rd.Format, tc.format)
		}
		if len(rd.Notes) != len(tc.notes) {
			t.Errorf("%s: notes %q, want %d", tc.file, rd.Notes, len(tc.notes))
		} else {
			for i, n := range tc.notes {
				if !strings.Contains(rd.Notes[i], n) || strings.Contains(rd.Notes[i], "\n") {
					t.Errorf("%s: note %q, want one line with %q", tc.file, rd.Notes[i], n)
				}
			}
		}
		if tc.table == "" { // a compute-only file of current naming reads as Parse reads it
			tab, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			tc.table = string(tab.Marshal())
		}
		if got := string(rd.Table.Marshal()); got != tc.table {
			t.Errorf("%s: read\n%s want\n%s", tc.file, got, tc.table)
		}
		if _, err := Import(rd.Table, DefaultImportOptions()); err != nil {
			t.Errorf("%s: import: %v", tc.file, err)
		}
	}
}

// Every bad cell kind and every broken send or receive: one line that
// names it.
func TestReadBad(t *testing.T) {
	for _, tc := range []struct {
		file   string
		naming Naming
		err    string
	}{
		{"overlap-unclosed.csv", NamingAuto, `cell 2: action "(0F1;1B0OVERLAP_F_B": "(" without ")"`},
		{"overlap-wrong-type.csv", NamingAuto, `type "F" after the parentheses: only OVERLAP_F_B holds actions in parentheses`},
		{"overlap-one-action.csv", NamingAuto, "OVERLAP_F_B holds 1 actions: want two"},
		{"overlap-comm.csv", NamingAuto, "0SEND_F0 is not a compute action"},
		{"overlap-nested.csv", NamingAuto, "an OVERLAP_F_B inside an OVERLAP_F_B"},
		{"overlap-bare.csv", NamingAuto, "OVERLAP_F_B holds its actions in parentheses"},
		{"overlap-bad-sub.csv", NamingAuto, `type "X" is not F, B, I or W`},
		{"unknown-type.csv", NamingAuto, `type "SEND_X" is not F, B, I or W`},
		{"comm-no-micro.csv", NamingAuto, `action "0SEND_F": no micro-batch`},
		{"bw-and-i.csv", NamingAuto, "the file has both BW (0BW0"},
		{"bw-and-i.csv", NamingCurrent, "0BW0: BW is PyTorch's older name of a full backward, but --torch-naming is current"},
		{"bw-and-i.csv", NamingOld, "the file has I, the current name of an input gradient, but --torch-naming is old"},
		{"send-without-recv.csv", NamingAuto, "rank 1 has no 1RECV_F0"},
		{"recv-without-send.csv", NamingAuto, "rank 1 has no 1SEND_B0"},
		{"comm-same-rank.csv", NamingAuto, "rank 0, action 2 (0SEND_F0): no transfer needs it"},
		{"comm-last-stage.csv", NamingAuto, "rank 1, action 3 (1SEND_F0): no transfer needs it"},
		{"comm-wrong-rank.csv", NamingAuto, "rank 0, action 4 (1SEND_B0): stage 1 is on rank 1"},
		{"comm-twice.csv", NamingAuto, "rank 0, action 3 (0SEND_F0): appears twice"},
		{"comm-deadlock.csv", NamingAuto, "the sends and receives deadlock (PyTorch would wait forever): rank 0 at action 3 (0B0) waits for 1SEND_B0, rank 1's action 4; rank 1 at action 2 (1F0) waits for 0SEND_F0, rank 0's action 4"},
		{"recv-after-compute.csv", NamingAuto, "rank 1, action 1 (1F0): runs before its receive 1RECV_F0 (action 2)"},
		{"send-before-compute.csv", NamingAuto, "rank 0, action 1 (0SEND_F0): sends the output of 0F0 (action 2) before computing it"},
		{"comm-no-stage.csv", NamingAuto, "(5SEND_B0): no stage 5"},
		{"comm-no-micro-batch.csv", NamingAuto, "(1SEND_B7): no micro-batch 7"},
		{"unshard-wrong-rank.csv", NamingAuto, "(1UNSHARD): stage 1 is on rank 1"},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "bad-read", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Read(data, ReadOptions{Naming: tc.naming})
		if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s (naming %q): got %v, want one line with %q", tc.file, tc.naming, err, tc.err)
		}
	}
	// The compute-only bad files fail Read as they fail Parse and Validate.
	files, _ := filepath.Glob(filepath.Join("testdata", "bad", "*.csv"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if _, err := Read(data, ReadOptions{}); err == nil && !strings.HasSuffix(f, "mixed.csv") && !strings.HasSuffix(f, "deadlock.csv") && !strings.HasSuffix(f, "comm-action.csv") {
			t.Errorf("%s: Read accepts it", f)
		}
	}
}

// PyTorch's own files (test/distributed/pipelining/artifacts/ in the
// PyTorch repository; not kept here) with TESSEL_PYTORCH_ARTIFACTS set to
// the folder that holds them; always, this repository's files of the same
// forms (DualPipeV's overlaps and mixed stages, ZB1P with BW in the
// compute_comms form, ZB1P compute only in the older naming): each imports
// as a verified schedule that exports back to the file's actions, in both
// forms.
func TestPyTorchArtifacts(t *testing.T) {
	type artifact struct {
		file, format string
		notes        int
	}
	cases := []artifact{
		{"testdata/read/overlap-mixed.csv", FormatComputeOnly, 2},
		{"testdata/read/older-naming-comms.csv", FormatComputeComms, 3},
		{"testdata/read/older-naming.csv", FormatComputeOnly, 1},
	}
	if dir := os.Getenv("TESSEL_PYTORCH_ARTIFACTS"); dir != "" {
		cases = append(cases,
			artifact{filepath.Join(dir, "dualpipev_4rank_10mb.csv"), FormatComputeOnly, 2},
			artifact{filepath.Join(dir, "zb1p_2rank_2stagep_comms.csv"), FormatComputeComms, 2},
			artifact{filepath.Join(dir, "zb1p_2rank_2stagep_compute.csv"), FormatComputeOnly, 1})
	} else {
		t.Log("TESSEL_PYTORCH_ARTIFACTS not set: PyTorch's own files not read")
	}
	for _, tc := range cases {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := Read(data, ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if rd.Format != tc.format || len(rd.Notes) != tc.notes {
			t.Errorf("%s: format %s, notes %q", tc.file, rd.Format, rd.Notes)
		}
		s, err := Import(rd.Table, DefaultImportOptions())
		if err != nil {
			t.Fatalf("%s: import: %v", tc.file, err)
		}
		back, err := Export(s)
		if err != nil {
			t.Fatalf("%s: export: %v", tc.file, err)
		}
		if string(back.Marshal()) != string(rd.Table.Marshal()) {
			t.Errorf("%s: export of the import differs from the file's actions", tc.file)
		}
		if _, err := ExportComms(s); err != nil {
			t.Errorf("%s: compute_comms export: %v", tc.file, err)
		}
	}
}

// What PyTorch's lowering rejects, AddSendRecv refuses in one line: a
// rank without actions, and compute orders no sends and receives can
// serve (its "Malformed compute schedule").
func TestAddSendRecvRefuses(t *testing.T) {
	for _, tc := range []struct{ csv, err string }{
		{"0F0,0B0\n\n", "rank 1 has no actions"},
		{"0F0,0B0,0F1,0B1\n1F1,1F0,1B0,1B1\n", `cannot order this table (its "Malformed compute schedule"), rank 0 at 0B0, rank 1 at 1F1`},
	} {
		tab, err := Parse([]byte(tc.csv))
		if err != nil {
			t.Fatal(err)
		}
		_, err = AddSendRecv(tab)
		if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want one line with %q", tc.csv, err, tc.err)
		}
	}
}
