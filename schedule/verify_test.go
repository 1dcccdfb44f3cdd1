package schedule_test

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/verify"
)

// v2 is v-shape on 2 devices: f0 (dev 0, t1, +1), f1 (dev 1, t1, +1),
// b1 (dev 1, t3, -1), b0 (dev 0, t3, -1). Its 1F1B schedule of 2
// micro-batches: f0^0 [0,1) f0^1 [1,2) f1^0 [1,2) b1^0 [2,5) b0^0 [5,8)
// f1^1 [5,6) b1^1 [6,9) b0^1 [9,12).
func v2(t *testing.T) *schedule.Schedule {
	return oneF1B(t, placementtest.Builtin(t, "v-shape", placement.Options{Devices: 2}), 2, 2)
}

// set changes the start of B_id^micro.
func set(t *testing.T, s *schedule.Schedule, id string, micro, start int) *schedule.Schedule {
	t.Helper()
	i := block(t, s.Placement, id)
	for x, in := range s.Instances {
		if in.Block == i && in.Micro == micro {
			s.Instances[x].Start = start
			return s
		}
	}
	t.Fatalf("no instance %s^%d", id, micro)
	return nil
}

func remove(t *testing.T, s *schedule.Schedule, id string, micro int) *schedule.Schedule {
	t.Helper()
	i := block(t, s.Placement, id)
	s.Instances = slices.DeleteFunc(s.Instances, func(in schedule.Instance) bool { return in.Block == i && in.Micro == micro })
	return s
}

func TestVerifyViolations(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(t *testing.T, s *schedule.Schedule) *schedule.Schedule
		kinds  []schedule.ViolationKind
		first  string // the first violation's message
		device int    // of the first violation
	}{
		{"valid", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule { return s }, nil, "", 0},
		{"missing", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule { return remove(t, s, "b0", 1) },
			[]schedule.ViolationKind{schedule.Missing}, "b0^1 missing", -1},
		{"duplicate", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule {
			s.Instances = append(s.Instances, schedule.Instance{Block: block(t, s.Placement, "b0"), Micro: 1, Start: 20})
			return s
		}, []schedule.ViolationKind{schedule.Duplicate}, "b0^1 given twice: at 9 (instance 7) and at 20 (instance 8)", -1},
		{"micro out of range", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule {
			s.Instances = append(s.Instances, schedule.Instance{Block: 0, Micro: 2, Start: 20})
			return s
		}, []schedule.ViolationKind{schedule.OutOfRange}, "instance 8: f0^2: micro-batch 2 out of range 0..1", -1},
		{"block out of range", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule {
			s.Instances = append(s.Instances, schedule.Instance{Block: 4, Micro: 0, Start: 20})
			return s
		}, []schedule.ViolationKind{schedule.OutOfRange}, "instance 8: block index 4 out of range 0..3", -1},
		{"negative start", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule {
			// f0^0 [0,1) moved to [-1,0): the rest still holds.
			return set(t, s, "f0", 0, -1)
		}, []schedule.ViolationKind{schedule.Start, schedule.Missing}, "f0^0 starts at -1 < 0", -1},
		{"dependency", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule { return set(t, s, "b0", 0, 4) },
			[]schedule.ViolationKind{schedule.Dependency}, "dependency b1 -> b0 broken for micro-batch 0: b1^0 ends at 5, b0^0 starts at 4", -1},
		{"overlap", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule { return set(t, s, "f1", 1, 6) },
			// f1^1 [6,7) now overlaps b1^1 [6,9) and ends after b1^1 starts.
			[]schedule.ViolationKind{schedule.Dependency, schedule.Overlap}, "dependency f1 -> b1 broken for micro-batch 1: f1^1 ends at 7, b1^1 starts at 6", -1},
		{"memory", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule { s.Memory = 1; return s },
			[]schedule.ViolationKind{schedule.Memory}, "memory on device 0 reaches 2 > budget 1 after f0^1 at time 1", 0},
		{"unlimited memory", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule { s.Memory = 0; return s }, nil, "", 0},
		{"no placement", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule { s.Placement = nil; return s },
			[]schedule.ViolationKind{schedule.Input}, "no placement", -1},
		{"no micro-batches", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule { s.MicroBatches = 0; return s },
			[]schedule.ViolationKind{schedule.Input}, "micro-batch count 0 out of range 1..1048576", -1},
		{"negative budget", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule { s.Memory = -1; return s },
			[]schedule.ViolationKind{schedule.Input}, "memory budget -1 is negative (0 means unlimited)", -1},
		{"claimed metrics", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule {
			s.Claimed = &schedule.Claimed{Makespan: 11, BubbleRate: 1.0 / 3, PeakMemory: []int{2, 1}}
			return s
		}, []schedule.ViolationKind{schedule.MetricsMismatch}, "metrics: makespan 11 claimed, measured 12", -1},
		{"true claimed metrics", func(t *testing.T, s *schedule.Schedule) *schedule.Schedule {
			// 24 device-units, 16 busy.
			s.Claimed = &schedule.Claimed{Makespan: 12, BubbleRate: 0.333333, PeakMemory: []int{2, 1}}
			return s
		}, nil, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := v2(t)
			if err := verify.Schedule(s); err != nil {
				t.Fatalf("the unedited schedule is invalid: %v", err)
			}
			err := verify.Schedule(tt.edit(t, s))
			if tt.kinds == nil {
				if err != nil {
					t.Fatalf("Verify = %v, want nil", err)
				}
				return
			}
			var ve *schedule.VerifyError
			if !errors.As(err, &ve) {
				t.Fatalf("Verify = %v, want a *VerifyError", err)
			}
			var kinds []schedule.ViolationKind
			for _, v := range ve.Violations {
				if !slices.Contains(kinds, v.Kind) {
					kinds = append(kinds, v.Kind)
				}
			}
			slices.Sort(kinds)
			want := slices.Sorted(slices.Values(tt.kinds))
			if !slices.Equal(kinds, want) {
				t.Errorf("kinds = %v, want %v (%v)", kinds, want, ve.Violations)
			}
			if got := ve.Violations[0]; got.Message != tt.first || got.Device != tt.device {
				t.Errorf("first violation = %q on device %d, want %q on device %d", got.Message, got.Device, tt.first, tt.device)
			}
			if strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), tt.first) {
				t.Errorf("Error() = %q, want one line with the first violation", err.Error())
			}
		})
	}
}

