package render_test

import (
	"os"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/render"
	"github.com/tessel-pp/tessel/spec"
)

// 1F1B on two devices drawn in the style of the Tessel paper's figures:
// one row per device, one cell per time unit.
func ExampleText() {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2})
	if err != nil {
		panic(err)
	}
	s, err := baseline.OneFOneB(spec.New(p, 3))
	if err != nil {
		panic(err)
	}
	if err := render.Text(s, os.Stdout); err != nil {
		panic(err)
	}
	// Output:
	// v-shape: 2 devices, 3 micro-batches, memory unlimited, makespan 16, bubble rate 25.0%
	// legend: f3/b3 forward/backward of micro-batch 3, F3/B3 on a device group, -- running on, . idle
	// time     0              5              10             15
	// dev 0    f0 f1 .  .  .  b0 -- -- f2 b1 -- -- .  b2 -- --
	// dev 1    .  f0 b0 -- -- f1 b1 -- -- f2 b2 -- -- .  .  .
}
