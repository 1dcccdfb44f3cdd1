package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/plan"
)

// gptSplit is the split of the GPT-like profile on 4 devices.
func gptSplit(t *testing.T) *partition.Report {
	t.Helper()
	g, err := partition.Load("../testdata/models/gpt-like.json")
	if err != nil {
		t.Fatal(err)
	}
	g.Accelerators = 4
	pr, err := partition.Run(context.Background(), g, partition.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return pr
}

// gptPlan is the plan of gptSplit, against the baselines.
func gptPlan(t *testing.T) *Plan {
	t.Helper()
	pr := gptSplit(t)
	res, err := plan.Run(context.Background(), pr, plan.Options{MicroBatches: 8})
	if err != nil {
		t.Fatal(err)
	}
	r := NewPlan(res)
	rows, err := plan.Versus(context.Background(), res)
	if err != nil {
		t.Fatal(err)
	}
	r.SetVersus(rows, nil)
	return r
}

// The comparison's text (after the plan's) is the baselines, each in the
// model's time, and the winner with its margin; the levers line appears only where the
// budget binds, with each lever's time and speed-up.
func TestPlanVersusText(t *testing.T) {
	r := gptPlan(t)
	v := r.Versus
	if len(v.Rows) < 2 || v.Rows[0].Method != "Tessel" || v.Winner == "" {
		t.Fatalf("versus %+v", v)
	}
	for _, row := range v.Rows {
		if row.Makespan == nil {
			continue
		}
		if want := float64(*row.Makespan) * r.Partition.Converted.TimeUnit; *row.Time < want-1e-6 || *row.Time > want+1e-6 {
			t.Errorf("%s: time %v for %d steps of %v", row.Method, *row.Time, *row.Makespan, r.Partition.Converted.TimeUnit)
		}
	}
	var b bytes.Buffer
	if err := r.WriteVersusText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nagainst the baselines, each on the same stages, devices and budgets", "\nTessel ", "\nwinner       Tessel, "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "levers") {
		t.Errorf("levers where nothing binds:\n%s", b.String())
	}
	tessel := *v.Rows[0].Time
	span := 2 * *v.Rows[0].Makespan
	v.Binds, v.Levers = true, []LeverRow{{Flag: "--recompute", Makespan: &span, Time: &tessel, Speedup: 2}, {Flag: "--offload", Error: "--offload: no block may be offloaded"}}
	if got, want := r.leversText(), "the budget binds; with --recompute: "; !strings.HasPrefix(got, want) || !strings.Contains(got, "2.00x faster; with --offload: no block may be offloaded") {
		t.Errorf("levers %q", got)
	}
}

// tessel plan --report's page, opened in a real browser (headless
// chromium): it loads without a console message (no script error), and
// its DOM holds the table of the plan against the baselines with
// Tessel's row, the Gantt chart and each device's memory. A page that
// throws is caught the same way, so the check can fail.
func TestPlanReportInBrowser(t *testing.T) {
	testskip.Short(t, "starts a browser")
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		testskip.Skip(t, "no chromium on PATH: scripts/install-deps.sh installs Debian's chromium")
	}
	r := gptPlan(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "plan.html")
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, console := openHeadless(t, browser, page)
	if len(console) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(console, "\n"))
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`<table class="versus">\s*<tbody><tr><th>method</th>`),
		regexp.MustCompile(`<tr><td>Tessel</td><td>\d+\.\d\d</td>`),
		regexp.MustCompile(`<p class="winner" id="winner">Tessel, `),
		regexp.MustCompile(`<h3>Tessel</h3>\s*<div class="chart">\s*<svg[^>]*>`),
		regexp.MustCompile(`<table class="memory">`),
		regexp.MustCompile(`<svg[^>]*class="memory"`),
	} {
		if !want.MatchString(dom) {
			t.Errorf("the browser's DOM has no %s", want)
		}
	}
	bad := filepath.Join(dir, "bad.html")
	if err := os.WriteFile(bad, []byte("<!DOCTYPE html><html><body><script>undefinedFunction()</script></body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, console := openHeadless(t, browser, bad); len(console) == 0 {
		t.Errorf("a page that throws gave no console message: the check cannot fail")
	}
}

// openHeadless loads a page in headless chromium and returns its DOM
// after load and the console's messages (chromium logs them as CONSOLE
// lines on stderr).
func openHeadless(t *testing.T, browser, page string) (dom string, console []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0", "--dump-dom", "file://"+page)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			console = append(console, line)
		}
	}
	return stdout.String(), console
}