func TestVerifyOverlapMessage(t *testing.T) {
	// Start b1^1 at 4, inside b1^0 [2,5) on device 1.
	s := set(t, v2(t), "b1", 1, 4)
	var ve *schedule.VerifyError
	if !errors.As(verify.Schedule(s), &ve) {
		t.Fatal("want a *VerifyError")
	}
	want := schedule.Violation{Kind: schedule.Overlap, Device: 1, Message: "overlap on device 1: b1^0 [2,5) and b1^1 [4,7)",
		Instances: []schedule.Ref{{2, 0}, {2, 1}}}
	// b1^1 also overlaps f1^1 [5,6), which it now ends after.
	var overlaps []schedule.Violation
	for _, v := range ve.Violations {
		if v.Kind == schedule.Overlap {
			overlaps = append(overlaps, v)
		}
	}
	if len(overlaps) != 2 {
		t.Fatalf("overlaps %v, want 2", overlaps)
	}
	if v := overlaps[0]; v.Message != want.Message || v.Device != want.Device || !slices.Equal(v.Instances, want.Instances) {
		t.Errorf("overlap = %+v, want %+v", v, want)
	}
	if want := "overlap on device 1: b1^1 [4,7) and f1^1 [5,6)"; overlaps[1].Message != want {
		t.Errorf("second overlap %q, want %q", overlaps[1].Message, want)
	}
}

