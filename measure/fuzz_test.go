package measure

import (
	"strings"
	"testing"
)

// FuzzParseTrace feeds the trace reader arbitrary bytes: a trace or a
// one-line error, never a panic; a trace that parses has ordered spans,
// one per op in every iteration.
func FuzzParseTrace(f *testing.F) {
	f.Add([]byte(`{"rank": 0, "placement": "p", "micro_batches": 1, "ops": 2, "iterations": [{"start": 5, "ops": [[0, 1], [1, 3]], "step": [3, 4]}]}`))
	f.Add([]byte(`{"rank": 1, "placement": "p", "micro_batches": 2, "ops": 0, "iterations": [{"start": 0, "ops": [], "step": [0, 0]}]}`))
	f.Add([]byte(`{"iterations": []}`))
	f.Add([]byte(`{"rank": 0, "ops": 1, "micro_batches": 1, "iterations": [{"ops": [[2, 1]]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := ParseTrace(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		for _, it := range tr.Iterations {
			if len(it.Ops) != tr.Ops {
				t.Fatalf("%d spans for %d ops", len(it.Ops), tr.Ops)
			}
			last := int64(0)
			for _, s := range it.Ops {
				if s[0] < last || s[1] < s[0] {
					t.Fatalf("span %v after %d", s, last)
				}
				last = s[1]
			}
		}
	})
}
