package runtimegen

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// With no communication time, non-blocking programs run every block as
// early as the schedule's per-device orders allow: on a compact schedule,
// exactly the schedule's makespan. Blocking ones may stall a sender until
// its receiver gets there, never less.
func TestSimulateBuiltinsZeroComm(t *testing.T) {
	for _, D := range []int{2, 4} {
		for _, c := range allBuiltins(t, D) {
			for _, n := range []int{1, 3, 8} {
				t.Run(fmt.Sprintf("%s/N=%d", c.label, n), func(t *testing.T) {
					s := greedy(t, c.p, n)
					want := schedule.Makespan(s)
					nb := simulate(t, generate(t, s, NonBlocking), 0)
					if nb.Makespan != want {
						t.Errorf("non-blocking makespan %d, schedule's %d", nb.Makespan, want)
					}
					bl := simulate(t, generate(t, s, Blocking), 0)
					if bl.Makespan < want {
						t.Errorf("blocking makespan %d below the schedule's %d", bl.Makespan, want)
					}
					loads := c.p.Loads()
					for d, r := range []*Result{nb, bl} {
						for dev := range loads {
							if r.Busy[dev] != n*loads[dev] {
								t.Errorf("result %d: device %d busy %d, want N·load = %d", d, dev, r.Busy[dev], n*loads[dev])
							}
							if r.Idle[dev] != r.Makespan-r.Busy[dev] {
								t.Errorf("result %d: device %d idle %d, want %d", d, dev, r.Idle[dev], r.Makespan-r.Busy[dev])
							}
						}
					}
					m := schedule.Measure(s)
					if diff := nb.BubbleRate - m.BubbleRate; diff > 1e-6 || diff < -1e-6 {
						t.Errorf("non-blocking bubble rate %.6f, schedule's %.6f", nb.BubbleRate, m.BubbleRate)
					}
				})
			}
		}
	}
}

// With communication, no program deadlocks, and time only grows with the
// communication time.
func TestSimulateBuiltinsWithComm(t *testing.T) {
	for _, c := range allBuiltins(t, 4) {
		t.Run(c.label, func(t *testing.T) {
			s := greedy(t, c.p, 6)
			for _, mode := range Modes() {
				progs := generate(t, s, mode)
				prev := 0
				for _, comm := range []int{0, 1, 2, 5} {
					r := simulate(t, progs, comm)
					if r.Makespan < prev {
						t.Errorf("%s: makespan %d with comm %d, below %d with less", mode, r.Makespan, comm, prev)
					}
					prev = r.Makespan
				}
			}
		})
	}
}

// A schedule with needless gaps runs faster than its start times: the
// programs hold no clock.
func TestSimulateCompactsGaps(t *testing.T) {
	p := builtin(t, "v-shape", 2, false)
	s := greedy(t, p, 2)
	for i := range s.Instances {
		s.Instances[i].Start *= 2 // still valid: every gap doubles
	}
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	r := simulate(t, generate(t, s, NonBlocking), 0)
	if want := schedule.Makespan(greedy(t, p, 2)); r.Makespan != want {
		t.Errorf("makespan %d, want the compact schedule's %d", r.Makespan, want)
	}
}

// naive builds the programs a runtime without a global order would run:
// each device runs its blocks in start order, receives an input right
// before the block that needs it and sends an output right after the block
// that made it. It numbers transfers like Generate.
func naive(t *testing.T, s *schedule.Schedule) []*Program {
	t.Helper()
	ref := generate(t, s, Blocking)
	tags := map[string]int{} // tensor and destination → tag
	for _, p := range ref {
		for _, o := range p.Ops {
			if o.Kind == Recv {
				tags[fmt.Sprintf("%s>%d", o.Tensor, p.Device)] = o.Tag
			}
		}
	}
	p := s.Placement
	progs := make([]*Program, p.Devices)
	for d := range progs {
		q := *ref[d]
		q.Ops = nil
		progs[d] = &q
	}
	for _, in := range GlobalOrder(s) {
		b := p.Blocks[in.Block]
		for _, d := range b.Devices {
			for _, dep := range p.Deps {
				if dep.To == in.Block && !slices.Contains(p.Blocks[dep.From].Devices, d) {
					name := TensorName(p.Blocks[dep.From].ID, b.ID, in.Micro)
					progs[d].Ops = append(progs[d].Ops, Op{Kind: Recv, Block: b.ID, Micro: in.Micro,
						Peer: p.Blocks[dep.From].Devices[0], Tensor: name, Tag: tags[fmt.Sprintf("%s>%d", name, d)]})
				}
			}
			progs[d].Ops = append(progs[d].Ops, (&plan{p: p}).computeOp(in))
		}
		for _, dep := range p.Deps {
			if dep.From != in.Block {
				continue
			}
			for _, d := range p.Blocks[dep.To].Devices {
				if !slices.Contains(b.Devices, d) {
					name := TensorName(b.ID, p.Blocks[dep.To].ID, in.Micro)
					progs[b.Devices[0]].Ops = append(progs[b.Devices[0]].Ops, Op{Kind: Send, Block: b.ID, Micro: in.Micro,
						Peer: d, Tensor: name, Tag: tags[fmt.Sprintf("%s>%d", name, d)]})
				}
			}
		}
	}
	if err := Check(progs); err != nil {
		t.Fatalf("naive programs: %v", err)
	}
	return progs
}