// A block on a device group occupies every device of the group: m-shape's
// shard forward fs^1 moved onto f3^0 of device 3 alone is an overlap on
// device 3 only.
func TestVerifyGroupOverlap(t *testing.T) {
	p := placementtest.Builtin(t, "m-shape", placement.Options{Devices: 4})
	s := greedy(p, 2)
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	var f3 schedule.Instance
	for _, in := range s.Instances {
		if in.Block == block(t, p, "f3") && in.Micro == 0 {
			f3 = in
		}
	}
	// fs^1 runs before f0^1 and after fs^0; put it at f3^0's start.
	s = set(t, s, "fs", 1, f3.Start)
	var ve *schedule.VerifyError
	if !errors.As(verify.Schedule(s), &ve) {
		t.Fatal("want a *VerifyError")
	}
	var devs []int
	for _, v := range ve.Violations {
		if v.Kind == schedule.Overlap {
			devs = append(devs, v.Device)
		}
	}
	if !slices.Contains(devs, 3) {
		t.Errorf("overlap devices %v, want device 3 among them (%v)", devs, ve.Violations)
	}
}

func TestVerifyCap(t *testing.T) {
	// Drop every instance of 1F1B on v-shape(4) with 30 micro-batches: 240
	// missing, MaxViolations listed.
	s := oneF1B(t, placementtest.Builtin(t, "v-shape", placement.Options{}), 30, 0)
	s.Instances = nil
	var ve *schedule.VerifyError
	if !errors.As(verify.Schedule(s), &ve) {
		t.Fatal("want a *VerifyError")
	}
	if len(ve.Violations) != schedule.MaxViolations || ve.Count() != 240 {
		t.Errorf("%d listed, %d in all; want %d and 240", len(ve.Violations), ve.Count(), schedule.MaxViolations)
	}
	if want := "invalid schedule: f0^0 missing (and 239 more violations)"; ve.Error() != want {
		t.Errorf("Error() = %q, want %q", ve.Error(), want)
	}
}

func TestVerifyRepetend(t *testing.T) {
	s := oneF1B(t, placementtest.Builtin(t, "v-shape", placement.Options{}), 8, 4)
	s.Repetend = oneF1BRepetend(t, s)
	if err := verify.Schedule(s); err != nil {
		t.Fatalf("1F1B's steady phase is not its repetend: %v", err)
	}
	tests := []struct {
		name string
		edit func(rp *schedule.Repetend)
		want string
	}{
		{"period", func(rp *schedule.Repetend) { rp.Period = 5 }, "repetend iteration 1: f0^5 starts at 20, not 21 (f0^4 at 16 + 1·period 5)"},
		{"start", func(rp *schedule.Repetend) { rp.Start++ }, "repetend: first iteration starts at 3, not 4"},
		{"iterations", func(rp *schedule.Repetend) { rp.Iterations = 6 }, "repetend: 6 iterations from offset 4 of f0 run past micro-batch 7"},
		{"offsets", func(rp *schedule.Repetend) { rp.Offsets = rp.Offsets[1:] }, "repetend: 7 offsets for 8 blocks"},
		{"nr", func(rp *schedule.Repetend) { rp.NR = 0 }, "repetend: nr 0 out of range 1..8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := *s
			rp := *s.Repetend
			tt.edit(&rp)
			c.Repetend = &rp
			var ve *schedule.VerifyError
			if !errors.As(verify.Schedule(&c), &ve) {
				t.Fatal("want a *VerifyError")
			}
			if got := ve.Violations[0]; got.Kind != schedule.RepetendMismatch || got.Message != tt.want {
				t.Errorf("first violation %s %q, want %s %q", got.Kind, got.Message, schedule.RepetendMismatch, tt.want)
			}
		})
	}
}

