package search

import (
	"context"
	"fmt"
	"testing"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// benchCase is one row of the README's speed table: the paper's settings
// on 4 devices (reference times of the public Python Tessel on this kind
// of machine in docs/reference-timings.md), and larger cases.
type benchCase struct {
	name       string
	devices    int
	nr, memory int
	reference  float64 // seconds, 0 when the reference has no figure
}

var benchCases = []benchCase{
	{"v-shape", 4, 4, 4, 7.4},
	{"x-shape", 4, 3, 4, 29.9},
	{"k-shape", 4, 3, 6, 5.6},
	{"m-shape", 4, 6, 6, 134.5},
	{"nn-shape", 4, 6, 6, 831.5},
	{"v-shape", 8, 8, 8, 1800}, // the reference was stopped after 1800 s
	{"m-shape", 8, 8, 8, 0},
	{"nn-shape", 8, 8, 8, 0},
	// The defaults: memory unlimited, N_R up to 2·devices.
	{"m-shape", 8, 0, 0, 0},
	{"nn-shape", 8, 0, 0, 0},
}

// BenchmarkSearch times the whole search of 128 micro-batches for every
// case: "default" as users run it (constructions, baselines, the solver
// where they leave a gap), and each method of the paper's search alone
// (SolverOnly: repetend, lazy checks, time-optimal warmup and cooldown,
// assembly and verification). The enumeration of 8-device cases is left
// out: its candidate space is too large to finish.
func BenchmarkSearch(b *testing.B) {
	for _, c := range benchCases {
		for _, m := range []repetend.Strategy{"default", repetend.StrategyJoint, repetend.StrategyEnumerate, repetend.StrategyRace} {
			if c.devices > 4 && m != repetend.StrategyJoint && m != "default" {
				continue
			}
			b.Run(fmt.Sprintf("%s-%dd-m%d/%s", c.name, c.devices, c.memory, m), func(b *testing.B) {
				p, err := placement.Builtin(c.name, placement.Options{Devices: c.devices})
				if err != nil {
					b.Fatal(err)
				}
				opt := Options{MaxNR: c.nr, Strategy: m, SolverOnly: true}
				if m == "default" {
					opt.Strategy, opt.SolverOnly = "", false
				}
				for b.Loop() {
					res, err := Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 128, Memory: c.memory}, opt)
					if err != nil {
						b.Fatal(err)
					}
					if err := verify.Schedule(res.Schedule); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(schedule.RepetendBubbleRate(p, res.Repetend.Period), "repetend-bubbles")
					b.ReportMetric(float64(res.Makespan()), "makespan")
				}
			})
		}
	}
}
