package main

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
)

// --jobs is offered only where something uses it: search (the workers of
// the enumerate and race methods), sweep (points searched at once) and
// plan --parallel auto (layouts evaluated at once; refused without it).
// compare's Tessel search is the joint method, which runs one solver, so
// compare has no --jobs; search refuses --jobs with the joint method
// rather than ignore it.
func TestJobsOnlyWhereUsed(t *testing.T) {
	var with []string
	for _, c := range newApp(io.Discard, io.Discard).Commands {
		for _, f := range c.Flags {
			if slices.Contains(f.Names(), "jobs") {
				with = append(with, c.Name)
			}
		}
	}
	if want := []string{"search", "sweep", "plan"}; !slices.Equal(with, want) {
		t.Errorf("commands with --jobs: %v, want %v", with, want)
	}
	for _, args := range [][]string{
		{"compare", "-p", "v-shape", "-n", "8", "--jobs", "2"},
		{"search", "-p", "v-shape", "-n", "8", "--jobs", "2"},
		{"search", "-p", "v-shape", "-n", "8", "--method", "joint", "-j", "1"},
	} {
		code, out, errOut := runCLI(t, args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line", args, code, out, errOut)
		}
	}
	// Where the method has workers, --jobs runs, and the answer does not
	// depend on their number.
	var outs []string
	for _, j := range []string{"1", "2"} {
		code, out, errOut := runCLI(t, "search", "-p", "v-shape", "-n", "8", "--memory", "4", "--method", "enumerate", "--jobs", j, "--json")
		if code != 0 {
			t.Fatalf("--jobs %s: exit %d: %s", j, code, errOut)
		}
		var sum map[string]any
		if err := json.Unmarshal([]byte(out), &sum); err != nil {
			t.Fatal(err)
		}
		delete(sum, "seconds")
		b, _ := json.Marshal(sum)
		outs = append(outs, string(b))
	}
	if outs[0] != outs[1] {
		t.Errorf("enumerate on 1 and 2 workers differ:\n%s\n%s", outs[0], outs[1])
	}
}
