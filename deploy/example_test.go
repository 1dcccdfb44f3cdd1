package deploy_test

import (
	"context"
	"os"
	"path/filepath"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/deploy"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
)

// tessel export as a library call: a schedule file (here 1F1B on two
// devices) as PyTorch's pipelining CSV, one row per rank.
func ExampleExport() {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2})
	if err != nil {
		panic(err)
	}
	s, err := baseline.OneFOneB(spec.New(p, 3))
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "deploy")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "1f1b.json")
	f, err := os.Create(path)
	if err != nil {
		panic(err)
	}
	if err := s.Write(f); err != nil {
		panic(err)
	}
	f.Close()
	err = deploy.Export(context.Background(), deploy.ExportOptions{Schedule: path, Format: "torch-csv", Recv: "early", CommTime: 1}, os.Stdout)
	if err != nil {
		panic(err)
	}
	// Output:
	// 0F0,0F1,0B0,0F2,0B1,0B2
	// 1F0,1B0,1F1,1B1,1F2,1B2
}
