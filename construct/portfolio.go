package construct

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/tessel-pp/tessel/internal/safego"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
)

// Entry is one construction's verified schedule.
type Entry struct {
	Name     string // e.g. "modulo", "list/gradient-first/window 4"
	Schedule *schedule.Schedule
	Makespan int
	// Periodic is the modulo schedule the candidate unrolls, nil for a
	// list schedule.
	Periodic *Periodic
	// build builds the same construction for n micro-batches (nil where
	// it cannot be rebuilt alone): windowPortfolio rebuilds the best
	// constructions of a window this way.
	build func(ctx context.Context, n int) (*schedule.Schedule, error)
}

// Portfolio runs every construction on the spec's micro-batches under its
// memory budget — modulo schedules of the least periods that fit and list
// schedules for every rule and a range of windows — and returns those
// that fit, best first: least makespan, then those that repeat a
// repetend, then least peak memory, then name. It stops early, with what
// it has, when ctx ends or a schedule meets the makespan's lower bound.
//
// Where the spec allows offload or recompute, list schedules that take
// those decisions where the budget binds (and, as further candidates,
// wherever the placement allows) join the candidates, named
// "list/<rule>/<savings>[/window w]"; the schedules that keep every
// activation stay candidates too; beyond decisionFrom micro-batches they
// are built on a window of micro-batches and extended periodically
// (windowPortfolio). Under a latency budget the candidates are re-timed
// under it (latencyPortfolio).
func Portfolio(ctx context.Context, sp spec.Spec) ([]Entry, error) {
	if sp.Latency > 0 {
		return latencyPortfolio(ctx, sp)
	}
	if w := DecisionWindow(sp); w > 0 {
		return windowPortfolio(ctx, sp, w)
	}
	return portfolio(ctx, sp.Placement, sp.MicroBatches, sp.Memory, sp.Allowed)
}

// policies are the savings the portfolio tries besides keeping.
func policies(o spec.Decisions) []Savings {
	if !o.Offload && !o.Recompute {
		return nil
	}
	var out []Savings
	for _, mode := range []struct{ always, eager bool }{{false, false}, {true, false}, {true, true}} {
		out = append(out, Savings{Offload: o.Offload, Recompute: o.Recompute, Always: mode.always, Eager: mode.eager})
		if o.Offload && o.Recompute {
			out = append(out, Savings{Offload: true, Recompute: true, PreferRecompute: true, Always: mode.always, Eager: mode.eager},
				Savings{Offload: true, Recompute: true, Balance: true, Always: mode.always, Eager: mode.eager})
		}
	}
	return out
}

