// Command dagtable prints the table of docs/operator-placement.md: She et
// al.'s §V-B experiment (the seeded random 200-operator graph, planned on
// 1, 2 and 4 chips whose links take about an operator's time per tensor)
// with HEFT, the partition DP's assignment searched, the search over
// assignments, and the same coarsened to 40 blocks. Times are wall-clock
// and depend on the machine.
//
//	go run ./cmd/dagtable [-devices 1,2,4]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/tessel-pp/tessel/choose"
	"github.com/tessel-pp/tessel/coarsen"
	"github.com/tessel-pp/tessel/heft"
	"github.com/tessel-pp/tessel/opgraph"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

func main() {
	devs := flag.String("devices", "1,2,4", "device counts, comma-separated")
	flag.Parse()
	if err := run(*devs); err != nil {
		fmt.Fprintln(os.Stderr, "dagtable:", err)
		os.Exit(1)
	}
}

func run(devs string) error {
	fmt.Println("| chips | one chip | HEFT | partition + search | search | its time | coarsened to | coarse search | its time | speedup over one chip |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, f := range strings.Split(devs, ",") {
		d, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || d < 1 {
			return fmt.Errorf("bad device count %q", f)
		}
		p0, err := opgraph.Generate(opgraph.Options{Seed: 1, Devices: d})
		if err != nil {
			return err
		}
		p, err := opgraph.Cluster(d, opgraph.DefaultLink()).Apply(p0)
		if err != nil {
			return err
		}
		one := 0
		for _, b := range p.Blocks {
			one += b.Time
		}
		h, err := heft.Run(p, heft.Options{})
		if err != nil {
			return err
		}
		opt := choose.Options{}
		t0 := time.Now()
		full, err := choose.Run(context.Background(), spec.New(p, 1), opt)
		if err != nil {
			return err
		}
		tFull := time.Since(t0)
		part := "–"
		for _, c := range full.Contenders {
			if c.Source.Name == "assignment partition" {
				part = strconv.Itoa(c.Makespan)
			}
		}
		t0 = time.Now()
		opt.Coarsen = coarsen.DefaultTarget
		co, err := choose.Run(context.Background(), spec.New(p, 1), opt)
		if err != nil {
			return err
		}
		tCo := time.Since(t0)
		for _, s := range []*schedule.Schedule{h.Schedule, full.Schedule, co.Schedule} {
			if err := verify.Schedule(s); err != nil {
				return err
			}
		}
		best := min(schedule.Makespan(full.Schedule), schedule.Makespan(co.Schedule))
		fmt.Printf("| %d | %d | %d | %s | %d | %.1f s | %d | %d (expanded; answer %d) | %.1f s | %.2f× |\n",
			d, one, schedule.Makespan(h.Schedule), part, schedule.Makespan(full.Schedule), tFull.Seconds(),
			co.Coarsened.Coarse, co.Coarsened.Makespan, schedule.Makespan(co.Schedule), tCo.Seconds(), float64(one)/float64(best))
	}
	return nil
}
