package hetero_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/hetero"
	"github.com/tessel-pp/tessel/partition"
)

func TestLoadModel(t *testing.T) {
	bytes, err := cluster.Load("../testdata/clusters/four-80gb.json")
	if err != nil {
		t.Fatal(err)
	}
	model := func(path string, devices int) partition.Model {
		return partition.Model{Path: path, Overrides: partition.Overrides{Devices: devices, CPUs: -1}}
	}
	for _, tc := range []struct {
		name string
		m    partition.Model
		want string // "" for no error
	}{
		{"fits", model("../testdata/models/gpt-7b-bytes.json", 0), ""},
		{"devices named", model("../testdata/models/gpt-7b-bytes.json", 4), ""},
		{"other devices", model("../testdata/models/gpt-7b-bytes.json", 2), "--devices 2 for a cluster of 4 devices"},
		{"not in bytes", model("../testdata/models/gpt-like.json", 0), `c.json: "memory_bytes" needs a profile in bytes`},
		{"graph of the set", model("../testdata/dnn-partitioning/layer/bert24_training.json", 0), "bert24_training.json: --flag needs a layer profile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := hetero.LoadModel(tc.m, bytes, "c.json", "--flag")
			if tc.want == "" {
				if err != nil || g.Accelerators != 4 {
					t.Fatalf("got %v, accelerators %v", err, g)
				}
				return
			}
			var in *partition.InputError
			if !errors.As(err, &in) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an *InputError with %q", err, tc.want)
			}
		})
	}
}