// portfolio is Portfolio without a latency budget.
func portfolio(ctx context.Context, p *placement.Placement, n, memory int, o spec.Decisions) ([]Entry, error) {
	if err := checkArgs(p, n, memory); err != nil {
		return nil, err
	}
	var out []Entry
	add := func(name string, s *schedule.Schedule, ps *Periodic, build func(context.Context, int) (*schedule.Schedule, error)) {
		out = append(out, Entry{Name: name, Schedule: s, Makespan: schedule.Makespan(s), Periodic: ps, build: build})
	}
	lb := rules.LowerBounds(spec.Spec{Placement: p, MicroBatches: n, Memory: memory}).Makespan
	reached := func() bool { return len(out) > 0 && out[len(out)-1].Makespan <= lb }
	// The least period first; a longer one can end sooner at small N,
	// where the time one micro-batch takes weighs more.
	minPeriod := 0
	for k := 0; k < moduloPeriods && !reached(); k++ {
		ps, err := Modulo(ctx, p, ModuloOptions{Memory: memory, MicroBatches: n, MinPeriod: minPeriod})
		if err != nil {
			break
		}
		minPeriod = ps.Period + 1
		if s, err := ps.schedule(firstOne(ctx, out), spec.Spec{Placement: p, MicroBatches: n, Memory: memory}); err == nil {
			name := "modulo"
			if k > 0 {
				name = fmt.Sprintf("modulo/period %d", ps.Period)
			}
			add(name, s, ps, func(ctx context.Context, n int) (*schedule.Schedule, error) {
				return ps.schedule(ctx, spec.Spec{Placement: p, MicroBatches: n, Memory: memory})
			})
		}
	}
	// With decisions: modulo schedules under looser budgets, followed
	// in their order by list schedules that offload or recompute where
	// the actual budget binds.
	if pols := policies(o); len(pols) > 0 && memory > 0 {
		for _, c := range followModulo(ctx, p, n, memory, pols) {
			add(c.Name, c.Schedule, nil, c.build)
		}
	}
	// With offload: modulo schedules that decide per instance
	// (modulo_decide.go), and list schedules that follow them; fixed
	// orders timed by Belady's rule (belady.go).
	if o.Offload && memory > 0 {
		for _, c := range decideFollow(ctx, p, n, memory, policies(o)) {
			add(c.Name, c.Schedule, nil, c.build)
		}
		for _, c := range beladyCandidates(ctx, p, n, memory) {
			add(c.Name, c.Schedule, nil, nil)
		}
	}
	// List schedules in batches of listBatch, run side by side; the batch
	// size, not the cores, decides where an early stop falls, so every
	// machine gives the same answer.
	type job struct {
		rule    Rule
		window  int
		savings Savings
	}
	var jobs []job
	for _, sv := range append([]Savings{{}}, policies(o)...) {
		for _, rule := range Rules() {
			for _, w := range windows(p.Devices, n) {
				jobs = append(jobs, job{rule, w, sv})
			}
		}
	}
	for start := 0; start < len(jobs); start += listBatch {
		// A stopped search still gets one schedule.
		if (ctx.Err() != nil && len(out) > 0) || reached() {
			break
		}
		batch := jobs[start:min(start+listBatch, len(jobs))]
		got := make([]*schedule.Schedule, len(batch))
		lctx := firstOne(ctx, out)
		var wg sync.WaitGroup
		var pan safego.Panic
		for k, j := range batch {
			pan.Go(&wg, func() {
				if s, err := list(lctx, p, n, ListOptions{Rule: j.rule, Window: j.window, Memory: memory, Savings: j.savings}); err == nil {
					got[k] = s
				}
			})
		}
		wg.Wait()
		pan.Repanic()
		for k, j := range batch {
			if got[k] == nil {
				continue
			}
			name := fmt.Sprintf("list/%s", j.rule)
			if j.savings.any() {
				name += "/" + j.savings.String()
			}
			if j.window > 0 {
				name += fmt.Sprintf("/window %d", j.window)
			}
			lo := ListOptions{Rule: j.rule, Window: j.window, Memory: memory, Savings: j.savings}
			add(name, got[k], nil, func(ctx context.Context, n int) (*schedule.Schedule, error) { return list(ctx, p, n, lo) })
		}
	}
	sortEntries(out)
	return out, nil
}

// sortEntries sorts the portfolio's entries best first (Portfolio's order).
func sortEntries(out []Entry) {
	// Peaks only break ties of makespan: measuring every entry cost a
	// twentieth of a search at 10,000 micro-batches.
	ties := make(map[int]int, len(out))
	for _, c := range out {
		ties[c.Makespan]++
	}
	peak := make(map[*schedule.Schedule]int, len(out))
	for _, c := range out {
		if ties[c.Makespan] < 2 {
			continue
		}
		for _, m := range schedule.Measure(c.Schedule).PeakMemory {
			peak[c.Schedule] += m
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].Makespan != out[b].Makespan {
			return out[a].Makespan < out[b].Makespan
		}
		// On a tie, a schedule that repeats a repetend: its steady state
		// is known and its programs are regular.
		if ra, rb := out[a].Schedule.Repetend != nil, out[b].Schedule.Repetend != nil; ra != rb {
			return ra
		}
		if pa, pb := peak[out[a].Schedule], peak[out[b].Schedule]; pa != pb {
			return pa < pb
		}
		return out[a].Name < out[b].Name
	})
}

// Restart runs the list schedules of the portfolio (every rule, every
// window) with their block priorities perturbed by restart index r ≥ 1
// (ListOptions.Perturb) and returns the shortest, named
// "list/<rule>/window <w>/restart <r>"; nil when none fits the budget.
// The same r gives the same schedule on every run. A search with time
// to spend restarts its constructions this way.
func Restart(ctx context.Context, sp spec.Spec, r int) (*Entry, error) {
	p, n, memory := sp.Placement, sp.MicroBatches, sp.Memory
	if err := checkArgs(p, n, memory); err != nil {
		return nil, err
	}
	var best *Entry
	for _, rule := range Rules() {
		for _, w := range windows(p.Devices, n) {
			if ctx.Err() != nil {
				return best, nil
			}
			s, err := list(ctx, p, n, ListOptions{Rule: rule, Window: w, Memory: memory, Perturb: r})
			if err != nil {
				continue
			}
			if ms := schedule.Makespan(s); best == nil || ms < best.Makespan {
				name := fmt.Sprintf("list/%s", rule)
				if w > 0 {
					name += fmt.Sprintf("/window %d", w)
				}
				best = &Entry{Name: fmt.Sprintf("%s/restart %d", name, r), Schedule: s, Makespan: ms}
			}
		}
	}
	return best, nil
}

