package partition

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/placement"
)

// Run places chunked stages by their order, sums a device's chunks into
// its load, and marks what the model cannot do as ErrUnsplittable.
func TestRun(t *testing.T) {
	for _, c := range []struct {
		model   string
		devices int
		opt     Options
		devs    string // stage devices; "" when an error is wanted
		maxLoad float64
	}{
		{"gpt-like", 4, Options{Chunks: 2, Order: placement.V}, "[0 1 2 3 3 2 1 0]", 13.2},
		{"gpt-like", 4, Options{Chunks: 2, Order: placement.Loop}, "[0 1 2 3 0 1 2 3]", 0},
		{"gpt-like", 4, Options{}, "[0 1 2 3]", 0},
		{"branches", 3, Options{Chunks: 3}, "", 0},
	} {
		t.Run(fmt.Sprint(c.model, c.opt.Chunks, c.opt.Order), func(t *testing.T) {
			g, err := Load("../testdata/models/" + c.model + ".json")
			if err != nil {
				t.Fatal(err)
			}
			g.Accelerators, g.CPUs = c.devices, 0
			res, err := Run(context.Background(), g, c.opt)
			if c.devs == "" {
				if !errors.Is(err, ErrUnsplittable) {
					t.Fatalf("got %v, want ErrUnsplittable", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(res.StageDevices); got != c.devs {
				t.Errorf("stage devices %s, want %s", got, c.devs)
			}
			if c.maxLoad > 0 && res.MaxLoad != c.maxLoad {
				t.Errorf("max load %v, want %v", res.MaxLoad, c.maxLoad)
			}
			if res.Converted == nil || res.Converted.Placement.Devices != c.devices {
				t.Errorf("placement %+v", res.Placement)
			}
		})
	}
}
