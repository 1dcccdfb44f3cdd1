package torchcsv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/fsdpplan"
)

// FuzzParse: no input panics; a parsed table writes and reads back to
// itself; a valid one imports (or is refused with an error), and the
// import exports back to the same table: Import keeps every rank's order.
// Seeds: every CSV of testdata, good and bad.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"testdata/*.csv", "testdata/bad/*.csv"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("0F0,0I0,0W0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := Parse(data)
		if err != nil {
			return
		}
		out := tab.Marshal()
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal(t)) failed: %v\n%q", err, out)
		}
		if string(again.Marshal()) != string(out) {
			t.Fatalf("Marshal is not stable:\n%q\n%q", out, again.Marshal())
		}
		if _, err := Validate(tab); err != nil {
			return
		}
		s, err := Import(tab, DefaultImportOptions())
		if err != nil {
			return
		}
		back, err := Export(s)
		if err != nil {
			t.Fatalf("export of an import: %v\n%q", err, out)
		}
		if string(back.Marshal()) != string(out) {
			t.Fatalf("export(import(t)) differs from t:\n%q\n%q", back.Marshal(), out)
		}
	})
}

// FuzzRead: no input panics; what Read accepts is a valid table that
// reads back to itself; where PyTorch's lowering orders it, the
// compute_comms form, receives early and deferred, passes ValidateComms
// and reads back to the same table. Seeds: every CSV of testdata.
func FuzzRead(f *testing.F) {
	for _, pattern := range []string{"testdata/*.csv", "testdata/bad/*.csv", "testdata/read/*.csv", "testdata/bad-read/*.csv"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := Read(data, ReadOptions{})
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if _, err := Validate(rd.Table); err != nil {
			t.Fatalf("Read gave an invalid table: %v", err)
		}
		out := rd.Table.Marshal()
		again, err := Read(out, ReadOptions{Naming: NamingCurrent})
		if err != nil || string(again.Table.Marshal()) != string(out) {
			t.Fatalf("Read(Marshal(table)): %v\n%q", err, out)
		}
		ct, err := AddSendRecv(rd.Table)
		if err != nil {
			return
		}
		sum, err := ValidateComms(ct)
		if err != nil {
			t.Fatalf("lowered table fails ValidateComms: %v\n%q", err, ct.Marshal())
		}
		back, err := Read(ct.Marshal(), ReadOptions{Naming: NamingCurrent})
		if err != nil || string(back.Table.Marshal()) != string(out) {
			t.Fatalf("Read of the compute_comms form: %v\n%q", err, ct.Marshal())
		}
		// Deferred receives (PyTorch's _defer_recv_ops) pass the same
		// checks and read back to the same table.
		dt, err := DeferRecv(ct, sum.StageRank)
		if err != nil {
			t.Fatalf("DeferRecv of a lowered table: %v\n%q", err, ct.Marshal())
		}
		back, err = Read(dt.Marshal(), ReadOptions{Naming: NamingCurrent})
		if err != nil || string(back.Table.Marshal()) != string(out) {
			t.Fatalf("Read of the deferred form: %v\n%q", err, dt.Marshal())
		}
	})
}

// FuzzReadFSDP reads a file's UNSHARD, RESHARD and REDUCE_GRAD actions as
// part of the imported schedule: never a panic, errors of one line, and
// what it accepts verifies and writes back to the same actions.
func FuzzReadFSDP(f *testing.F) {
	for _, file := range []string{"testdata/read/older-naming-comms.csv", "testdata/fsdp/interleaved-4.csv"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("0UNSHARD,0F0,0SEND_F0,0RECV_B0,0B0,0REDUCE_GRAD,0RESHARD\n1RECV_F0,1UNSHARD,1F0,1B0,1SEND_B0,1REDUCE_GRAD,1RESHARD\n"))
	f.Add([]byte("0UNSHARD,1UNSHARD,0F0,1F0,0F1,1B0,0B0,1F1,1B1,1REDUCE_GRAD,1RESHARD,0B1,0REDUCE_GRAD,0RESHARD\n"))
	f.Add([]byte("0RESHARD,0F0,0B0,0REDUCE_GRAD\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := Read(data, ReadOptions{})
		if err != nil || len(rd.FSDP) == 0 {
			return
		}
		s, err := Import(rd.Table, DefaultImportOptions())
		if err != nil {
			return
		}
		fs, err := ImportFSDP(rd, s, nil)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if err := fsdpplan.Verify(fs); err != nil {
			t.Fatalf("ImportFSDP gave a schedule that does not verify: %v", err)
		}
		ct, _, err := ExportFSDP(fs, CommsOptions{})
		if err != nil {
			t.Fatalf("ExportFSDP of an imported schedule: %v", err)
		}
		back, err := Read(ct.Marshal(), ReadOptions{})
		if err != nil {
			t.Fatalf("Read of the exported form: %v\n%q", err, ct.Marshal())
		}
		fs2, err := ImportFSDP(back, s, &fs.Model)
		if err != nil || fs2.Makespan != fs.Makespan {
			t.Fatalf("export and import again: %v\n%q", err, ct.Marshal())
		}
	})
}
