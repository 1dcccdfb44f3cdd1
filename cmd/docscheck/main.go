// Command docscheck re-runs the commands behind the checked blocks of the
// documentation and fails when an output no longer matches its text
// (`make docs-check`); with -update it rewrites the blocks that differ
// (`make docs-update`). It builds tessel from the checkout first. See
// package docscheck for the block syntax.
//
//	go run ./cmd/docscheck [-update] [FILE.md ...]
//
// Without files it checks README.md and every docs/*.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/tessel-pp/tessel/internal/docscheck"
)

func main() {
	update := flag.Bool("update", false, "rewrite the blocks whose output differs")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, *update, flag.Args()))
}

func run(ctx context.Context, update bool, files []string) int {
	root, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "docscheck:", err)
		return 2
	}
	if len(files) == 0 {
		docs, _ := filepath.Glob(filepath.Join("docs", "*.md"))
		files = append([]string{"README.md"}, docs...)
	}
	tmp, err := os.MkdirTemp("", "docscheck-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, "docscheck:", err)
		return 2
	}
	defer os.RemoveAll(tmp)
	bin, err := docscheck.Build(ctx, root, tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, "docscheck:", err)
		return 2
	}
	env := docscheck.Env{Root: root, Bin: bin}
	failed, n := 0, 0
	for _, f := range files {
		start := time.Now()
		fails, err := env.CheckFile(ctx, f, update, func(b docscheck.Block) {
			n++
			fmt.Fprintf(os.Stderr, "%s:%d: %s\n", f, b.Line, b.Command)
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "docscheck:", err)
			return 2
		}
		for _, fl := range fails {
			fmt.Fprintln(os.Stderr, "FAIL", fl.Error())
		}
		failed += len(fails)
		fmt.Fprintf(os.Stderr, "%s: %d failing (%.1fs)\n", f, len(fails), time.Since(start).Seconds())
	}
	switch {
	case failed == 0:
		fmt.Printf("docscheck: %d blocks match\n", n)
		return 0
	case update:
		fmt.Printf("docscheck: %d of %d blocks rewritten; review the diff\n", failed, n)
		return 0
	default:
		fmt.Printf("docscheck: %d of %d blocks differ (make docs-update rewrites them)\n", failed, n)
		return 1
	}
}
