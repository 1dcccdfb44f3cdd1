package docscheck

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		name      string
		want, got string
		ok        bool
	}{
		{"equal", "a\nb", "a\nb", true},
		{"differs", "a\nb", "a\nc", false},
		{"longer output", "a", "a\nb", false},
		{"shorter output", "a\nb", "a", false},
		{"elision in the middle", "a\n...\nd", "a\nb\nc\nd", true},
		{"elision of nothing", "a\n...\nb", "a\nb", true},
		{"elision at the end", "a\n...", "a\nb\nc", true},
		{"elision at the start", "...\nc", "a\nb\nc", true},
		{"two elisions", "a\n...\nc\n...\ne", "a\nb\nc\nd\ne", true},
		{"elided line must still appear", "a\n...\nx", "a\nb\nc", false},
		{"durations masked", "took 0.187s (repetend 18 ms, 1.2 s, 2m3.5s, 3.1µs)", "took 12.5s (repetend 3 ms, 9.9 s, 1m0.1s, 40ns)", true},
		{"other numbers not masked", "makespan 780", "makespan 781", false},
		{"percentages not masked", "bubble rate 1.54%", "bubble rate 1.55%", false},
		{"trailing blanks ignored", "| a   |  ", "| a   |", true},
		{"column widths ignored", "| 3.4s (x) | 7   |\n|:---------|:----|", "| 10.4s (x) | 7    |\n|:----------|:-----|", true},
		{"a cell's content still counts", "| a | 7 |", "| a | 8 |", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := Match(splitLines(c.want), splitLines(c.got))
			if (err == nil) != c.ok {
				t.Fatalf("Match = %v, want ok %v", err, c.ok)
			}
		})
	}
}

func TestParse(t *testing.T) {
	text := "# t\n\n<!-- check: echo hi -->\n```text\nhi\n```\n\ntext\n<!-- check: printf '| a |\\n' -->\n| a |\n| b |\n\nend\n"
	bs, err := Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 {
		t.Fatalf("%d blocks, want 2", len(bs))
	}
	if bs[0].Command != "echo hi" || bs[0].Table || strings.Join(bs[0].Want, "|") != "hi" || bs[0].Line != 3 {
		t.Errorf("block 0 = %+v", bs[0])
	}
	if !bs[1].Table || len(bs[1].Want) != 2 {
		t.Errorf("block 1 = %+v", bs[1])
	}
	for _, bad := range []string{
		"<!-- check: -->\n```\nx\n```\n",
		"<!-- check: echo -->\n\n```\nx\n```\n",
		"<!-- check: echo -->\n```\nx\n",
	} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
}

func TestElide(t *testing.T) {
	got := elide(splitLines("a\n...\nz"), splitLines("1\n2\n3\n4"))
	if strings.Join(got, ",") != "1,...,4" {
		t.Errorf("elide = %v", got)
	}
	got = elide(splitLines("a\n...\nm\n...\nz"), splitLines("1\n2\n3\n4"))
	if strings.Join(got, ",") != "1,2,3,4" {
		t.Errorf("elide with two elisions = %v, want the whole output", got)
	}
}

func TestUpdateRewritesOnlyWhatDiffers(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "x.md")
	in := "a\n<!-- check: echo 1; echo 2 -->\n```text\n1\n3\n```\n<!-- check: echo ok -->\n```text\nok\n```\n"
	if err := os.WriteFile(f, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	e := Env{Root: dir, Bin: dir}
	fails, err := e.CheckFile(context.Background(), f, true, nil)
	if err != nil || len(fails) != 1 {
		t.Fatalf("fails %v, err %v", fails, err)
	}
	data, _ := os.ReadFile(f)
	if want := strings.Replace(in, "1\n3\n", "1\n2\n", 1); string(data) != want {
		t.Errorf("updated file:\n%s\nwant:\n%s", data, want)
	}
	if fails, _ := e.CheckFile(context.Background(), f, false, nil); len(fails) != 0 {
		t.Errorf("after update: %v", fails)
	}
}

// The README's checked blocks (the tour) match a freshly built tessel,
// and the same README with one printed figure edited fails the check.
// This runs in go test ./..., so CI re-runs the README's commands; the
// heavier blocks of docs/ run in make docs-check.
func TestREADME(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	statTree(t, root)
	ctx := context.Background()
	bin, err := Build(ctx, root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	env := Env{Root: root, Bin: bin, Cache: map[string]string{}}
	readme := filepath.Join(root, "README.md")
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := Parse(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) < 3 {
		t.Fatalf("README has %d checked blocks, want the tour's three at least", len(blocks))
	}
	fails, err := env.CheckFile(ctx, readme, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fails {
		t.Errorf("%v", f)
	}

	// Edit one figure of every block in a copy: each must fail.
	lines := strings.Split(string(data), "\n")
	edited := 0
	for _, b := range blocks {
		for i := b.start; i < b.end && !editFigure(lines, i); i++ {
		}
		edited++
	}
	copyPath := filepath.Join(t.TempDir(), "README.md")
	if err := os.WriteFile(copyPath, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	fails, err = env.CheckFile(ctx, copyPath, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fails) != len(blocks) {
		t.Errorf("edited copy: %d of %d blocks fail, want all", len(fails), len(blocks))
	}
}

// editFigure changes the first digit of lines[i] that is not part of a
// duration (d becomes d+1 mod 10) and reports whether it found one.
func editFigure(lines []string, i int) bool {
	l := lines[i]
	spans := durations.FindAllStringIndex(l, -1)
	for k := 0; k < len(l); k++ {
		if l[k] < '0' || l[k] > '9' {
			continue
		}
		inside := false
		for _, sp := range spans {
			inside = inside || sp[0] <= k && k < sp[1]
		}
		if !inside {
			lines[i] = l[:k] + string(rune('0'+(l[k]-'0'+1)%10)) + l[k+1:]
			return true
		}
	}
	return false
}

// statTree stats every file of the repository, so that go test's cache
// keys this test's result on them: the commands it runs read the sources
// (through go build), testdata and the images, none of which the test
// binary itself depends on, and a cached pass must not hide a README that
// a change to them made stale.
func statTree(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
