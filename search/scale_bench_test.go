package search

import (
	"context"
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// BenchmarkScale times the search on the placements `tessel plan` writes
// for a 32-layer Llama-7B-like profile on 8 GPUs (testdata: at 80 GB, and
// at 24 GB with offload and recompute fields), as N grows: the time
// should grow at most linearly in N, and a time limit should hold with
// the answer verified and written. It reports seconds per search ("s/op"
// is the same figure), the seconds to the answer verified again and
// written as a schedule file (s-answered, what a command takes) and the
// process's CPU seconds to it (cpu-s-answered: on a shared machine the
// figure that holds still), and, for the time-limited runs, the
// answer's overrun past the limit (s-over-limit).
//
//	go test ./search -run '^$' -bench Scale -benchtime 1x
//	go test ./search -run '^$' -bench 'Scale/24gb/recompute/(memory=150|time-limit=10s)/(N=10000|N=2000)$' -benchtime 1x
func BenchmarkScale(b *testing.B) {
	cases := []struct {
		name      string
		file      string
		n, memory int
		allowed   spec.Decisions
		limit     time.Duration
	}{
		{"80gb/N=1000", "llama7b-80gb.json", 1000, 0, spec.Decisions{}, 0},
		{"80gb/N=10000", "llama7b-80gb.json", 10000, 0, spec.Decisions{}, 0},
		{"80gb/time-limit=10s/N=2000", "llama7b-80gb.json", 2000, 0, spec.Decisions{}, 10 * time.Second},
		{"24gb/recompute+offload/memory=150/N=100", "llama7b-24gb.json", 100, 150, spec.Decisions{Offload: true, Recompute: true}, 0},
		{"24gb/recompute+offload/memory=150/N=1000", "llama7b-24gb.json", 1000, 150, spec.Decisions{Offload: true, Recompute: true}, 0},
		{"24gb/recompute+offload/memory=150/N=10000", "llama7b-24gb.json", 10000, 150, spec.Decisions{Offload: true, Recompute: true}, 0},
		{"24gb/recompute/time-limit=10s/N=2000", "llama7b-24gb.json", 2000, 150, spec.Decisions{Recompute: true}, 10 * time.Second},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			p, err := placement.Load(filepath.Join("testdata", c.file))
			if err != nil {
				b.Fatal(err)
			}
			sp := spec.Spec{Placement: p, MicroBatches: c.n, Memory: c.memory, Allowed: c.allowed}
			var total, answered, cpu time.Duration
			for b.Loop() {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if c.limit > 0 {
					ctx, cancel = context.WithTimeout(ctx, c.limit)
				}
				t, u := time.Now(), cpuTime(b)
				res, err := Run(ctx, sp, Options{UseTime: c.limit > 0})
				total += time.Since(t)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				if res.Schedule == nil {
					b.Fatal("no schedule")
				}
				if err := verify.Schedule(res.Schedule); err != nil {
					b.Fatal(err)
				}
				if err := res.Schedule.Write(io.Discard); err != nil {
					b.Fatal(err)
				}
				answered += time.Since(t)
				cpu += cpuTime(b) - u
			}
			per := total.Seconds() / float64(b.N)
			b.ReportMetric(per, "s/search")
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s-answered")
			b.ReportMetric(answered.Seconds()/float64(b.N), "s-answered")
			if c.limit > 0 {
				b.ReportMetric(answered.Seconds()/float64(b.N)-c.limit.Seconds(), "s-over-limit")
			}
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
