package torchcsv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