// firstOne is ctx, or, while out is empty, ctx without its end: a stopped
// search still gets one schedule (search.Run does not wait for it past
// its grace).
func firstOne(ctx context.Context, out []Entry) context.Context {
	if len(out) == 0 {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// listBatch is how many list schedules run side by side.
const listBatch = 4

// moduloPeriods is how many periods the portfolio unrolls modulo
// schedules of: the least that fits the budget and the next ones.
const moduloPeriods = 3

// windows are the micro-batch windows the portfolio tries: none, a few
// small ones, and those around the device count, where pipelines keep
// every stage busy.
func windows(devices, n int) []int {
	set := map[int]bool{0: true}
	for _, w := range []int{1, 2, 3, 4, devices / 2, devices - 1, devices, devices + 1, devices + 2, 3 * devices / 2, 2 * devices, 3 * devices} {
		if w >= 1 && w < n {
			set[w] = true
		}
	}
	out := make([]int, 0, len(set))
	for w := range set {
		out = append(out, w)
	}
	return sortedCopy(out)
}

// followLooser is how much looser than the budget the modulo schedules
// that followModulo follows are: budgets memory+1 .. memory+followLooser
// and unlimited.
const followLooser = 4

// followModulo runs, for the least-period modulo schedule under each
// looser budget, a list schedule of every policy that follows its order
// (ListOptions.Priority) under the budget, taking decisions where it
// binds. Those that fit are returned, named "modulo/<savings>/follow
// period P at memory M" (M 0: unlimited).
func followModulo(ctx context.Context, p *placement.Placement, n, memory int, pols []Savings) []Entry {
	var out []Entry
	seen := map[int]bool{}
	budgets := []int{}
	for m := memory + 1; m <= memory+followLooser; m++ {
		budgets = append(budgets, m)
	}
	budgets = append(budgets, 0)
	for _, m := range budgets {
		if ctx.Err() != nil {
			break
		}
		ps, err := Modulo(ctx, p, ModuloOptions{Memory: m, MicroBatches: n})
		if err != nil || seen[ps.Period] {
			continue
		}
		seen[ps.Period] = true
		prio := func(n int) []int {
			ref, err := ps.Schedule(spec.Spec{Placement: p, MicroBatches: n, Memory: m})
			if err != nil {
				return nil
			}
			k := len(p.Blocks)
			prio := make([]int, n*k)
			for _, in := range ref.Instances {
				prio[in.Micro*k+in.Block] = in.Start
			}
			return prio
		}
		pr := prio(n)
		if pr == nil {
			continue
		}
		for _, sv := range append(slices.Clone(pols), lifePolicies(p, pols)...) {
			s, err := List(p, n, ListOptions{Memory: memory, Priority: pr, Savings: sv})
			if err != nil {
				continue
			}
			build := func(_ context.Context, n int) (*schedule.Schedule, error) {
				if pr := prio(n); pr != nil {
					return List(p, n, ListOptions{Memory: memory, Priority: pr, Savings: sv})
				}
				return nil, fmt.Errorf("construct: no modulo schedule to follow at %d micro-batches", n)
			}
			out = append(out, Entry{Name: fmt.Sprintf("modulo/%s/follow period %d at memory %d", sv, ps.Period, m), Schedule: s, Makespan: schedule.Makespan(s), build: build})
		}
	}
	return out
}

// lifePolicies are the policies a list schedule that follows a reference
// schedule adds to pols: PipeOffload's rule (Wan et al., "PipeOffload:
// Improving Scalability of Pipeline Parallelism with Memory
// Optimization", §3: offload the activations that live long), deciding
// for every instance whose activation lives at least L in the reference
// (L from D to 3D on D devices: about the time a micro-batch takes to
// reach the last stage and come back) and asking for each reload early
// (Savings.Early), so that it hides behind its consumer's predecessor.
func lifePolicies(p *placement.Placement, pols []Savings) []Savings {
	if len(pols) == 0 {
		return nil
	}
	base := pols[0]
	d := max(p.Devices, 1)
	var out []Savings
	for _, l := range []int{d, 3 * d / 2, 2 * d, 5 * d / 2, 3 * d} {
		out = append(out, Savings{Offload: base.Offload, Recompute: base.Recompute, Always: true, Early: true, MinLife: l})
	}
	return append(out, Savings{Offload: base.Offload, Recompute: base.Recompute, Early: true, MinLife: 2 * d})
}
