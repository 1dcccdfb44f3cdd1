package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tessel plan prints the plan against the baselines and writes the page
// of --report; it never overwrites a file without --force, and --report
// with --parallel auto (many layouts) is refused, both as bad input.
func TestPlanReport(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "plan.html")
	args := []string{"tessel", "plan", "--model", "../../testdata/models/gpt-like.json", "-n", "16", "--report", page}
	var stdout, stderr bytes.Buffer
	if rc := run(context.Background(), args, &stdout, &stderr); rc != 0 {
		t.Fatalf("rc %d: %s", rc, stderr.String())
	}
	for _, want := range []string{"\nagainst the baselines", "\n1F1B ", "\nwinner       Tessel, "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("no %q in\n%s", want, stdout.String())
		}
	}
	data, err := os.ReadFile(page)
	if err != nil || !bytes.Contains(data, []byte(`<table class="versus">`)) || !bytes.Contains(data, []byte("<svg")) {
		t.Fatalf("page: %v\n%.400s", err, data)
	}
	stdout.Reset()
	stderr.Reset()
	if rc := run(context.Background(), args, &stdout, &stderr); rc != 2 || !strings.Contains(stderr.String(), "exists (use --force") {
		t.Errorf("again without --force: rc %d, %s", rc, stderr.String())
	}
	stderr.Reset()
	par := []string{"tessel", "plan", "--model", "../../testdata/models/gpt-like.json", "--cluster", "../../testdata/clusters/llama-8x80.json", "--parallel", "auto", "--report", filepath.Join(dir, "p2.html")}
	if rc := run(context.Background(), par, &stdout, &stderr); rc != 2 || !strings.Contains(stderr.String(), "--report goes without --parallel") {
		t.Errorf("--report with --parallel auto: rc %d, %s", rc, stderr.String())
	}
}
