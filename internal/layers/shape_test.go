package layers

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The limits the code keeps to (docs/architecture.md, "Limits of the
// shape"): they keep a function readable in one screen or two, a problem
// one value, and the command a layer of flags.
const (
	maxFuncLines   = 150   // any function or method
	maxRunLines    = 80    // search.Run, the search's one entry point
	maxParams      = 5     // besides a context and an options struct
	maxCmdLines    = 2500  // cmd/tessel without tests
	maxReadmeBytes = 15000 // the README is a door; the manual is docs/
	minExamples    = 12    // runnable examples of the main paths
)

// goFile is one parsed Go file of the module.
type goFile struct {
	pkg  string // directory relative to the root, slash-separated
	path string
	test bool
	fset *token.FileSet
	ast  *ast.File
}

// parseModule parses every Go file of the module, tests included,
// skipping testdata and hidden directories.
func parseModule(root string) ([]goFile, error) {
	var out []goFile
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		out = append(out, goFile{pkg: filepath.ToSlash(rel), path: path, test: strings.HasSuffix(d.Name(), "_test.go"), fset: fset, ast: f})
		return nil
	})
	return out, err
}

// funcName is "pkg.Name" or "pkg.(Recv).Name".
func funcName(pkg string, fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return pkg + "." + fn.Name.Name
	}
	return fmt.Sprintf("%s.(%s).%s", pkg, typeString(fn.Recv.List[0].Type), fn.Name.Name)
}

// typeString writes a parameter's type as the source spells it, enough
// to tell a context, an options struct and a placement apart.
func typeString(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return "*" + typeString(t.X)
	case *ast.SelectorExpr:
		return typeString(t.X) + "." + t.Sel.Name
	case *ast.ArrayType:
		return "[]" + typeString(t.Elt)
	case *ast.Ellipsis:
		return "..." + typeString(t.Elt)
	case *ast.IndexExpr:
		return typeString(t.X) + "[" + typeString(t.Index) + "]"
	case *ast.MapType:
		return "map[" + typeString(t.Key) + "]" + typeString(t.Value)
	case *ast.FuncType:
		return "func"
	case *ast.InterfaceType:
		return "interface"
	case *ast.ChanType:
		return "chan " + typeString(t.Value)
	}
	return fmt.Sprintf("%T", e)
}

// params lists a function's parameter types, one per parameter.
func params(ft *ast.FuncType) []string {
	var out []string
	for _, f := range ft.Params.List {
		n := max(len(f.Names), 1)
		for range n {
			out = append(out, typeString(f.Type))
		}
	}
	return out
}

// effortParam says whether a parameter type is one the limit on
// parameters does not count: a context, or an options struct.
func effortParam(typ string) bool {
	typ = strings.TrimPrefix(typ, "*")
	return typ == "context.Context" || strings.HasSuffix(typ, "Options") || strings.HasSuffix(typ, "Opts")
}

// shapeViolations checks the non-test files against the limits.
func shapeViolations(files []goFile) []string {
	var bad []string
	for _, f := range files {
		if f.test {
			continue
		}
		for _, decl := range f.ast.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				name := funcName(f.pkg, d)
				if d.Body != nil {
					lines := f.fset.Position(d.End()).Line - f.fset.Position(d.Pos()).Line + 1
					limit := maxFuncLines
					if name == "search.Run" {
						limit = maxRunLines - 1
					}
					if lines > limit {
						bad = append(bad, fmt.Sprintf("%s is %d lines, over %d", name, lines, limit))
					}
				}
				ps := params(d.Type)
				n := 0
				for _, p := range ps {
					if !effortParam(p) {
						n++
					}
				}
				if n > maxParams {
					bad = append(bad, fmt.Sprintf("%s takes %d parameters besides a context and options, over %d", name, n, maxParams))
				}
				if d.Name.IsExported() && slices.Contains(ps, "*placement.Placement") && problemApart(d.Type) {
					bad = append(bad, fmt.Sprintf("%s takes a placement, micro-batches and a memory budget apart (take a spec.Spec)", name))
				}
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				for _, s := range d.Specs {
					vs := s.(*ast.ValueSpec)
					for i, id := range vs.Names {
						if id.IsExported() && !sentinelError(id.Name, vs, i) {
							bad = append(bad, fmt.Sprintf("%s.%s is an exported package variable", f.pkg, id.Name))
						}
					}
				}
			}
		}
		for _, im := range f.ast.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p == "C" && f.pkg != "z3" && !strings.HasPrefix(f.pkg, "z3/") {
				bad = append(bad, fmt.Sprintf("%s imports \"C\"; only z3, the binding, may", f.path))
			}
			if f.pkg == "smt" && (p == module+"placement" || p == module+"schedule") {
				bad = append(bad, fmt.Sprintf("%s imports %s; smt states generic problems", f.path, p))
			}
		}
	}
	return bad
}

