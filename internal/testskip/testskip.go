// Package testskip is the one way a test of this repository skips. Under
// CI=true — a continuous-integration run, where every test must run — a
// skip is a failure instead, so that a test cannot pass there without
// checking anything (missing data, a missing interpreter, a fast
// machine). Test support only: nothing outside tests imports it, and a
// test of this package checks that no other file skips on its own.
package testskip

import (
	"fmt"
	"os"
	"testing"
)

// CI reports whether the tests run under CI=true.
func CI() bool { return os.Getenv("CI") == "true" }

// Skip skips t, saying why; under CI=true it fails t instead.
func Skip(t testing.TB, why string) {
	t.Helper()
	if CI() {
		t.Fatalf("CI=true: this test may not skip: %s", why)
		return
	}
	t.Skip(why)
}

// Skipf is Skip with a format.
func Skipf(t testing.TB, format string, args ...any) {
	t.Helper()
	Skip(t, fmt.Sprintf(format, args...))
}

// Short skips t in short mode (go test -short), saying why it is long;
// under CI=true the test runs anyway, short mode or not.
func Short(t testing.TB, why string) {
	t.Helper()
	if testing.Short() && !CI() {
		t.Skip("short mode: " + why)
	}
}
