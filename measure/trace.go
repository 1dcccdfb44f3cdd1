package measure

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/tessel-pp/tessel/internal/strictjson"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/runtimegen"
)

// RankTrace is one rank's trace file (trace<R>.json of worker.py run
// --trace): per iteration after the warm-up, its start on the host's
// clock and every op's start and end after it, in ns.
type RankTrace struct {
	Rank         int              `json:"rank"`
	Placement    string           `json:"placement"`
	MicroBatches int              `json:"micro_batches"`
	Ops          int              `json:"ops"`
	Host         string           `json:"host"`
	Device       string           `json:"device"`
	Backend      string           `json:"backend"`
	DType        string           `json:"dtype"`
	Torch        string           `json:"torch"`
	Threads      int              `json:"threads"`
	Clock        string           `json:"clock"`
	Warmup       int              `json:"warmup"`
	Iterations   []IterationTrace `json:"iterations"`
}

// IterationTrace is one iteration of one rank: Start on the host's
// monotonic clock (ns), and per op of its program [start, end] in ns
// after Start; Step is the optimizer step's.
type IterationTrace struct {
	Start int64      `json:"start"`
	Ops   [][2]int64 `json:"ops"`
	Step  [2]int64   `json:"step"`
}

// TraceName is the trace file of rank r in a results directory.
func TraceName(r int) string { return fmt.Sprintf("trace%d.json", r) }

// LoadTraces reads the traces of every rank of progs from dir and checks
// them against the programs: one per rank, the same placement and
// micro-batches, one span per op with 0 ≤ start ≤ end, spans in program
// order, and the same iterations on every rank.
func LoadTraces(dir string, progs []*runtimegen.Program) ([]*RankTrace, error) {
	dir = filepath.Clean(dir)
	ts := make([]*RankTrace, len(progs))
	for r, prog := range progs {
		path := filepath.Join(dir, TraceName(r))
		data, err := limits.ReadFile(path, limits.FileBytes)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no trace of rank %d (run launch.sh with --trace and --out %s)", path, r, dir)
		}
		if err != nil {
			return nil, err
		}
		t, err := ParseTrace(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		switch {
		case t.Rank != r:
			return nil, fmt.Errorf("%s: the trace of rank %d, not %d", path, t.Rank, r)
		case t.Placement != prog.Placement || t.MicroBatches != prog.MicroBatches:
			return nil, fmt.Errorf("%s: a trace of %s with %d micro-batches, not of these programs (%s, %d)", path, t.Placement, t.MicroBatches, prog.Placement, prog.MicroBatches)
		case t.Ops != len(prog.Ops):
			return nil, fmt.Errorf("%s: %d ops traced, the program has %d: not these programs", path, t.Ops, len(prog.Ops))
		case r > 0 && len(t.Iterations) != len(ts[0].Iterations):
			return nil, fmt.Errorf("%s: %d iterations, rank 0 traced %d", path, len(t.Iterations), len(ts[0].Iterations))
		}
		ts[r] = t
	}
	return ts, nil
}

// ParseTrace reads one trace file: no unknown fields, at least one
// iteration, every span ordered and after the one before, the optimizer
// step after the last op. Every error is one line naming what is wrong.
func ParseTrace(data []byte) (*RankTrace, error) {
	raw, err := strictjson.Top(data, "trace object")
	if err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	var t RankTrace
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("trace: %w", decodeError(err))
	}
	switch {
	case len(t.Iterations) == 0:
		return nil, errors.New("trace: no iterations")
	case t.Rank < 0:
		return nil, fmt.Errorf("trace: rank %d: want ≥ 0", t.Rank)
	case t.MicroBatches < 1:
		return nil, fmt.Errorf("trace: micro_batches %d: want ≥ 1", t.MicroBatches)
	case t.Ops < 0:
		return nil, fmt.Errorf("trace: ops %d: want ≥ 0", t.Ops)
	}
	for k, it := range t.Iterations {
		if len(it.Ops) != t.Ops {
			return nil, fmt.Errorf("trace: iteration %d: %d spans for %d ops", k, len(it.Ops), t.Ops)
		}
		last := int64(0)
		for i, s := range it.Ops {
			if s[0] < last || s[1] < s[0] {
				return nil, fmt.Errorf("trace: iteration %d: op %d spans [%d, %d] after %d: want ordered spans", k, i, s[0], s[1], last)
			}
			last = s[1]
		}
		if it.Step[0] < last || it.Step[1] < it.Step[0] {
			return nil, fmt.Errorf("trace: iteration %d: the optimizer step spans [%d, %d] after %d: want it ordered, after the last op", k, it.Step[0], it.Step[1], last)
		}
	}
	return &t, nil
}

// decodeError says in one line, without Go's type names, what
// encoding/json refused in a trace that is valid JSON.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := "an integer"
		switch te.Type.Kind() {
		case reflect.String:
			want = "a string"
		case reflect.Slice, reflect.Array:
			want = "an array"
		case reflect.Struct:
			want = "an object"
		}
		return fmt.Errorf("field %q: want %s, got a JSON %s", te.Field, want, strictjson.Shorten(te.Value))
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: "); ok {
		return errors.New(msg)
	}
	return err
}
