package planmodel

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/inputerr"
)

// The refusals of Profile come before any PyTorch runs or any
// file is read, and are bad input in the words the commands print.
func TestProfileRefusals(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	exists := filepath.Join(dir, "model.json")
	os.WriteFile(exists, []byte("{}"), 0o644)
	ok := ProfileOptions{Out: filepath.Join(dir, "new.json"), Device: "cpu", Repeats: 1, Threads: 1}
	with := func(f func(*ProfileOptions)) ProfileOptions { o := ok; f(&o); return o }
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"profile without out", func() error { return Profile(ctx, with(func(o *ProfileOptions) { o.Out = "" }), io.Discard) }, "profile: --out FILE is required"},
		{"config and user model", func() error {
			return Profile(ctx, with(func(o *ProfileOptions) { o.Config, o.UserModel = "a.json", "b.py" }), io.Discard)
		}, "profile: give --config or --user-model, not both"},
		{"device", func() error { return Profile(ctx, with(func(o *ProfileOptions) { o.Device = "tpu" }), io.Discard) }, `profile: --device must be one of`},
		{"repeats", func() error { return Profile(ctx, with(func(o *ProfileOptions) { o.Repeats = 0 }), io.Discard) }, "--repeats must be at least 1, got 0"},
		{"out exists", func() error { return Profile(ctx, with(func(o *ProfileOptions) { o.Out = exists }), io.Discard) }, "exists (use --force to overwrite it)"},
	} {
		err := c.run()
		if err == nil || !inputerr.Is(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want bad input containing %q", c.name, err, c.want)
		}
	}
	if _, err := os.Stat(ok.Out); err == nil {
		t.Error("a refused profile wrote its file")
	}
}
