package limits

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	if err := Check("devices", Devices, Devices); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	err := Check("devices", 1<<62, Devices)
	var le *Error
	if !errors.As(err, &le) || err.Error() != "4611686018427387904 devices is more than tessel's limit of 4096 (docs/commands.md, Limits)" {
		t.Errorf("over the limit: %v", err)
	}
	if err := CheckName("placement name", strings.Repeat("x", Name)); err != nil {
		t.Errorf("a name at the limit: %v", err)
	}
	if err := CheckName("placement name", strings.Repeat("x", Name+1)); err == nil || !strings.Contains(err.Error(), "257 bytes in the placement name") {
		t.Errorf("a long name: %v", err)
	}
	if err := CheckInstances(1_000_000, 8); err != nil {
		t.Errorf("a million micro-batches of 8 blocks: %v", err)
	}
	if err := CheckInstances(1_000_000, 9); err == nil || !strings.Contains(err.Error(), "9000000 block instances (1000000 micro-batches × 9 blocks)") {
		t.Errorf("past the instances: %v", err)
	}
	if err := CheckInstances(MicroBatches+1, 1); err == nil {
		t.Errorf("past the micro-batches: no error")
	}
	if got := Over("memory units", 1e300, Memory).Error(); !strings.HasPrefix(got, "1e+300 memory units") {
		t.Errorf("a float past the limit: %q", got)
	}
}

// A file past its limit is refused: a regular file by its size, before
// reading; a device (that never ends) after the limit, not after memory
// runs out.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	os.WriteFile(path, make([]byte, 1001), 0o644)
	if _, err := ReadFile(path, 1000); err == nil || err.Error() != path+": 1001 bytes is more than tessel's limit of 1000 (docs/commands.md, Limits)" {
		t.Errorf("a file of 1001 bytes, limit 1000: %v", err)
	}
	if data, err := ReadFile(path, 1001); err != nil || len(data) != 1001 {
		t.Errorf("at the limit: %d bytes, %v", len(data), err)
	}
	if _, err := ReadFile(filepath.Join(dir, "none"), 10); err == nil || err.Error() != filepath.Join(dir, "none")+": no such file or directory" {
		t.Errorf("a missing file: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		if _, err := ReadFile("/dev/zero", 1<<20); err == nil || !strings.Contains(err.Error(), "more than 1048576 bytes") {
			t.Errorf("/dev/zero: %v", err)
		}
	}
}
