package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
)

type planOptions struct {
	Cluster      string // a cluster file, "" for none
	Partition    partitionOptions
	PlacementOut string
	MicroBatches int
	Budget       int
	NR           int
	TimeLimit    time.Duration
	Decisions    placement.Decisions
	Outputs      outputs
}

func planCommand() *cli.Command {
	return &cli.Command{
		Name:  "plan",
		Usage: "from a model to a schedule: tessel partition, then tessel search on its placement",
		UsageText: "tessel plan --model gpt.json --devices 4 --micro-batches 64\n" +
			"   tessel plan --model gpt.json --devices 4 --budget 6 --out s.json --placement-out p.json",
		Description: "Cuts the model into stages of least time per sample (tessel partition; its flags apply), turns\n" +
			"the split into a placement and searches its schedule (tessel search) for --micro-batches under\n" +
			"--budget, the per-device memory budget of the placement (its units: see --memory-unit).\n" +
			"Reports the split's time per sample beside the even split's and the greedy fill's, and the\n" +
			"schedule's makespan and bubble rate, in placement steps and in model time. The schedule has\n" +
			"passed the verifier.",
		Flags: append(append(partitionFlags(),
			&cli.StringFlag{Name: "placement-out", Usage: "also write the placement to a JSON `FILE`"},
			&cli.IntFlag{Name: "micro-batches", Aliases: []string{"n"}, Usage: "number of micro-batches N of the schedule", Value: 64},
			&cli.IntFlag{Name: "budget", Usage: "per-device memory budget of the schedule search, in placement memory units (0: unlimited)"},
			&cli.IntFlag{Name: "nr", Usage: "largest N_R tried (0: as the budget allows, at most 2·devices)"},
			&cli.DurationFlag{Name: "time-limit", Usage: "stop the schedule search after this long and keep the best schedule found"},
			&cli.StringFlag{Name: "cluster", Usage: "run the placement on the cluster in a JSON `FILE`: device speeds, links, host links and, for a profile in bytes, each device's \"memory_bytes\""},
		), append(savingsFlags(), outputFlags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("plan: unexpected argument %q", c.Args().First())
			}
			po := partitionOptionsFrom(c)
			po.Out = c.String("placement-out")
			return runPlan(c.Context, planOptions{
				Partition: po, PlacementOut: po.Out, MicroBatches: c.Int("micro-batches"), Budget: c.Int("budget"),
				NR: c.Int("nr"), TimeLimit: c.Duration("time-limit"), Decisions: savingsFrom(c), Outputs: outputsFrom(c), Cluster: c.String("cluster"),
			}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

// planResult is tessel plan's --json: the partition and the schedule.
type planResult struct {
	Partition *partition.Report `json:"partition"`
	Schedule  search.Summary    `json:"schedule"`
	// Model-time figures: the schedule's makespan and its time per
	// micro-batch in the steady state (period × time unit), beside the
	// split's max load.
	MakespanTime   float64 `json:"makespan_time"`
	PeriodTime     float64 `json:"period_time"`
	TimePerSample  float64 `json:"time_per_sample"`
	EvenPerSample  float64 `json:"even_time_per_sample,omitempty"`
	SearchSeconds  float64 `json:"search_seconds"`
	TotalSeconds   float64 `json:"seconds"`
	ScheduleFile   string  `json:"schedule_file,omitempty"`
	PlacementFile  string  `json:"placement_file,omitempty"`
	ScheduleProven bool    `json:"schedule_proven"`
	// Memory is each device's memory under the model (a profile with a
	// capacity): what its stages hold for good and the budget left for
	// the schedule.
	Memory *partition.MemoryReport `json:"memory,omitempty"`
}

func runPlan(ctx context.Context, o planOptions, stdout, stderr io.Writer) error {
	if err := checkAtLeast("micro-batches", o.MicroBatches, 1); err != nil {
		return err
	}
	if err := checkAtLeast("budget", o.Budget, 0); err != nil {
		return err
	}
	if err := checkAtLeast("nr", o.NR, 0); err != nil {
		return err
	}
	o.Partition.Force = o.Outputs.Force
	if err := o.Outputs.check(); err != nil {
		return err
	}
	t0 := time.Now()
	var cl *cluster.Cluster
	if o.Cluster != "" {
		var err error
		if cl, err = cluster.Load(o.Cluster); err != nil {
			return &usageError{err}
		}
		o.Partition.Capacities = cl.DeviceMemoryBytes()
	}
	pr, err := partitionModel(ctx, o.Partition, stderr)
	if err != nil {
		return err
	}
	p := pr.Converted.Placement
	if cl != nil {
		if len(cl.Devices) != p.Devices {
			return usageErrorf("%s: cluster of %d devices for a placement of %d", o.Cluster, len(cl.Devices), p.Devices)
		}
		if o.Partition.Capacities != nil && !pr.Graph.Bytes {
			return usageErrorf("%s: \"memory_bytes\" needs a profile in bytes (\"device_bytes\")", o.Cluster)
		}
		if p, err = cl.Apply(p); err != nil {
			return &usageError{fmt.Errorf("%s: %w", o.Cluster, err)}
		}
	}
	// The model's memory: each device's budget is what its stages leave
	// of its capacity.
	mem, err := pr.Converted.Memory(pr.Split, o.Partition.Capacities)
	if err != nil {
		return fmt.Errorf("plan: %s: %w", pr.Model, err)
	}
	if mem != nil {
		p.Capacities = make([]int, p.Devices)
		for d, m := range mem {
			p.Capacities[d] = m.Budget
		}
	}
	if o.Decisions != (placement.Decisions{}) {
		if p, err = declare(p, o.Decisions); err != nil {
			return err
		}
	}
	sctx, cancel := withLimit(ctx, o.TimeLimit)
	defer cancel()
	bar := newProgress(stderr)
	t1 := time.Now()
	res, err := search.Run(sctx, p, search.Options{Memory: o.Budget, MaxNR: o.NR, MicroBatches: o.MicroBatches,
		Offload: o.Decisions.Offload, Recompute: o.Decisions.Recompute})
	bar.done()
	if err != nil {
		if errors.Is(err, search.ErrNoRepetend) {
			return fmt.Errorf("%w (raise --budget or --nr)", err)
		}
		return err
	}
	s := res.Schedule
	if err := schedule.Verify(s); err != nil {
		return fmt.Errorf("plan: the schedule fails verification (a bug): %w", err)
	}
	if err := o.Outputs.write(s); err != nil {
		return err
	}
	sum := res.Summary(defaultMethod)
	if o.Decisions.Any() {
		sum.WithDecisions(s)
	}
	r := res.Repetend
	// The time per micro-batch of the schedule's own steady state.
	st := schedule.SteadyOf(s)
	perMicro := 0.0
	if st != nil {
		perMicro = st.TimePerMicroBatch()
	}
	unit := pr.Converted.TimeUnit
	out := planResult{
		Partition: pr, Schedule: sum,
		MakespanTime: round6(float64(sum.Makespan) * unit), PeriodTime: round6(perMicro * unit),
		TimePerSample: pr.MaxLoad, SearchSeconds: secs(time.Since(t1)), TotalSeconds: secs(time.Since(t0)),
		ScheduleFile: o.Outputs.Out, PlacementFile: o.PlacementOut, ScheduleProven: res.Proven(),
	}
	for _, b := range pr.Baselines {
		if b.Method == "even" {
			out.EvenPerSample = b.MaxLoad
		}
	}
	out.Memory = partition.NewMemoryReport(mem, pr.Graph.Bytes, pr.Converted.MemoryUnit)
	if o.Outputs.JSON {
		return printJSON(stdout, out)
	}
	pr.WriteText(stdout)
	fmt.Fprintln(stdout)
	if out.EvenPerSample > 0 {
		fmt.Fprintf(stdout, "time per sample  %.2f (the even split by layer count: %.2f, %.2f× slower)\n", out.TimePerSample, out.EvenPerSample, out.EvenPerSample/out.TimePerSample)
	}
	if mem != nil {
		partition.WriteMemoryText(stdout, mem, pr.Graph.Bytes)
	}
	units := textUnits
	if s.Repetend != nil {
		units = min(units, s.Repetend.Start+2*s.Repetend.Period+1)
	}
	if err := schedule.RenderTextUpTo(s, stdout, units); err != nil {
		return err
	}
	switch {
	case r != nil && res.RepetendUsed():
		fmt.Fprintf(stdout, "\nrepetend     N_R %d, period %d steps = %.2f per micro-batch (the split's max load %.2f), repetend bubble rate %s\n",
			st.NR, r.Period, out.PeriodTime, pr.MaxLoad, pct(schedule.RepetendBubbleRate(p, r.Period)))
	case r != nil:
		fmt.Fprintf(stdout, "\nrepetend     found, not used: N_R %d, period %d steps (repetend bubble rate %s); the schedule is a construction's\n",
			r.NR, r.Period, pct(schedule.RepetendBubbleRate(p, r.Period)))
	default:
		fmt.Fprintf(stdout, "\nrepetend     none fits the budget (--budget, --nr); the schedule below is a construction's\n")
	}
	if r == nil || !res.RepetendUsed() {
		fmt.Fprintf(stdout, "steady state %s; %.2f per micro-batch (the split's max load %.2f)\n", schedule.SteadyText(s), out.PeriodTime, pr.MaxLoad)
	}
	fmt.Fprintf(stdout, "schedule     %d micro-batches: makespan %d steps = %.2f, bubble rate %s (lower bound %d steps)\n",
		s.MicroBatches, sum.Makespan, out.MakespanTime, pct(sum.BubbleRate), sum.LowerBound.Makespan)
	fmt.Fprintf(stdout, "peak memory  %s (budget %s)\n", ints(sum.PeakMemory), p.BudgetText(o.Budget))
	printDecisions(stdout, s, o.Decisions)
	schedule.WriteDecisionsText(stdout, s)
	fmt.Fprintf(stdout, "search time  %.3fs (proven: %s)\n", out.SearchSeconds, yesNo(res.Proven()))
	fmt.Fprintf(stdout, "verified     %s\n", yesNo(sum.Valid))
	return nil
}
