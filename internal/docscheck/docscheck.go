// Package docscheck keeps the figures of the documentation true: it finds
// the blocks of a Markdown file that say which command printed them,
// runs each command again and compares its output with the text.
//
// A checked block is a comment naming the command, followed at once by a
// fenced block holding the command's exact standard output:
//
//	<!-- check: tessel search --placement v-shape --memory 4 -n 8 -->
//	```text
//	...the command's stdout...
//	```
//
// or by a Markdown table (lines starting with "|") that the command
// prints. In the expected text a line holding only "..." matches any run
// of lines (none included), and durations ("0.187s", "1.2 s", "18 ms",
// "2m3.5s") are masked on both sides, so that times never fail a check;
// so are the widths of runs of blanks and of dashes, which pad a table's
// columns to its longest cell (a duration among them).
//
// Commands run with sh -c in a scratch folder that holds a link to every
// top-level entry of the repository that git tracks (so "testdata/…" and
// "go test ./pkg" work as from the root, and files a command writes land
// in the scratch folder), with the folder of a freshly built tessel first
// on PATH.
package docscheck

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Block is one checked block of a Markdown file.
type Block struct {
	Line    int      // 1-based line of the check comment
	Command string   // the shell command
	Table   bool     // a Markdown table rather than a fenced block
	Want    []string // the expected lines, as written
	start   int      // index of the first expected line in the file's lines
	end     int      // index one past the last expected line
}

var checkComment = regexp.MustCompile(`^<!--\s*check:\s*(.*?)\s*-->\s*$`)

// Parse finds the checked blocks of a Markdown text. A check comment not
// followed by a fenced block or a table is an error naming its line.
func Parse(text string) ([]Block, error) {
	lines := splitLines(text)
	var blocks []Block
	for i := 0; i < len(lines); i++ {
		m := checkComment.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		if m[1] == "" {
			return nil, fmt.Errorf("line %d: check comment without a command", i+1)
		}
		b := Block{Line: i + 1, Command: m[1]}
		j := i + 1
		switch {
		case j < len(lines) && strings.HasPrefix(lines[j], "```"):
			fence := lines[j][:len(lines[j])-len(strings.TrimLeft(lines[j], "`"))]
			k := j + 1
			for k < len(lines) && strings.TrimSpace(lines[k]) != fence {
				k++
			}
			if k == len(lines) {
				return nil, fmt.Errorf("line %d: fenced block after the check comment never closes", j+1)
			}
			b.start, b.end = j+1, k
			i = k
		case j < len(lines) && strings.HasPrefix(lines[j], "|"):
			b.Table = true
			k := j
			for k < len(lines) && strings.HasPrefix(lines[k], "|") {
				k++
			}
			b.start, b.end = j, k
			i = k - 1
		default:
			return nil, fmt.Errorf("line %d: a check comment must be followed at once by a fenced block or a table", i+1)
		}
		b.Want = append([]string(nil), lines[b.start:b.end]...)
		blocks = append(blocks, b)
	}
	return blocks, nil
}

// durations are masked before comparing: Go's time.Duration strings
// ("187.3ms", "1m2.5s", "0.187s") and times written with a space
// ("1.2 s", "18 ms").
var durations = regexp.MustCompile(`\b(\d+h)?(\d+m)?\d+(\.\d+)?(ns|µs|us|ms|s)\b|\b\d+(\.\d+)? (ns|µs|us|ms|s|min)\b`)

// blanks and dashes are runs that only pad: a table's column widths follow
// its longest cell, a duration among them.
var (
	blanks = regexp.MustCompile(` {2,}`)
	dashes = regexp.MustCompile(`-{3,}`)
)

func mask(s string) string {
	s = durations.ReplaceAllString(s, "<time>")
	s = blanks.ReplaceAllString(s, " ")
	return dashes.ReplaceAllString(s, "---")
}

// Match reports whether got (a command's output, as lines) matches want
// (the expected lines: "..." alone on a line matches any run of lines,
// durations are masked). The error names the first line that differs.
func Match(want, got []string) error {
	w := make([]string, len(want))
	for i, l := range want {
		w[i] = strings.TrimRight(mask(l), " \t")
	}
	g := make([]string, len(got))
	for i, l := range got {
		g[i] = strings.TrimRight(mask(l), " \t")
	}
	if match(w, g) {
		return nil
	}
	// Name the first difference outside the elisions, for the reader.
	wi, gi := 0, 0
	for wi < len(w) && gi < len(g) && w[wi] != "..." && w[wi] == g[gi] {
		wi++
		gi++
	}
	switch {
	case wi < len(w) && w[wi] == "...":
		return fmt.Errorf("expected line %d onwards (after an elision) not found in the output", wi+2)
	case wi < len(w) && gi < len(g):
		return fmt.Errorf("expected line %d differs:\n  want: %s\n  got:  %s", wi+1, want[wi], got[gi])
	case wi < len(w):
		return fmt.Errorf("output ends before expected line %d: %s", wi+1, want[wi])
	default:
		return fmt.Errorf("output has more lines than expected, from: %s", got[gi])
	}
}

