package measure

import (
	"fmt"

	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/runtimegen"
)

// Costs are what a prediction charges, in ms: every block its compute
// time (a recompute its forward block's), every transfer between devices
// Transfer from the moment both ends have posted it until it has
// arrived, and every action of a program (compute, send, receive, wait,
// offload, reload, recompute) Overhead before it starts: the runtime's
// own time between actions.
type Costs struct {
	Block    map[string]float64
	Transfer float64
	Overhead float64
}

// ModelCosts are the costs of the blocks of a decoder's programs under a
// model file (its times as partition read them, calibration applied):
// each block the sum of its forward's layers' times of its pass (forward,
// input, weight; a whole backward input + weight or the layer's
// backward), each transfer and action the calibration's times (0
// without one). An input-gradient block whose forward takes the model's
// own input (no activation from another block) costs nothing: the
// workers ask autograd for no gradient there, and its weight block
// walks the stage's graph as the profile's weight pass of each layer
// does.
func ModelCosts(g *partition.Graph, dec *runtimegen.Decoder, blocks []runtimegen.BlockInfo) (Costs, error) {
	c := Costs{Block: map[string]float64{}, Overhead: g.ActionOverhead}
	if g.Calibration != nil {
		c.Transfer = g.Calibration.Transfer
	}
	n := 0
	for _, v := range g.Nodes {
		if !v.Backward {
			n++
		}
	}
	layer := map[string]int{}
	for i := range n {
		layer[g.Nodes[i].Name] = i
	}
	training := g.Training()
	fed := map[string]bool{} // forward blocks that take another block's activation
	for _, b := range blocks {
		for _, p := range b.Inputs {
			if p.Role == runtimegen.Activation {
				fed[b.ID] = true
			}
		}
	}
	for _, b := range blocks {
		fwd := b.ID
		if b.Forward != "" {
			fwd = b.Forward
		}
		names, ok := dec.Blocks[fwd]
		if !ok {
			return Costs{}, fmt.Errorf("block %q: the decoder gives no layers to its forward block %q", b.ID, fwd)
		}
		if b.Kind == placement.Input && !fed[fwd] {
			c.Block[b.ID] = 0
			continue
		}
		t := 0.0
		for _, name := range names {
			i, ok := layer[name]
			if !ok {
				return Costs{}, fmt.Errorf("block %q: layer %q is not in the model file", b.ID, name)
			}
			if b.Kind != placement.Forward && !training {
				return Costs{}, fmt.Errorf("block %q: the model file has no backward times", b.ID)
			}
			switch b.Kind {
			case placement.Forward:
				t += g.Nodes[i].Acc
			case placement.Backward:
				t += g.Nodes[n+i].Acc
			case placement.Input, placement.Weight:
				bw := g.Nodes[n+i]
				if bw.Input+bw.Weight == 0 && bw.Acc > 0 {
					return Costs{}, fmt.Errorf("block %q: layer %q has no input and weight times (the backward is not split)", b.ID, name)
				}
				if b.Kind == placement.Input {
					t += bw.Input
				} else {
					t += bw.Weight
				}
			default:
				return Costs{}, fmt.Errorf("block %q: kind %s", b.ID, b.Kind)
			}
		}
		c.Block[b.ID] = t
	}
	return c, nil
}
