// Package fsdpplan decides where a sharded schedule's FSDP actions go
// (the rule of package rule/fsdp) and times them: PyTorch's own placement
// (its lowering's rule with unshard_lookahead "full", "auto" or a
// distance per rank) and tessel's (Search: no worse than either by
// construction), each re-timed so that every compute waits for its
// gather (the rule's compaction step) and checked by the verifier, which
// runs the rule with the others.
package fsdpplan

import (
	"errors"
	"fmt"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/rule/fsdp"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// Schedule is a sharded schedule as the rule times it.
type Schedule struct {
	// Compute is the schedule, its computes re-timed for the gathers,
	// its spec sharding stages (Spec.Sharding) and its FSDP actions
	// timed (Shards); it verifies (verify.Schedule runs the rule).
	Compute *schedule.Schedule
	Model   fsdp.Model
	Plan    fsdp.Plan
	// Makespan is the latest end of a compute or an FSDP action.
	Makespan int
	// Peak is every device's peak memory, gathered parameters counted.
	Peak []int
}

// Verify checks fs: its schedule verifies (the rule of sharded stages
// included), carries fs's model and plan, and has fs's makespan and
// peaks.
func Verify(fs *Schedule) error {
	if fs == nil || fs.Compute == nil {
		return errors.New("fsdp: no schedule")
	}
	s := fs.Compute
	if s.Sharding == nil {
		return errors.New("fsdp: the schedule shards no stage")
	}
	if err := verify.Schedule(s); err != nil {
		return err
	}
	peaks, err := fsdp.Peaks(s, fs.Model, fs.Plan)
	if err != nil {
		return err
	}
	if ms := makespan(s, fs.Plan); ms != fs.Makespan {
		return fmt.Errorf("fsdp: makespan %d claimed, %d measured", fs.Makespan, ms)
	}
	for d, pk := range peaks {
		if d >= len(fs.Peak) || fs.Peak[d] != pk {
			return fmt.Errorf("fsdp: rank %d: peak memory claimed %v, measured %d", d, fs.Peak, pk)
		}
	}
	return nil
}

func makespan(s *schedule.Schedule, plan fsdp.Plan) int {
	ms := schedule.Makespan(s)
	for _, ops := range plan.Ranks {
		for _, op := range ops {
			ms = max(ms, op.End)
		}
	}
	return ms
}

// Time is the rule's compaction step: the verified schedule s (its spec
// sharding no stage) re-timed, its device orders kept, so that every
// compute of a sharded stage waits for its gather, with plan's actions
// timed by the rule's timing model (fsdp.TimeActions). It iterates to
// the least fixed point (gathers end later when computes do, and the
// reverse; every time only grows, so it ends). The result is verified.
func Time(s *schedule.Schedule, m fsdp.Model, plan fsdp.Plan) (*Schedule, error) {
	if s == nil {
		return nil, errors.New("fsdp: no schedule")
	}
	if err := fsdp.Excludes(s); err != nil {
		return nil, err
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("fsdp: %w", err)
	}
	base := s.Spec
	base.Sharding = nil
	ord := schedule.Orders(s)
	release := map[schedule.Ref]int{}
	var cur *schedule.Schedule
	var timed fsdp.Plan
	for iter := 0; ; iter++ {
		if iter > 4*len(s.Instances)+8 {
			return nil, errors.New("fsdp: timing did not settle") // cannot happen: times only grow
		}
		sc, err := compact.Compact(base, compact.Keep{Orders: ord, Release: release})
		if err != nil {
			return nil, fmt.Errorf("fsdp: %w", err)
		}
		sc.Cluster, sc.Given, sc.LinkOrder = s.Cluster, s.Given, s.LinkOrder
		cur = sc
		var next map[schedule.Ref]int
		if timed, next, err = fsdp.TimeActions(cur, m, plan); err != nil {
			return nil, err
		}
		if same(next, release) {
			break
		}
		release = next
	}
	cur.Sharding, cur.Shards = m.Sharding(), timed.Shards()
	fs := &Schedule{Compute: cur, Model: m, Plan: timed, Makespan: makespan(cur, timed)}
	var err error
	if fs.Peak, err = fsdp.Peaks(cur, m, timed); err != nil {
		return nil, err
	}
	if err := Verify(fs); err != nil {
		return nil, err
	}
	return fs, nil
}

func same(a, b map[schedule.Ref]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// PyTorch is s with the FSDP actions where PyTorch's lowering puts them
// (_add_unshard_reshard with max_active_stages m.MaxActive and
// unshard_lookahead l, then _add_reduce_grad; fsdp.Windows), timed and
// verified.
func PyTorch(s *schedule.Schedule, m fsdp.Model, l fsdp.Lookahead) (*Schedule, error) {
	if err := prepare(s); err != nil {
		return nil, err
	}
	w, is := fsdp.PyTorchWindows(s.Placement.Devices, m, l)
	plan, err := fsdp.Windows(s, m, w, is)
	if err != nil {
		return nil, err
	}
	return Time(s, m, plan)
}

func prepare(s *schedule.Schedule) error {
	if s == nil {
		return errors.New("fsdp: no schedule")
	}
	if s.Sharding != nil || s.Shards != nil {
		return errors.New("fsdp: the schedule already has FSDP actions")
	}
	if err := fsdp.Excludes(s); err != nil {
		return err
	}
	return verify.Schedule(s)
}
