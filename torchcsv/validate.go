package torchcsv

import (
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/placement"
)

// Summary is what a valid table says about its pipeline.
type Summary struct {
	Ranks        int
	Stages       int   // stage ids are 0..Stages-1
	MicroBatches int   // N
	StageRank    []int // the rank of every stage
	// Split[s] is true when stage s trains with input and weight actions
	// (I, W) rather than full backwards (B); Mixed[s] when it has both.
	Split, Mixed []bool
}

// Validate applies the rules of PyTorch's schedule validator
// (torch.distributed.pipelining's _validate_schedule) to t: every rank has
// a row; each stage runs on exactly one rank; stage ids are 0..S-1 and
// micro-batches 0..N-1; per stage, a forward for every micro-batch, a full
// backward (B) or an input gradient (I) for every micro-batch, a weight
// gradient (W) for every input gradient; in its rank's order, a B or I
// after its F and a W after its I. It also rejects an action that appears
// twice, which PyTorch's counts would let through and its runtime would
// run twice. The error names the rank and the cell.
func Validate(t *Table) (*Summary, error) {
	if t == nil || len(t.Rows) == 0 {
		return nil, fmt.Errorf("no ranks")
	}
	total := 0
	for _, row := range t.Rows {
		total += len(row)
	}
	if total == 0 {
		return nil, fmt.Errorf("no actions")
	}
	// Stage ids and micro-batches index slices below: bound them by the
	// number of actions first (a valid table has S·N forwards).
	stages, micros := 0, 0
	for r, row := range t.Rows {
		for c, a := range row {
			if a.Stage >= total || a.Micro >= total {
				return nil, fmt.Errorf("rank %d, action %d (%s): stage or micro-batch beyond the %d actions of the file (stages are 0..S-1, micro-batches 0..N-1)", r, c+1, a, total)
			}
			if a.Stage < 0 || a.Micro < 0 {
				return nil, fmt.Errorf("rank %d, action %d (%s): negative stage or micro-batch", r, c+1, a)
			}
			if _, ok := a.Kind.Info(); !ok {
				return nil, fmt.Errorf("rank %d, action %d: unknown kind %q", r, c+1, a.Kind)
			}
			stages, micros = max(stages, a.Stage+1), max(micros, a.Micro+1)
		}
	}
	if stages*micros > total {
		return nil, fmt.Errorf("stage ids up to %d and micro-batches up to %d need %d forwards, but the file has %d actions (stages are 0..S-1, micro-batches 0..N-1, every stage runs every micro-batch)",
			stages-1, micros-1, stages*micros, total)
	}
	sum := &Summary{Ranks: len(t.Rows), Stages: stages, MicroBatches: micros,
		StageRank: make([]int, stages), Split: make([]bool, stages), Mixed: make([]bool, stages)}
	for s := range sum.StageRank {
		sum.StageRank[s] = -1
	}
	// done[kind][stage][micro]: the action has run.
	done := map[placement.Kind][][]bool{}
	for _, k := range placement.Kinds() {
		done[k] = make([][]bool, stages)
		for s := range stages {
			done[k][s] = make([]bool, micros)
		}
	}
	for r, row := range t.Rows {
		for c, a := range row {
			where := func() string { return fmt.Sprintf("rank %d, action %d (%s)", r, c+1, a) }
			if got := sum.StageRank[a.Stage]; got >= 0 && got != r {
				return nil, fmt.Errorf("%s: stage %d is on rank %d and on rank %d: each stage runs on one rank", where(), a.Stage, got, r)
			}
			sum.StageRank[a.Stage] = r
			if done[a.Kind][a.Stage][a.Micro] {
				return nil, fmt.Errorf("%s: appears twice", where())
			}
			switch a.Kind {
			case placement.Backward, placement.Input:
				if !done[placement.Forward][a.Stage][a.Micro] {
					return nil, fmt.Errorf("%s: runs before the forward %s", where(), Action{a.Stage, placement.Forward, a.Micro})
				}
				other := placement.Input
				if a.Kind == placement.Input {
					other = placement.Backward
				}
				if done[other][a.Stage][a.Micro] {
					return nil, fmt.Errorf("%s: micro-batch %d of stage %d already has its %s", where(), a.Micro, a.Stage, Action{a.Stage, other, a.Micro})
				}
			case placement.Weight:
				if !done[placement.Input][a.Stage][a.Micro] {
					return nil, fmt.Errorf("%s: runs before the input gradient %s", where(), Action{a.Stage, placement.Input, a.Micro})
				}
			}
			done[a.Kind][a.Stage][a.Micro] = true
		}
	}
	for s := range stages {
		if m := slices.Index(done[placement.Forward][s], false); m >= 0 {
			return nil, fmt.Errorf("stage %d: no forward of micro-batch %d (%s; %d micro-batches: every stage runs every one)", s, m, Action{s, placement.Forward, m}, micros)
		}
		for m := range micros {
			switch {
			case !done[placement.Backward][s][m] && !done[placement.Input][s][m]:
				return nil, fmt.Errorf("stage %d: micro-batch %d has neither a full backward (%s) nor an input gradient (%s)", s, m,
					Action{s, placement.Backward, m}, Action{s, placement.Input, m})
			case done[placement.Input][s][m] && !done[placement.Weight][s][m]:
				return nil, fmt.Errorf("stage %d: micro-batch %d has an input gradient but no weight gradient (%s)", s, m, Action{s, placement.Weight, m})
			}
		}
		b := slices.Contains(done[placement.Backward][s], true)
		i := slices.Contains(done[placement.Input][s], true)
		sum.Split[s], sum.Mixed[s] = i, b && i
	}
	return sum, nil
}
