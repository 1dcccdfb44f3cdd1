package layers

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// channelsLines lists the lines of the module's Go files, tests aside,
// that name "Channels" outside rule/links: the word once meant four
// things (the link-queue flag, the cluster's and the simulator's option,
// the host channels), now QueuedLinks and Switches, and links.Queued(p)
// is how code above the rules asks. This is the count the redesign held
// it under.
func channelsLines(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			if rel == filepath.Join("rule", "links") || rel != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			if strings.Contains(sc.Text(), "Channels") {
				out = append(out, fmt.Sprintf("%s:%d: %s", rel, n, strings.TrimSpace(sc.Text())))
			}
		}
		return sc.Err()
	})
	return out, err
}

// TestChannelsNamedOnce fails when five or more lines name "Channels"
// again (grep -rn Channels --include=*.go . | grep -v _test.go | grep -v
// '^./rule/links/'): the link-queue flag is QueuedLinks, the host
// channels are Switches, and a new meaning needs a name of its own.
func TestChannelsNamedOnce(t *testing.T) {
	lines, err := channelsLines(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) >= 5 {
		t.Errorf("%d lines name Channels outside rule/links and tests, want fewer than 5:\n%s", len(lines), strings.Join(lines, "\n"))
	}
}

// TestChannelsLines: the count skips tests, rule/links and hidden
// folders, and counts every other line that names the word.
func TestChannelsLines(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go":                 "package a\n// Channels\nvar HostChannels int\nvar x int\n",
		"a_test.go":            "package a\n// Channels\n",
		"rule/links/links.go":  "package links\n// Channels\n",
		"rule/linksx/links.go": "package linksx\n// Channels\n",
		".git/x.go":            "// Channels\n",
		"doc.md":               "Channels\n",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := channelsLines(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.go:2: // Channels", "a.go:3: var HostChannels int", filepath.Join("rule", "linksx", "links.go") + ":2: // Channels"}
	if !slices.Equal(got, want) {
		t.Errorf("channelsLines = %q, want %q", got, want)
	}
}