// The two-device x-shape deadlock, exactly: both devices are blocked in
// their first send, each waiting for the other.
func TestNaiveDeadlockCycle(t *testing.T) {
	s := greedy(t, builtin(t, "x-shape", 2, false), 1)
	_, err := Simulate(naive(t, s), 0)
	want := "deadlock: device 0 at op 1 (send fd0->fd1@0 to 1 #0) waits for device 1; " +
		"device 1 at op 1 (send fu0->fu1@0 to 0 #1) waits for device 0"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// A collective starts when the last member arrives and ends together on
// all members.
func TestSimulateCollective(t *testing.T) {
	p := &placement.Placement{Name: "g", Devices: 2, Blocks: []placement.Block{
		{ID: "a", Kind: placement.Forward, Devices: []int{0}, Time: 3, Memory: 0},
		{ID: "g", Kind: placement.Forward, Devices: []int{0, 1}, Time: 2, Memory: 0},
		{ID: "c", Kind: placement.Forward, Devices: []int{1}, Time: 1, Memory: 0},
	}, Deps: []placement.Dep{{From: 0, To: 1}, {From: 1, To: 2}}}
	s := &schedule.Schedule{Spec: spec.Spec{Placement: p, MicroBatches: 1}, Instances: []schedule.Instance{
		{Block: 0, Micro: 0, Start: 0}, {Block: 1, Micro: 0, Start: 3}, {Block: 2, Micro: 0, Start: 5}}}
	for _, tc := range []struct {
		mode       Mode
		comm, want int
	}{{NonBlocking, 0, 6}, {Blocking, 0, 6}, {NonBlocking, 4, 10}, {Blocking, 4, 10}} {
		progs := generate(t, s, tc.mode)
		// a's output goes to device 1, a member of g that did not run a.
		if !slices.ContainsFunc(progs[1].Ops, func(o Op) bool { return o.Kind == Recv && o.Tensor == "a->g@0" }) {
			t.Errorf("%s: device 1 does not receive a->g@0:\n%s", tc.mode, progs[1].Text())
		}
		r := simulate(t, progs, tc.comm)
		if r.Makespan != tc.want {
			t.Errorf("%s comm %d: makespan %d, want %d", tc.mode, tc.comm, r.Makespan, tc.want)
		}
		if !slices.Equal(r.Busy, []int{5, 3}) {
			t.Errorf("%s comm %d: busy %v, want [5 3]", tc.mode, tc.comm, r.Busy)
		}
	}
}

func TestSimulateDeterministic(t *testing.T) {
	s := greedy(t, builtin(t, "nn-shape", 4, false), 5)
	for _, mode := range Modes() {
		progs := generate(t, s, mode)
		a := simulate(t, progs, 1)
		for range 3 {
			b := simulate(t, progs, 1)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("%s: %v then %v", mode, a, b)
			}
		}
	}
}

func TestSimulateRejects(t *testing.T) {
	s := greedy(t, builtin(t, "v-shape", 2, false), 2)
	progs := generate(t, s, Blocking)
	if _, err := Simulate(progs, -1); err == nil {
		t.Error("negative communication time accepted")
	}
	progs[1].Ops = progs[1].Ops[1:]
	if _, err := Simulate(progs, 1); err == nil {
		t.Error("programs missing an op accepted")
	}
}

// Schedule files of the repository (baselines, searches, hand-made ones):
// their programs never deadlock, and non-blocking programs with no
// communication time take the schedule's makespan, or less when the file
// leaves gaps that its per-device orders do not need.
func TestSimulateScheduleFiles(t *testing.T) {
	var paths []string
	for _, pattern := range []string{"../schedule/testdata/schedules/*.json", "../testdata/schedules/*.json", "testdata/*.json"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		testskip.Skip(t, "no schedule files")
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s, err := schedule.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := compact.Compact(spec.New(s.Placement, s.MicroBatches), compact.Keep{Orders: schedule.Orders(s)})
			if err != nil {
				t.Fatal(err)
			}
			compact := cs.Instances
			want := schedule.Makespan(&schedule.Schedule{Spec: spec.Spec{Placement: s.Placement, MicroBatches: s.MicroBatches}, Instances: compact})
			if len(s.Decisions) > 0 {
				// Recomputes take device time, and the programs keep no
				// host channel or memory order: at most the file's.
				want = -1
			}
			for _, mode := range Modes() {
				progs := generate(t, s, mode)
				r := simulate(t, progs, 0)
				if mode == NonBlocking && want < 0 && r.Makespan > schedule.Makespan(s) {
					t.Errorf("non-blocking makespan %d, more than the file's %d", r.Makespan, schedule.Makespan(s))
				}
				if mode == NonBlocking && want >= 0 && r.Makespan != want {
					t.Errorf("non-blocking makespan %d, compacted schedule's %d (file's %d)", r.Makespan, want, schedule.Makespan(s))
				}
				simulate(t, progs, 1)
			}
		})
	}
}
