package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/render"
	"github.com/tessel-pp/tessel/schedule"
)

func TestRunRender(t *testing.T) {
	s, err := schedule.Load(goldenSchedule)
	if err != nil {
		t.Fatal(err)
	}
	// Each format on stdout is exactly the library's rendering.
	for _, f := range render.Formats() {
		var want, got bytes.Buffer
		if err := f.Draw(s, &want); err != nil {
			t.Fatal(err)
		}
		if err := runRender(context.Background(), renderOptions{Schedule: goldenSchedule, Format: f.Name}, &got); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: stdout differs from the library's rendering", f.Name)
		}
	}

	dir := t.TempDir()
	out := filepath.Join(dir, "chart.svg")
	var stdout bytes.Buffer
	if err := runRender(context.Background(), renderOptions{Schedule: goldenSchedule, Format: "svg", Out: out}, &stdout); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil || !bytes.HasPrefix(data, []byte("<svg ")) {
		t.Fatalf("%s: %v, %.20q", out, err, data)
	}
	if want := "wrote " + out + " (svg, "; !strings.HasPrefix(stdout.String(), want) {
		t.Errorf("stdout %q, want it to start with %q", stdout.String(), want)
	}

	// An existing file is kept unless --force.
	err = runRender(context.Background(), renderOptions{Schedule: goldenSchedule, Format: "text", Out: out}, &stdout)
	var ue *usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "exists (use --force to overwrite it)") {
		t.Errorf("overwrite without --force: %v", err)
	}
	if again, _ := os.ReadFile(out); !bytes.Equal(again, data) {
		t.Error("the existing file changed")
	}
	if err := runRender(context.Background(), renderOptions{Schedule: goldenSchedule, Format: "text", Out: out, Force: true}, &stdout); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(out); !bytes.HasPrefix(again, []byte("v-shape: 4 devices")) {
		t.Errorf("--force did not overwrite: %.40q", again)
	}

	for _, tc := range []struct {
		opts renderOptions
		want string
	}{
		{renderOptions{Schedule: goldenSchedule, Format: "png"}, `render: unknown --format "png" (want text, svg, html, trace)`},
		{renderOptions{Format: "text"}, "render: --schedule FILE is required"},
		{renderOptions{Schedule: filepath.Join(dir, "none.json"), Format: "text"}, "none.json: no such file or directory"},
		{renderOptions{Schedule: goldenSchedule, Format: "text", Force: true}, "render: --force needs --out FILE"},
		{renderOptions{Schedule: goldenSchedule, Format: "text", Out: filepath.Join(dir, "no", "dir.txt")}, "no such file or directory"},
	} {
		err := runRender(context.Background(), tc.opts, &bytes.Buffer{})
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want a usage error with %q", tc.opts, err, tc.want)
		}
	}
}
