// Package fuzzcorpus keeps a fuzzer's seed corpus in step with the example
// files a package ships (good and bad inputs), for the tests of the
// packages whose parsers are fuzzed. It is test support only.
package fuzzcorpus

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// File is data as a seed in the format of go test fuzz v1.
func File(data []byte) []byte {
	return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", data)
}

// Check fails t unless corpus holds, for every *.json file of the source
// folders, a seed named "<folder>-<file name>" with that file's bytes;
// with update it writes them first. pkg names the package in the hint to
// rerun with -update.
func Check(t testing.TB, corpus string, sources []string, update bool, pkg string) {
	t.Helper()
	var files []string
	for _, d := range sources {
		fs, err := filepath.Glob(filepath.Join(d, "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	if update {
		if err := os.MkdirAll(corpus, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		seed := filepath.Join(corpus, filepath.Base(filepath.Dir(path))+"-"+strings.TrimSuffix(filepath.Base(path), ".json"))
		want := File(data)
		if update {
			if err := os.WriteFile(seed, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if got, err := os.ReadFile(seed); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s missing or out of date (run go test %s -update)", seed, pkg)
		}
	}
}