// bruteValid is a second, deliberately naive verifier: every pair of
// instances, every time unit, memory as the sum over the instances that
// started earlier on the device.
func bruteValid(s *schedule.Schedule) bool {
	p := s.Placement
	count := map[schedule.Ref]int{}
	for _, in := range s.Instances {
		if in.Block < 0 || in.Block >= len(p.Blocks) || in.Micro < 0 || in.Micro >= s.MicroBatches || in.Start < 0 {
			return false
		}
		count[in.Ref()]++
	}
	for i := range p.Blocks {
		for m := range s.MicroBatches {
			if count[schedule.Ref{i, m}] != 1 {
				return false
			}
		}
	}
	start := map[schedule.Ref]int{}
	for _, in := range s.Instances {
		start[in.Ref()] = in.Start
	}
	for _, d := range p.Deps {
		for m := range s.MicroBatches {
			if start[schedule.Ref{d.From, m}]+p.Blocks[d.From].Time > start[schedule.Ref{d.To, m}] {
				return false
			}
		}
	}
	for d := range p.Devices {
		busy := map[int]bool{}
		for _, in := range s.Instances {
			if !p.OnDevice(in.Block, d) {
				continue
			}
			for t := in.Start; t < in.Start+p.Blocks[in.Block].Time; t++ {
				if busy[t] {
					return false
				}
				busy[t] = true
			}
			if s.Memory > 0 {
				mem := 0
				for _, o := range s.Instances {
					if p.OnDevice(o.Block, d) && o.Start <= in.Start {
						mem += p.Blocks[o.Block].Memory
					}
				}
				if mem > s.Memory {
					return false
				}
			}
		}
	}
	return true
}

// TestVerifyAgainstBrute mutates random valid schedules and checks that
// Verify and the naive verifier agree on every one.
func TestVerifyAgainstBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	shapes := []string{"v-shape", "x-shape", "m-shape", "nn-shape", "k-shape"}
	valid, invalid := 0, 0
	for trial := range 600 {
		p := placementtest.Builtin(t, shapes[trial%len(shapes)], placement.Options{Devices: 2 + 2*rng.IntN(2)})
		s := randomValid(rng, p, 1+rng.IntN(4), rng.IntN(3))
		s.Memory = slices.Max(schedule.Measure(s).PeakMemory)
		if err := verify.Schedule(s); err != nil {
			t.Fatalf("trial %d: a random list schedule is invalid: %v", trial, err)
		}
		x := rng.IntN(len(s.Instances))
		switch rng.IntN(5) {
		case 0:
			s.Instances[x].Start += rng.IntN(7) - 3
		case 1:
			s.Instances = append(s.Instances[:x], s.Instances[x+1:]...)
		case 2:
			s.Instances = append(s.Instances, s.Instances[x])
		case 3:
			s.Memory = max(1, s.Memory-rng.IntN(2))
		case 4:
			s.Instances[x].Micro += rng.IntN(3) - 1
		}
		err := verify.Schedule(s)
		if want := bruteValid(s); (err == nil) != want {
			t.Fatalf("trial %d: Verify = %v, the naive verifier says valid = %v", trial, err, want)
		}
		if err == nil {
			valid++
		} else {
			invalid++
		}
	}
	// Both verdicts must have been exercised.
	if valid < 50 || invalid < 50 {
		t.Errorf("%d valid and %d invalid mutations: the test exercises too little", valid, invalid)
	}
}

// Verify must stay fast on big schedules: N = 1024 micro-batches of 20
// blocks (v-shape on 10 devices), about 20k instances.
func TestVerifyLarge(t *testing.T) {
	s := oneF1B(t, placementtest.Builtin(t, "v-shape", placement.Options{Devices: 10}), 1024, 10)
	begin := time.Now()
	if err := verify.Schedule(s); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("Verify of %d instances took %v", len(s.Instances), d)
	}
	// The same with every instance shifted into one overlapping pile:
	// still fast, still capped.
	for x := range s.Instances {
		s.Instances[x].Start = 0
	}
	begin = time.Now()
	var ve *schedule.VerifyError
	if !errors.As(verify.Schedule(s), &ve) || len(ve.Violations) != schedule.MaxViolations {
		t.Fatalf("want a capped *VerifyError")
	}
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("Verify of a broken schedule of %d instances took %v", len(s.Instances), d)
	}
}

func BenchmarkVerify(b *testing.B) {
	s := oneF1B(b, placementtest.Builtin(b, "v-shape", placement.Options{Devices: 10}), 1024, 10)
	for b.Loop() {
		if err := verify.Schedule(s); err != nil {
			b.Fatal(err)
		}
	}
}
