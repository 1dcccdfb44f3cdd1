package runtimegen_test

import (
	"testing"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// offloadSchedule is PipeOffload's schedule (Wan et al., "PipeOffload:
// Improving Scalability of Pipeline Parallelism with Memory
// Optimization": every forward offloaded but the last stage's) on the V
// placement, every move taking move.
func offloadSchedule(t *testing.T, move int) *schedule.Schedule {
	t.Helper()
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := baseline.PipeOffload(spec.New(p.WithOffload(move), 8))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// With SimOptions.Offloads the simulator gives every offload and reload
// its time on the host channel (Qi et al., "OptPipe", Appendix C, eqs
// 14–19: one move at a time per channel; the consumer starts after its
// reload ends): a verified schedule, simulated with its own rules and
// transfers of no time, ends no later than its makespan and no gradient
// block waits; with every move made longer than the schedule assumed,
// the reloads come late and delay the backward.
func TestSimulateOffloadTimes(t *testing.T) {
	s := offloadSchedule(t, 1)
	if len(s.Decisions) == 0 {
		t.Fatal("PipeOffload offloads nothing")
	}
	progs, err := runtimegen.Generate(s, runtimegen.NonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	free, err := runtimegen.SimulateWith(progs, runtimegen.SimOptions{})
	if err != nil {
		t.Fatal(err)
	}
	timed, err := runtimegen.SimulateWith(progs, runtimegen.SimOptions{Offloads: s.Placement})
	if err != nil {
		t.Fatal(err)
	}
	ms := schedule.Makespan(s)
	if timed.Makespan > ms || timed.ReloadWait != 0 {
		t.Errorf("timed with the schedule's own moves: makespan %d (schedule %d), reloads waited %d, want ≤ %d and 0", timed.Makespan, ms, timed.ReloadWait, ms)
	}
	if timed.Makespan < free.Makespan {
		t.Errorf("timed moves end at %d, before the untimed run's %d", timed.Makespan, free.Makespan)
	}
	// The same programs with moves of 4: the host channel cannot keep up.
	slow := s.Placement.WithOffload(4)
	for i := range slow.Blocks {
		if slow.Blocks[i].Offload > 0 {
			slow.Blocks[i].Offload = 4
		}
	}
	late, err := runtimegen.SimulateWith(progs, runtimegen.SimOptions{Offloads: slow})
	if err != nil {
		t.Fatal(err)
	}
	if late.ReloadWait == 0 || late.Makespan <= timed.Makespan {
		t.Errorf("moves of 4: makespan %d, reloads waited %d; want later than %d, and waits", late.Makespan, late.ReloadWait, timed.Makespan)
	}
	// Deterministic: the same run twice gives the same result.
	again, err := runtimegen.SimulateWith(progs, runtimegen.SimOptions{Offloads: slow})
	if err != nil {
		t.Fatal(err)
	}
	if again.Makespan != late.Makespan || again.ReloadWait != late.ReloadWait {
		t.Errorf("second run: makespan %d, wait %d; first %d, %d", again.Makespan, again.ReloadWait, late.Makespan, late.ReloadWait)
	}
}

// Devices on one PCIe switch share a host channel: the same moves on
// one channel for all take longer than on a channel each.
func TestSimulateSharedHostChannel(t *testing.T) {
	s := offloadSchedule(t, 2)
	progs, err := runtimegen.Generate(s, runtimegen.NonBlocking)
	if err != nil {
		t.Fatal(err)
	}
	own, err := runtimegen.SimulateWith(progs, runtimegen.SimOptions{Offloads: s.Placement})
	if err != nil {
		t.Fatal(err)
	}
	shared := *s.Placement
	shared.Switches = make([]int, shared.Devices) // every device on channel 0
	one, err := runtimegen.SimulateWith(progs, runtimegen.SimOptions{Offloads: &shared})
	if err != nil {
		t.Fatal(err)
	}
	if one.Makespan <= own.Makespan {
		t.Errorf("one shared host channel: makespan %d, want more than %d (a channel each)", one.Makespan, own.Makespan)
	}
}
