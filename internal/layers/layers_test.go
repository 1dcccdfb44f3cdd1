// Package layers holds the tests of the code's shape: the import order
// (every package of the module imports only packages listed above it in
// the table of docs/library.md, the one place the order is written down)
// and the limits of docs/architecture.md (shape_test.go).
package layers

import (
	"bufio"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/tessel-pp/tessel/"

// root is the module's root, two levels above this package.
const root = "../.."

// row is a table row of docs/library.md whose first cell names a package:
// "| `placement` | …".
var row = regexp.MustCompile("^\\| `([a-z0-9/]+)` \\|")

// documentedOrder reads the packages of docs/library.md's table, bottom
// (no imports) first.
func documentedOrder(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			order = append(order, m[1])
		}
	}
	return order, sc.Err()
}

// moduleImports is, for every directory of the module with Go files
// other than tests, the module's packages its non-test files import.
// Test files may import from anywhere: an example of search may export
// its schedule with torchcsv.
func moduleImports(root string) (map[string][]string, error) {
	imports := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if _, ok := imports[pkg]; !ok {
			imports[pkg] = nil
		}
		for _, im := range f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if q, ok := strings.CutPrefix(p, module); ok && !slices.Contains(imports[pkg], q) {
				imports[pkg] = append(imports[pkg], q)
			}
		}
		return nil
	})
	return imports, err
}

// violations lists every import that runs up the order, and every
// package the order does not list or lists twice.
func violations(order []string, imports map[string][]string) []string {
	rank := map[string]int{}
	var bad []string
	for i, p := range order {
		if _, ok := rank[p]; ok {
			bad = append(bad, fmt.Sprintf("%s is listed twice", p))
		}
		rank[p] = i
	}
	var pkgs []string
	for p := range imports {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		r, ok := rank[p]
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is not in the table", p))
			continue
		}
		for _, q := range imports[p] {
			if rq, ok := rank[q]; ok && rq >= r {
				bad = append(bad, fmt.Sprintf("%s imports %s, listed below it", p, q))
			}
		}
	}
	for _, p := range order {
		if _, ok := imports[p]; !ok {
			bad = append(bad, fmt.Sprintf("%s is in the table but is no package", p))
		}
	}
	return bad
}

func TestImportsGoDown(t *testing.T) {
	order, err := documentedOrder(filepath.Join(root, "docs", "library.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(order) < 10 {
		t.Fatalf("docs/library.md: %d packages in the table; the table's rows start with | `package` |", len(order))
	}
	imports, err := moduleImports(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations(order, imports) {
		t.Errorf("docs/library.md: %s", v)
	}
}

// TestViolations: the check finds an import up, a package left out and a
// row that names no package.
func TestViolations(t *testing.T) {
	order := []string{"a", "b", "gone"}
	imports := map[string][]string{"a": {"b"}, "b": {"a"}, "c": nil}
	got := violations(order, imports)
	want := []string{
		"a imports b, listed below it",
		"c is not in the table",
		"gone is in the table but is no package",
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations = %q, want %q", got, want)
	}
}
