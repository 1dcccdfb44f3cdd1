package deploy

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/inputerr"
)

// The refusals of Measure come before any file is read, and are bad
// input in the words the command prints.
func TestMeasureRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	exists := filepath.Join(dir, "model.json")
	os.WriteFile(exists, []byte("{}"), 0o644)
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"runs without programs", func() error { return Measure(ctx, MeasureOptions{Model: exists}, io.Discard) }, "measure: --programs DIR is required"},
		{"runs without traces", func() error {
			return Measure(ctx, MeasureOptions{Programs: []string{"a"}, Model: exists}, io.Discard)
		}, "measure: 1 --programs but 0 --trace"},
		{"runs without model", func() error {
			return Measure(ctx, MeasureOptions{Programs: []string{"a"}, Traces: []string{"t"}}, io.Discard)
		}, "measure: --model FILE is required"},
		{"calibrate exists", func() error {
			return Measure(ctx, MeasureOptions{Programs: []string{"a"}, Traces: []string{"t"}, Model: exists, Calibrate: exists}, io.Discard)
		}, "exists (use --force to overwrite it)"},
	} {
		err := c.run()
		if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want bad input containing %q", c.name, err, c.want)
		}
	}
}
