package encode

import (
	"errors"
	"fmt"
	"sort"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
	"github.com/tessel-pp/tessel/spec"
)

// InstanceProblem turns instances of a placement into a Problem: one task
// per instance (in the order of refs), a precedence for every dependency
// between two of them, with channels (rule/links) its transfers
// on their links (DepTransfers), and the symmetry breaking of property
// 4.1 (the instances of one block run in micro-batch order). Dependencies
// on instances outside refs are the caller's business (they have run).
//
// With channels, the transfers of dependencies with one end outside refs
// (from the instances that ran before a cooldown, into the repetend after
// a warmup) take no link in the Problem, though they do in the schedule:
// a phase's schedule is then exact on its own, and the assembled schedule
// is compacted again (compact.Compact applies the rule to all of it).
// With refs all instances (Optimal) nothing is left out, and a schedule
// of the Problem passes verify.Schedule as it is.
//
// The transfers of one producer are listed in the order of the
// placement's Deps, then of the consumer's devices: the order the rule
// gives transfers of one producer on one link.
//
// Property 4.1 holds for the sets tessel passes: all instances, and the
// warmup and cooldown of offsets that obey property 4.2. Relabelling the
// instances of a block by start time then keeps every dependency whose
// both ends are inside, and leaves each device's sequence of blocks, hence
// its memory, alone. It does not hold for arbitrary subsets: with
// A → B and refs {A⁰, A¹, B¹}, forcing A⁰ before A¹ delays B¹.
//
// sp gives the placement and the budgets: sp's Memory with the
// placement's capacities gives every device its budget (Spec.Budget),
// expressed in the Problem's one Memory by BudgetShift. Its micro-batches
// are refs' and its latency budget is LatencyDeadlines(sp, refs), which a
// caller whose solver keeps it adds.
func InstanceProblem(sp spec.Spec, refs []schedule.Ref, entry []int) *smt.Problem {
	p := sp.Placement
	idx := make(map[schedule.Ref]int, len(refs))
	budget, shift := BudgetShift(sp)
	pr := &smt.Problem{Devices: p.Devices, Memory: budget, Entry: smt.ShiftEntry(entry, shift)}
	for k, r := range refs {
		idx[r] = k
		b := p.Blocks[r.Block]
		pr.Tasks = append(pr.Tasks, smt.Task{
			Name:    fmt.Sprintf("%s^%d", b.ID, r.Micro),
			Devices: b.Devices, Time: b.Time, Memory: b.Memory,
		})
	}
	succs := p.SuccDeps()
	for _, r := range refs {
		for _, d := range succs[r.Block] {
			if to, ok := idx[schedule.Ref{Block: d.To, Micro: r.Micro}]; ok {
				pr.Precs = append(pr.Precs, depPrec(p, d, idx[r], to, 0))
				pr.Transfers = append(pr.Transfers, DepTransfers(p, d, idx[r], to)...)
			}
		}
	}
	// Instances of each block sorted by micro-batch: consecutive ones in order.
	byBlock := map[int][]schedule.Ref{}
	for _, r := range refs {
		byBlock[r.Block] = append(byBlock[r.Block], r)
	}
	blocks := make([]int, 0, len(byBlock))
	for b := range byBlock {
		blocks = append(blocks, b)
	}
	sort.Ints(blocks)
	for _, b := range blocks {
		rs := byBlock[b]
		sort.Slice(rs, func(i, j int) bool { return rs[i].Micro < rs[j].Micro })
		for k := 1; k < len(rs); k++ {
			pr.Before = append(pr.Before, [2]int{idx[rs[k-1]], idx[rs[k]]})
		}
	}
	return pr
}

// depPrec is the precedence that dependency d of p puts between task from
// (an instance of block d.From, with its block's time) and task to (of
// d.To), with periods·P of slack in a periodic problem: the placement's
// rule s_from + Delay(d) ≤ s_to + periods·P, so Lag = t_from − Delay(d),
// minus the transfer time.
func depPrec(p *placement.Placement, d placement.Dep, from, to, periods int) smt.Prec {
	return smt.Prec{From: from, To: to, Lag: p.Blocks[d.From].Time - p.Delay(d), Periods: periods}
}

// DepTransfers is what dependency d of p adds, with channels, between task
// from (an instance of d.From) and task to (of d.To): one transfer of
// Transfer(d) on each link its tensor crosses (Links), in Links' order;
// none without channels, when the tensor crosses no link, or where it
// crosses a pair of several links (placement's Lanes). Links are
// labelled From·Devices + To.
func DepTransfers(p *placement.Placement, d placement.Dep, from, to int) []smt.Transfer {
	if !links.Queued(p) || p.Lanes[d] != nil {
		// A pair of several links (placement's Lanes): the encodings see
		// no queue there (a relaxation); a schedule they give is re-timed
		// under the rule (placement's LinkQueue).
		return nil
	}
	var out []smt.Transfer
	for _, l := range p.Links(d) {
		out = append(out, smt.Transfer{From: from, To: to, Link: l.From*p.Devices + l.To, Time: p.Transfer(d)})
	}
	return out
}

// AllInstances lists every instance of sp, B_i^n for n in 0..N-1 (N sp's
// micro-batches), micro-batch major.
func AllInstances(sp spec.Spec) []schedule.Ref {
	p, n := sp.Placement, sp.MicroBatches
	refs := make([]schedule.Ref, 0, n*len(p.Blocks))
	for m := 0; m < n; m++ {
		for i := range p.Blocks {
			refs = append(refs, schedule.Ref{Block: i, Micro: m})
		}
	}
	return refs
}

// LinkOrders reads the recorded link order of a schedule (schedule's
// LinkOrder) from the transfers' starts xs of a solution of
// InstanceProblem(sp, refs, …) with FreeLinkOrder: on every link, its
// transfers by start, the links by (from, to). refs must be every
// instance of the schedule (a transfer with an end outside refs takes no
// link in the Problem). A placement whose pairs have several links
// (Lanes) is refused: those transfers are not in the Problem.
func LinkOrders(p *placement.Placement, refs []schedule.Ref, pr *smt.Problem, xs []int) ([]placement.LinkOrder, error) {
	if len(p.Lanes) > 0 {
		return nil, errors.New("smt: a link order is not recorded where device pairs have several links")
	}
	if len(xs) != len(pr.Transfers) {
		return nil, fmt.Errorf("smt: %d transfer starts for %d transfers", len(xs), len(pr.Transfers))
	}
	byLink := map[int][]int{}
	for k, tr := range pr.Transfers {
		if tr.From >= len(refs) || tr.To >= len(refs) {
			return nil, fmt.Errorf("smt: transfer %d out of range", k)
		}
		byLink[tr.Link] = append(byLink[tr.Link], k)
	}
	labels := make([]int, 0, len(byLink))
	for l := range byLink {
		labels = append(labels, l)
	}
	sort.Ints(labels)
	out := make([]placement.LinkOrder, 0, len(labels))
	for _, l := range labels {
		ks := byLink[l]
		sort.SliceStable(ks, func(a, b int) bool { return xs[ks[a]] < xs[ks[b]] })
		o := placement.LinkOrder{Link: placement.Link{From: l / p.Devices, To: l % p.Devices}}
		for _, k := range ks {
			tr := pr.Transfers[k]
			from, to := refs[tr.From], refs[tr.To]
			o.Transfers = append(o.Transfers, placement.LinkTransfer{Dep: placement.Dep{From: from.Block, To: to.Block}, Micro: from.Micro})
		}
		out = append(out, o)
	}
	return out, nil
}
