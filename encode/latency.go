package encode

import (
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
)

// LatencyDeadlines is the latency rule of sp's budget (0: none) over the
// instances refs of an InstanceProblem of sp (task k is refs[k]): one
// Deadline per source and sink (placement's LatencyPairs) of every
// micro-batch with both in refs.
func LatencyDeadlines(sp spec.Spec, refs []schedule.Ref) []smt.Deadline {
	p, budget := sp.Placement, sp.Latency
	if budget <= 0 {
		return nil
	}
	idx := make(map[schedule.Ref]int, len(refs))
	var micros []int
	seen := map[int]bool{}
	for k, r := range refs {
		idx[r] = k
		if !seen[r.Micro] {
			seen[r.Micro] = true
			micros = append(micros, r.Micro)
		}
	}
	var out []smt.Deadline
	pairs := p.LatencyPairs()
	for _, m := range micros {
		for _, lp := range pairs {
			a, ok := idx[schedule.Ref{Block: lp.Source, Micro: m}]
			b, ok2 := idx[schedule.Ref{Block: lp.Sink, Micro: m}]
			if ok && ok2 {
				out = append(out, smt.Deadline{From: a, To: b, Max: budget})
			}
		}
	}
	return out
}
