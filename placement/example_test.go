package placement_test

import (
	"fmt"

	"github.com/tessel-pp/tessel/placement"
)

// A placement from JSON: two stages on two devices, the backward of
// each on the device of its forward. Parse checks it (ids, devices,
// dependencies, memory that returns) before it returns.
func ExampleParse() {
	p, err := placement.Parse([]byte(`{
  "name": "two-stages",
  "devices": 2,
  "blocks": [
    {"id": "f0", "kind": "forward", "devices": [0], "time": 1, "memory": 1},
    {"id": "f1", "kind": "forward", "devices": [1], "time": 1, "memory": 1},
    {"id": "b1", "kind": "backward", "devices": [1], "time": 2, "memory": -1},
    {"id": "b0", "kind": "backward", "devices": [0], "time": 2, "memory": -1}
  ],
  "deps": [["f0", "f1"], ["f1", "b1"], ["b1", "b0"]]
}`))
	if err != nil {
		panic(err)
	}
	for _, b := range p.Blocks {
		fmt.Printf("%s %-8s on %v, time %d, memory %+d\n", b.ID, b.Kind, b.Devices, b.Time, b.Memory)
	}
	// A bad placement: one line that names the block and the problem.
	_, err = placement.Parse([]byte(`{"name": "x", "devices": 1, "blocks": [{"id": "f0", "kind": "forward", "devices": [1], "time": 1, "memory": 0}], "deps": []}`))
	fmt.Println(err)
	// Output:
	// f0 forward  on [0], time 1, memory +1
	// f1 forward  on [1], time 1, memory +1
	// b1 backward on [1], time 2, memory -1
	// b0 backward on [0], time 2, memory -1
	// placement "x": block "f0": device 1 out of range 0..0
}

// A built-in shape: the V placement of the zero-bubble schedules, two
// stages per device with the backward split into input and weight
// gradients.
func ExampleBuiltin() {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2, Chunks: 2, Order: placement.V, SplitBackward: true})
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Name, len(p.Blocks), "blocks")
	for _, b := range p.Blocks {
		fmt.Printf("%s:%v ", b.ID, b.Devices)
	}
	fmt.Println()
	// Output:
	// v-shape-v2-split 12 blocks
	// f0:[0] f1:[1] f2:[1] f3:[0] i3:[0] w3:[0] i2:[1] w2:[1] i1:[1] w1:[1] i0:[0] w0:[0]
}
