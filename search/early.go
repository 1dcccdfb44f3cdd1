package search

import (
	"context"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// earlyFrom is the micro-batch count above which a search with decisions
// and a deadline publishes a baseline before its constructions: there the
// constructions run on a window and are carried to N, and nothing is
// published until they return, which under a loaded machine can be after
// a time limit of seconds.
const earlyFrom = 256

// publishEarly publishes, for a search whose ctx has a deadline, with
// decisions allowed under a budget and more than earlyFrom micro-batches,
// the first baseline (in baseline.All's order) that fits the spec, the
// options allow and meets the latency budget: the answer watch gives
// should ctx end before any construction returns. It stays out of the
// result (the baselines are offered in their turn), and a later
// publication replaces it only with a schedule no longer (incumbent).
func (st *state) publishEarly(ctx context.Context) {
	sp := st.sp
	if _, ok := ctx.Deadline(); !ok || st.inc == nil || st.opt.SolverOnly || !sp.Allowed.Any() || sp.Memory <= 0 || sp.MicroBatches <= earlyFrom {
		return
	}
	for _, m := range baseline.All() {
		if ctx.Err() != nil {
			return
		}
		s, err := st.baseline(m)
		if err != nil || !sp.Allowed.Permit(s.Count()) {
			continue
		}
		if s = withinLatency(sp, s); s == nil || verify.Schedule(s) != nil {
			continue
		}
		early := *st.res
		early.Schedule, early.Source = s, Source{Kind: SourceBaseline, Name: m.Name}
		early.Contenders = []Contender{{Source: early.Source, Makespan: schedule.Makespan(s)}}
		st.inc.publishEarly(&early, st.t0)
		return
	}
}
