package baseline

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// ChimeraDirect is Chimera (Li and Hoefler, SC'21) applied directly to an
// x-shape: two independent v-shape pipelines in one micro-batch, one down
// (stage s on device s) and one up (stage s on device S−1−s), so that every
// device holds stage s of one and stage S−1−s of the other. Chimera's basic
// unit gives each pipeline S/2 micro-batches; within a unit each pipeline
// runs its own 1F1B order and every device merges the two by their start
// times when run alone (ties: the down pipeline first). Units are
// concatenated directly, Chimera's plain way to scale to many micro-batches:
// a device starts unit k+1 only after its part of unit k. With a split
// backward, every weight block runs right after its input block.
func ChimeraDirect(sp spec.Spec) (*schedule.Schedule, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	const name = "chimera-direct"
	if err := checkArgs(name, p, n, memory); err != nil {
		return nil, err
	}
	comps := components(p)
	if len(comps) != 2 {
		return nil, notApplicable(name, p, "needs two independent pipelines, the blocks form %d connected parts", len(comps))
	}
	var pipes [2]pipeline
	for k, c := range comps {
		rest, wgt, err := weights(p, c)
		if err != nil {
			return nil, notApplicable(name, p, "part %d: %v", k, err)
		}
		chain, ok := chainOf(p, rest)
		if !ok {
			return nil, notApplicable(name, p, "part %d is not a chain", k)
		}
		q, err := pipelineOf(p, chain, wgt)
		if err != nil {
			return nil, notApplicable(name, p, "part %d is not a pipeline: %v", k, err)
		}
		if v, ok := q.stagesPerDevice(); !ok || v != 1 {
			return nil, notApplicable(name, p, "part %d puts several stages on a device", k)
		}
		pipes[k] = q
	}
	down, up := pipes[0], pipes[1]
	S := down.stages()
	if up.stages() != S || (len(down.bwd) == 0) != (len(up.bwd) == 0) || down.split() != up.split() {
		return nil, notApplicable(name, p, "the two pipelines differ in length or kind")
	}
	for s := range S {
		if up.dev[s] != down.dev[S-1-s] {
			return nil, notApplicable(name, p, "the two pipelines do not run in opposite directions over the same devices")
		}
	}
	unit := max(1, S/2)
	var seq []schedule.Ref
	for base := 0; base < n; base += unit {
		size := min(unit, n-base)
		type timed struct {
			ref   schedule.Ref
			start int
			pipe  int
		}
		var merged []timed
		for k, q := range []pipeline{down, up} {
			refs, starts, err := timed1F1B(p, q.unsplit(), size, base)
			if err != nil {
				return nil, fmt.Errorf("%s: placement %q: %w", name, p.Name, err)
			}
			for j, r := range refs {
				merged = append(merged, timed{r, starts[j], k})
			}
		}
		slices.SortStableFunc(merged, func(a, b timed) int {
			return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.pipe, b.pipe))
		})
		for _, t := range merged {
			seq = append(seq, t.ref)
		}
	}
	return finish(name, p, n, memory, project(p, withWeights(p, seq)))
}