// problemApart says whether a function's parameters name the number of
// micro-batches and a memory budget beside each other, by the names the
// code gives them.
func problemApart(ft *ast.FuncType) bool {
	micro, memory := false, false
	for _, f := range ft.Params.List {
		for _, id := range f.Names {
			switch strings.ToLower(id.Name) {
			case "n", "micro", "microbatches", "nmicro":
				micro = true
			case "m", "memory", "mem", "budget":
				memory = true
			}
		}
	}
	return micro && memory
}

// sentinelError says whether an exported variable is an error value
// (ErrX = errors.New(…), or another package's ErrY): compared with
// errors.Is, never assigned.
func sentinelError(name string, vs *ast.ValueSpec, i int) bool {
	if !strings.HasPrefix(name, "Err") || i >= len(vs.Values) {
		return false
	}
	switch v := vs.Values[i].(type) {
	case *ast.CallExpr:
		fn := typeString(v.Fun)
		return fn == "errors.New" || fn == "fmt.Errorf"
	case *ast.SelectorExpr:
		// another package's sentinel under this package's name
		return strings.HasPrefix(v.Sel.Name, "Err")
	}
	return false
}

// TestShape: the module keeps the limits above.
func TestShape(t *testing.T) {
	files, err := parseModule(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range shapeViolations(files) {
		t.Error(v)
	}
	examples, cmdLines := 0, 0
	for _, f := range files {
		if f.test {
			for _, d := range f.ast.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Example") {
					examples++
				}
			}
			continue
		}
		if f.pkg == "cmd/tessel" {
			cmdLines += f.fset.Position(f.ast.FileEnd).Line - 1
		}
	}
	if examples < minExamples {
		t.Errorf("%d runnable examples, want at least %d", examples, minExamples)
	}
	if cmdLines >= maxCmdLines {
		t.Errorf("cmd/tessel is %d lines without tests, want under %d", cmdLines, maxCmdLines)
	}
	readme, err := os.Stat(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if readme.Size() >= maxReadmeBytes {
		t.Errorf("README.md is %d bytes, want under %d", readme.Size(), maxReadmeBytes)
	}
	t.Logf("%d examples, cmd/tessel %d lines, README %d bytes", examples, cmdLines, readme.Size())
}

// TestShapeViolations: the check finds a long function, too many
// parameters, a placement with its ints apart, an exported variable and
// a stray cgo import, and passes a context, options and a sentinel error.
func TestShapeViolations(t *testing.T) {
	src := `package x

import "C"

var Table = []int{1}

var ErrGone = errors.New("gone")

func Long() {
` + strings.Repeat("\tprintln()\n", maxFuncLines) + `}

func Many(ctx context.Context, a, b, c, d, e, f int, opts Options) {}

func Fine(ctx context.Context, a, b, c, d, e int, opts *Options) {}

func Apart(p *placement.Placement, n, memory int) {}

func Alone(p *placement.Placement, block, micro int) {}

var ErrAlias = other.ErrGone
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := shapeViolations([]goFile{{pkg: "x", path: "x/x.go", fset: fset, ast: f}})
	want := []string{
		"x.Table is an exported package variable",
		fmt.Sprintf("x.Long is %d lines, over %d", maxFuncLines+2, maxFuncLines),
		"x.Many takes 6 parameters besides a context and options, over 5",
		"x.Apart takes a placement, micro-batches and a memory budget apart (take a spec.Spec)",
		`x/x.go imports "C"; only z3, the binding, may`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations =\n%q\nwant\n%q", got, want)
	}
}