// match is glob matching of line lists with "..." as the only wildcard.
func match(w, g []string) bool {
	if len(w) == 0 {
		return len(g) == 0
	}
	if w[0] == "..." {
		for k := 0; k <= len(g); k++ {
			if match(w[1:], g[k:]) {
				return true
			}
		}
		return false
	}
	return len(g) > 0 && w[0] == g[0] && match(w[1:], g[1:])
}

// Env is where commands run: Root is the repository, Bin the folder that
// holds the freshly built tessel.
type Env struct {
	Root string
	Bin  string
	// Cache, when not nil, keeps every output by command, so that a file
	// checked twice runs each command once.
	Cache map[string]string
}

// Run runs one command as the checker does and returns its standard
// output; a non-zero exit is an error carrying the standard error.
func (e Env) Run(ctx context.Context, command string) (string, error) {
	if out, ok := e.Cache[command]; ok {
		return out, nil
	}
	out, err := e.run(ctx, command)
	if err == nil && e.Cache != nil {
		e.Cache[command] = out
	}
	return out, err
}

func (e Env) run(ctx context.Context, command string) (string, error) {
	dir, err := os.MkdirTemp("", "docscheck")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	names, err := topLevel(e.Root)
	if err != nil {
		return "", err
	}
	for _, name := range names {
		if err := os.Symlink(filepath.Join(e.Root, name), filepath.Join(dir, name)); err != nil {
			return "", err
		}
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+e.Bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%v: %s", err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// topLevel lists the top-level entries of the repository that commands
// see: those git tracks, where root is a git checkout (so that what a
// reader's own runs left in the checkout, such as run/ or s.json, does
// not stand in a command's way), else every entry not starting with a dot.
func topLevel(root string) ([]string, error) {
	seen := map[string]bool{}
	var names []string
	if out, err := exec.Command("git", "-C", root, "ls-files", "-z").Output(); err == nil && len(out) > 0 {
		for _, p := range strings.Split(string(out), "\x00") {
			name, _, _ := strings.Cut(p, "/")
			if name == "" || strings.HasPrefix(name, ".") || seen[name] {
				continue
			}
			if _, err := os.Lstat(filepath.Join(root, name)); err != nil {
				continue // deleted in the work tree
			}
			seen[name] = true
			names = append(names, name)
		}
		return names, nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	for _, en := range entries {
		if !strings.HasPrefix(en.Name(), ".") {
			names = append(names, en.Name())
		}
	}
	return names, nil
}

// Failure is one block whose output no longer matches.
type Failure struct {
	File  string
	Block Block
	Err   error
}

func (f Failure) Error() string {
	return fmt.Sprintf("%s:%d: %s: %v", f.File, f.Block.Line, f.Block.Command, f.Err)
}

// CheckFile checks every block of one Markdown file and returns the
// failures; with update, it rewrites the blocks that fail from the
// commands' output (keeping an elided block's head and tail lengths) and
// writes the file back. progress, when not nil, hears of each block.
func (e Env) CheckFile(ctx context.Context, path string, update bool, progress func(Block)) ([]Failure, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	blocks, err := Parse(string(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	lines := splitLines(string(data))
	var fails []Failure
	type edit struct {
		start, end int
		with       []string
	}
	var edits []edit
	for _, b := range blocks {
		if progress != nil {
			progress(b)
		}
		out, err := e.Run(ctx, b.Command)
		if err != nil {
			fails = append(fails, Failure{path, b, err})
			continue
		}
		got := splitLines(out)
		if err := Match(b.Want, got); err != nil {
			fails = append(fails, Failure{path, b, err})
			edits = append(edits, edit{b.start, b.end, elide(b.Want, got)})
		}
	}
	if update && len(edits) > 0 {
		for i := len(edits) - 1; i >= 0; i-- {
			ed := edits[i]
			lines = append(lines[:ed.start], append(ed.with, lines[ed.end:]...)...)
		}
		text := strings.Join(lines, "\n")
		if strings.HasSuffix(string(data), "\n") {
			text += "\n"
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return fails, err
		}
	}
	return fails, nil
}

// elide keeps the shape of a block with one elision: as many lines of got
// before the "..." as want had before it, and as many after as want had
// after it. A block with no elision, or with several (which name lines in
// the middle that the new output may have moved), gets the whole output,
// for its writer to elide again.
func elide(want, got []string) []string {
	first, last, n := -1, -1, 0
	for i, l := range want {
		if l == "..." {
			if first < 0 {
				first = i
			}
			last = i
			n++
		}
	}
	if n != 1 {
		return got
	}
	head, tail := first, len(want)-1-last
	if head+tail >= len(got) {
		return got
	}
	out := append([]string(nil), got[:head]...)
	out = append(out, "...")
	return append(out, got[len(got)-tail:]...)
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Build builds tessel from the repository at root into a new folder under
// dir and returns that folder.
func Build(ctx context.Context, root, dir string) (string, error) {
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(bin, "tessel"), "./cmd/tessel")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/tessel: %v: %s", err, out)
	}
	return bin, nil
}
