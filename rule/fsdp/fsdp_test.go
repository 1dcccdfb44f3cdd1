package fsdp

import (
	"strings"
	"testing"
)

// The FSDP file: its fields, and one line naming what is wrong.
func TestRead(t *testing.T) {
	f, err := Read([]byte(`{"max_active_stages": 2, "gather": "micro-batch", "stages": [{"forward": "f0", "params": 3, "gather_time": 1, "reduce_time": 2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if m := f.Model; m.MaxActive != 2 || m.Per != PerMicroBatch || len(m.Stages) != 1 || m.Stages[0] != (Stage{Forward: "f0", Params: 3, Gather: 1, Reduce: 2}) {
		t.Errorf("read %+v", m)
	}
	for _, tc := range []struct{ in, want string }{
		{``, "empty input"},
		{`{"stages": []}`, `missing field "max_active_stages"`},
		{`{"max_active_stages": 0, "every_stage": {"params": 1, "gather_time": 1}}`, "max_active_stages must be 1.."},
		{`{"max_active_stages": 1}`, `give one of "stages" and "every_stage"`},
		{`{"max_active_stages": 1, "gather": "step", "every_stage": {"params": 1, "gather_time": 1}}`, `gather must be "iteration" or "micro-batch"`},
		{`{"max_active_stages": 1, "every_stage": {"params": -1, "gather_time": 1}}`, "must be 0.."},
		{`{"max_active_stages": 1, "stages": [{"forward": "f0", "params": 1, "gather_time": 1}, {"forward": "f0", "params": 1, "gather_time": 1}]}`, "named twice"},
		{`{"max_active_stages": 1, "every_stage": {"params": 1, "gather_time": 1, "extra": 2}}`, `unknown field "extra"`},
		{`{"max_active_stages": 1, "every_stage": {"params": 1, "gather_time": 1}} x`, "trailing data"},
	} {
		_, err := Read([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.in, err, tc.want)
		}
	}
}

// FuzzRead: never a panic; errors of one line; what it accepts checks.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"max_active_stages": 2, "gather": "iteration", "every_stage": {"params": 4, "gather_time": 2, "reduce_time": 2}}`))
	f.Add([]byte(`{"max_active_stages": 1, "stages": [{"forward": "f0", "params": 3, "gather_time": 1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Read(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if file.Every == nil {
			if err := file.Model.Check(); err != nil {
				t.Fatalf("accepted a model that fails Check: %v", err)
			}
		}
	})
}
