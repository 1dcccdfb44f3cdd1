package partition

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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

// Check refuses the options tessel partition's flags cannot combine.
func TestOptionsCheck(t *testing.T) {
	ok := Options{Chunks: 1, Order: placement.Loop, IPTimeLimit: time.Second}
	if err := ok.Check(); err != nil {
		t.Errorf("%+v: %v", ok, err)
	}
	for _, c := range []struct {
		change func(*Options)
		want   string
	}{
		{func(o *Options) { o.Chunks = 0 }, "--chunks must be at least 1"},
		{func(o *Options) { o.Order = "w" }, "--order must be loop or v"},
		{func(o *Options) { o.Order = placement.V }, "--order v takes --chunks 2"},
		{func(o *Options) { o.Chunks, o.NonContiguous = 2, true }, "do not go together"},
		{func(o *Options) { o.TimeUnit = -1 }, "must be ≥ 0"},
		{func(o *Options) { o.IPTimeLimit = 0 }, "--ip-time-limit must be positive"},
	} {
		o := ok
		c.change(&o)
		if err := o.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", o, err, c.want)
		}
	}
}
