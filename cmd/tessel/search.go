package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
)

type searchOptions struct {
	Placement    placementSpec
	MicroBatches int
	Memory       int
	NR           int
	Method       string
	Jobs         int
	Seed         int
	Effort       int
	TimeLimit    time.Duration
	SolverOnly   bool
	Decisions    placement.Decisions
	Outputs      outputs
}

// textUnits is the most time units a command draws in the terminal;
// tessel render draws more.
const textUnits = 48

// defaultMethod is the faster method in the README's benchmark table.
const defaultMethod = repetend.MethodJoint

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:  "search",
		Usage: "find the shortest schedule of N micro-batches under a memory budget, never worse than the baselines (the Tessel search)",
		UsageText: "tessel search --placement m-shape --memory 6 --nr 6 --micro-batches 128\n" +
			"   tessel search --placement-file my.json --memory 8 --out s.json --svg s.svg",
		Description: "Finds the schedule of --micro-batches with the shortest makespan it can under the memory\n" +
			"budget, never one that ends later than a baseline or a solver-free construction:\n" +
			"  1. constructions (modulo schedules, list schedules under the budget) and every baseline\n" +
			"     that applies, in milliseconds; the best is the incumbent;\n" +
			"  2. a repetend — every block once, block i from micro-batch offset n_i < N_R — of shorter\n" +
			"     period than the best modulo schedule's, searched with Z3 top-down from it, with the lazy\n" +
			"     check that its warmup and cooldown exist;\n" +
			"  3. the time-optimal warmup and cooldown of that repetend, around its exact iterations;\n" +
			"  4. Z3 re-optimises the first and last instances of the best schedule where it is not proven.\n" +
			"The repetend bubble rate is the bubble rate of the whole schedule as N grows.\n\n" +
			"Methods of step 2: joint (default) makes the offsets solver variables and checks one period\n" +
			"at a time; enumerate solves candidate offsets one by one on --jobs workers (the paper's\n" +
			"Algorithm 1); race runs both and keeps the first proven answer. --solver-only runs steps 2\n" +
			"and 3 alone, the paper's search.\n" +
			"A time limit or Ctrl-C returns the best verified schedule found at once, marked as not proven;\n" +
			"so does a solver call that reaches --effort (the same answer on every run).",
		Flags: append(append(placementFlags(),
			&cli.IntFlag{Name: "micro-batches", Aliases: []string{"n"}, Usage: "number of micro-batches N of the full schedule", Value: 128},
			&cli.IntFlag{Name: "memory", Aliases: []string{"m"}, Usage: "per-device memory budget (0: unlimited)"},
			&cli.IntFlag{Name: "nr", Usage: "largest N_R tried (0: as many as the memory budget allows, at most 2·devices)"},
			&cli.StringFlag{Name: "method", Usage: "repetend search: joint, enumerate or race", Value: string(defaultMethod)},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "solver workers of the enumeration (0: one per core)"},
			&cli.IntFlag{Name: "seed", Usage: "random seed of the solver"},
			&cli.IntFlag{Name: "effort", Usage: fmt.Sprintf("cap of one solver call of the repetend search, in Z3 resource units (0: %d, -1: none); deterministic, unlike --time-limit", repetend.DefaultEffort)},
			&cli.DurationFlag{Name: "time-limit", Usage: "stop after this long and keep the best schedule found (e.g. 30s, 5m)"},
			&cli.BoolFlag{Name: "solver-only", Usage: "leave out the constructions and baselines: the paper's search alone (for measuring it)"},
		), append(savingsFlags(), outputFlags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("search: unexpected argument %q", c.Args().First())
			}
			return runSearch(c.Context, searchOptions{
				Placement: placementSpecFrom(c), MicroBatches: c.Int("micro-batches"), Memory: c.Int("memory"),
				NR: c.Int("nr"), Method: c.String("method"), Jobs: c.Int("jobs"), Seed: c.Int("seed"), Effort: c.Int("effort"),
				TimeLimit: c.Duration("time-limit"), SolverOnly: c.Bool("solver-only"), Decisions: savingsFrom(c), Outputs: outputsFrom(c),
			}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runSearch(ctx context.Context, opts searchOptions, stdout, stderr io.Writer) error {
	for _, f := range []struct {
		name   string
		v, min int
	}{{"micro-batches", opts.MicroBatches, 1}, {"memory", opts.Memory, 0}, {"nr", opts.NR, 0}, {"jobs", opts.Jobs, 0}} {
		if err := checkAtLeast(f.name, f.v, f.min); err != nil {
			return err
		}
	}
	method, err := repetend.ParseMethod(opts.Method)
	if err != nil {
		return usageErrorf("search: %v", err)
	}
	if err := opts.Outputs.check(); err != nil {
		return err
	}
	p, given, cl, err := opts.Placement.loadOn()
	if err != nil {
		return err
	}
	if opts.Decisions != (placement.Decisions{}) {
		if p, given, err = opts.Placement.loadDeclared(opts.Decisions); err != nil {
			return err
		}
	}
	opts.Outputs = opts.Outputs.onCluster(cl, given)
	ctx, cancel := withLimit(ctx, opts.TimeLimit)
	defer cancel()
	bar := newProgress(stderr)
	t0 := time.Now()
	res, err := search.Run(ctx, p, search.Options{
		Memory: opts.Memory, MaxNR: opts.NR, MicroBatches: opts.MicroBatches,
		Method: method, Jobs: opts.Jobs, Seed: opts.Seed, Effort: opts.Effort, SolverOnly: opts.SolverOnly,
		Offload: opts.Decisions.Offload, Recompute: opts.Decisions.Recompute,
		Progress: func(pr search.Progress) { bar.show("%s", searchStatus(pr, time.Since(t0))) },
	})
	bar.done()
	if err != nil {
		if errors.Is(err, search.ErrNoRepetend) {
			return fmt.Errorf("%w (raise --memory or --nr)", err)
		}
		return err
	}
	s := res.Schedule
	if err := schedule.Verify(s); err != nil {
		return fmt.Errorf("search: the schedule fails verification (a bug): %w", err)
	}
	if err := opts.Outputs.write(s); err != nil {
		return err
	}
	sum := searchSummary(res, method)
	decisionCounts(&sum, s, opts.Decisions)
	r := res.Repetend
	var rate float64
	if r != nil {
		rate = *sum.RepetendBubbleRate
	}
	if opts.Outputs.JSON {
		return printJSON(stdout, sum)
	}
	nrText := "N_R from the budget"
	if opts.NR > 0 {
		nrText = fmt.Sprintf("N_R ≤ %d", opts.NR)
	} else if res.Search != nil {
		nrText = fmt.Sprintf("N_R ≤ %d", res.Search.MaxNR)
	}
	fmt.Fprintf(stdout, "tessel search: %s, %d devices, memory %s, %s, %d micro-batches, method %s\n",
		p.Name, p.Devices, budgetOf(p, opts.Memory), nrText, opts.MicroBatches, method)
	if t := linksText(p); t != "" {
		fmt.Fprintf(stdout, "links: %s\n", t)
	}
	fmt.Fprintln(stdout)
	if r != nil {
		fmt.Fprintf(stdout, "repetend     N_R %d, period %d (lower bound %d), repetend bubble rate %s\n", r.NR, r.Period, res.Bounds.Period, pct(rate))
		fmt.Fprintf(stdout, "offsets      %s\n", offsetsText(p, r.Offsets))
		for d, line := range repetendRows(p, r) {
			fmt.Fprintf(stdout, "  device %-3d %s\n", d, line)
		}
	} else {
		fmt.Fprintf(stdout, "repetend     none with N_R ≤ %d fits the budget\n", opts.NR)
	}
	fmt.Fprintln(stdout)
	if res.Fallback && res.Source == "repetend" {
		fmt.Fprintf(stdout, "%d micro-batches is fewer than N_R %d: the schedule below is the time-optimal search of all of them.\n\n", opts.MicroBatches, r.NR)
	}
	// The warmup and two iterations of the repetend show its pattern and
	// keep the picture within a terminal.
	units := textUnits
	if s.Repetend != nil {
		units = min(units, s.Repetend.Start+2*s.Repetend.Period+1)
	}
	if err := schedule.RenderTextUpTo(s, stdout, units); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nschedule     %d micro-batches: makespan %d (lower bound %d, gap %d), bubble rate %s\n", s.MicroBatches, sum.Makespan, sum.LowerBound.Makespan, res.Gap(), pct(sum.BubbleRate))
	fmt.Fprintf(stdout, "built by     %s\n", sourceText(res))
	fmt.Fprintf(stdout, "peak memory  %s (budget %s)\n", ints(sum.PeakMemory), budgetOf(p, opts.Memory))
	printDecisions(stdout, s, opts.Decisions)
	if res.Search != nil {
		st := res.Search.Stats
		fmt.Fprintf(stdout, "solver       %d candidates seen, %d pruned, %d solved, %d rejected by warmup/cooldown (%d solver calls)\n", st.Seen, st.Pruned, st.Solved, st.Rejected, st.Checks)
	} else if res.Skipped != "" {
		fmt.Fprintf(stdout, "solver       not needed for the repetend: %s\n", res.Skipped)
	}
	fmt.Fprintf(stdout, "search time  %.3fs (constructions %.3fs, repetend %.3fs, warmup %.3fs, cooldown %.3fs, refining %.3fs)\n", res.Times.Total.Seconds(), res.Times.Constructions.Seconds(), res.Times.Repetend.Seconds(), res.Times.Warmup.Seconds(), res.Times.Cooldown.Seconds(), res.Times.Refine.Seconds())
	fmt.Fprintf(stdout, "proven       %s\n", provenText(res))
	fmt.Fprintf(stdout, "verified     %s\n", yesNo(sum.Valid))
	return nil
}

// searchSummary is the --json summary of a search's result: the
// schedule's metrics, how it was built, and its repetend.
func searchSummary(res *search.Result, method repetend.Method) summary {
	s, p := res.Schedule, res.Schedule.Placement
	name := string(method)
	if res.Search != nil {
		name = string(res.Search.Method)
	}
	sum := newSummary(s, name, res.Proven())
	sum.Source = res.Source
	sum.Gap = ptr(res.Gap())
	sum.Seconds = seconds{Total: secs(res.Times.Total), Constructions: secs(res.Times.Constructions), Repetend: secs(res.Times.Repetend), Warmup: secs(res.Times.Warmup), Cooldown: secs(res.Times.Cooldown), Refine: secs(res.Times.Refine)}
	if res.Search != nil {
		st := res.Search.Stats
		sum.Candidates = &candidates{Seen: st.Seen, Pruned: st.Pruned, Solved: st.Solved, Rejected: st.Rejected, Checks: st.Checks}
	}
	if r := res.Repetend; r != nil {
		rate := schedule.RepetendBubbleRate(p, r.Period)
		sum.NR, sum.Period, sum.RepetendBubbleRate = r.NR, r.Period, &rate
		sum.PeriodProven = ptr(res.PeriodProven())
		sum.Offsets = map[string]int{}
		for i, b := range p.Blocks {
			sum.Offsets[b.ID] = r.Offsets[i]
		}
	}
	return sum
}

// searchStatus is the status line of a running search.
func searchStatus(pr search.Progress, elapsed time.Duration) string {
	best := "none yet"
	if pr.BestMakespan > 0 {
		best = fmt.Sprintf("%d (gap %d to the lower bound %d)", pr.BestMakespan, pr.BestMakespan-pr.LowerBound, pr.LowerBound)
	}
	line := fmt.Sprintf("search: %s, best makespan %s", pr.Stage, best)
	if rp := pr.Repetend; rp != nil {
		period := "none yet"
		if rp.BestPeriod > 0 {
			period = fmt.Sprint(rp.BestPeriod)
		}
		seen := fmt.Sprint(rp.Stats.Seen)
		if rp.Total > 0 {
			seen += fmt.Sprintf(" of %d", rp.Total)
		}
		line += fmt.Sprintf("; %s: N_R %d, %s seen, %d solved, period %s (lower bound %d)", rp.Method, rp.NR, seen, rp.Stats.Solved, period, rp.LowerBound)
	}
	return line + ", " + elapsed.Round(time.Second).String()
}

// sourceText says what built the schedule and what it beat.
func sourceText(res *search.Result) string {
	text := strings.Replace(res.Source, "repetend", "the repetend with time-optimal warmup and cooldown", 1)
	if strings.HasSuffix(text, ", refined") {
		text = strings.TrimSuffix(text, ", refined") + ", its ends re-optimised by the solver"
	}
	best := ""
	for _, sd := range res.Seeds {
		if sd.Name != strings.TrimSuffix(res.Source, ", refined") {
			best = fmt.Sprintf("%s (makespan %d)", sd.Name, sd.Makespan)
			break
		}
	}
	if len(res.Seeds) > 0 && best != "" {
		text += fmt.Sprintf("; best of %d constructions and baselines otherwise: %s", len(res.Seeds), best)
	}
	return text
}

func offsetsText(p *placement.Placement, offs []int) string {
	parts := make([]string, len(offs))
	for i, o := range offs {
		parts[i] = fmt.Sprintf("%s:%d", p.Blocks[i].ID, o)
	}
	return strings.Join(parts, " ")
}

// repetendRows lists every device's blocks of one iteration in start
// order, as id^offset@start.
func repetendRows(p *placement.Placement, r *repetend.Repetend) []string {
	rows := make([]string, p.Devices)
	for d, on := range p.DeviceBlocks() {
		sort.SliceStable(on, func(a, b int) bool { return r.Starts[on[a]] < r.Starts[on[b]] })
		parts := make([]string, len(on))
		for k, i := range on {
			parts[k] = fmt.Sprintf("%s^%d@%d", p.Blocks[i].ID, r.Offsets[i], r.Starts[i])
		}
		rows[d] = strings.Join(parts, " ")
	}
	return rows
}

func provenText(res *search.Result) string {
	if res.Gap() <= 0 {
		return "yes: the makespan meets the lower bound"
	}
	if res.Proven() {
		if res.Fallback {
			return "yes: the time-optimal search of all micro-batches ran to its end"
		}
		return "yes: no repetend with these N_R has a shorter period, warmup and cooldown are time-optimal"
	}
	if res.Decisions {
		return fmt.Sprintf("no (gap %d): with offload or recompute a schedule is proven only where it meets the lower bound (the solver's repetends keep every activation)", res.Gap())
	}
	var why []string
	if res.Repetend != nil && !res.PeriodProven() {
		why = append(why, "a shorter period was not ruled out (time limit, Ctrl-C, --effort or the solver's size limit)")
	}
	switch {
	case strings.HasSuffix(res.Source, ", refined"):
		why = append(why, "the solver re-optimised the schedule's ends within its effort, without a proof")
	case res.Source != "repetend":
		why = append(why, "the schedule is a construction's, whose makespan is proven only at the lower bound")
	default:
		if !res.Fallback && !res.WarmupProven {
			why = append(why, "the warmup is not proven time-optimal")
		}
		if !res.Fallback && !res.CooldownProven {
			why = append(why, "the cooldown is not proven time-optimal")
		}
		if res.Fallback && (res.TO == nil || !res.TO.Proven) {
			why = append(why, "the time-optimal search stopped early")
		}
	}
	return fmt.Sprintf("no (gap %d): ", res.Gap()) + strings.Join(why, "; ")
}
