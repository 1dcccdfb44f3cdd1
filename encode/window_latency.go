package encode

import (
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/smt"
)

// # Windows under a latency budget
//
// A window of a schedule with a latency budget L (schedule's Latency;
// placement's "Latency"; SpanWindow) holds the latency rule in its encoding for every
// micro-batch with an instance in the window, the rest of the schedule
// fixed. For each pair (source i, sink j) of such a micro-batch
// (placement's LatencyPairs):
//
//   - both freed: s_j + t_j ≤ s_i + L (an smt.Deadline);
//   - i fixed before the window at S_i, j freed: s_j + t_j ≤ S_i + L (a
//     deadline from smt.Origin);
//   - j fixed before the window, ending at E_j, i freed: s_i ≥ E_j − L
//     (a release);
//   - j after the window (it moves with the later instances): every freed
//     instance k of the micro-batch from which a path of length ℓ(k, j)
//     leads to j's end (k's start to j's end, transfers included) ends
//     early enough that j can still meet the budget: s_k + ℓ(k, j) ≤ s_i
//     + L, s_i freed or fixed. This is necessary, not sufficient: the
//     later instances keep their device orders, which may delay j more.
//
// A source after the window is left to the re-timing. The caller
// (package refine) re-times the window's answer under the budget
// (compact.Compact: its device orders, each micro-batch's first blocks
// delayed as far as it needs), and keeps it only where that meets the
// budget and ends earlier.

// spans is ℓ(a, b) of p: the longest path from block a's start to block
// b's end within one micro-batch (block times and transfers), −1 where no
// path leads from a to b.
func spans(p *placement.Placement) [][]int {
	k := len(p.Blocks)
	order, _ := p.Topo()
	succs := p.SuccDeps()
	out := make([][]int, k)
	for x := len(order) - 1; x >= 0; x-- {
		a := order[x]
		row := make([]int, k)
		for b := range row {
			row[b] = -1
		}
		row[a] = p.Blocks[a].Time
		for _, d := range succs[a] {
			for b, v := range out[d.To] {
				if v >= 0 {
					row[b] = max(row[b], p.Delay(d)+v)
				}
			}
		}
		out[a] = row
	}
	return out
}

// windowLatency adds the latency rule of s's budget to the window
// problem pr (see above): part[x] is 0, 1 or 2 for instance x of s
// before, in or after the window, task[x] its task when freed.
func windowLatency(pr *smt.Problem, s *schedule.Schedule, part []int, task map[int]int, byRef map[schedule.Ref]int) {
	budget := s.Latency
	p := s.Placement
	pairs := p.LatencyPairs()
	var span [][]int
	micros := map[int]bool{}
	var order []int
	for x, in := range s.Instances {
		if part[x] == 1 && !micros[in.Micro] {
			micros[in.Micro] = true
			order = append(order, in.Micro)
		}
	}
	for _, m := range order {
		for _, lp := range pairs {
			xi := byRef[schedule.Ref{Block: lp.Source, Micro: m}]
			xj := byRef[schedule.Ref{Block: lp.Sink, Micro: m}]
			from := smt.Origin // i's task, or time 0 plus S_i
			base := 0
			switch part[xi] {
			case 0:
				base = s.Instances[xi].Start
			case 1:
				from = task[xi]
			default:
				continue // a source after the window: the re-timing's
			}
			switch part[xj] {
			case 0:
				if part[xi] == 1 {
					end := s.Instances[xj].Start + p.Blocks[lp.Sink].Time
					t := &pr.Tasks[task[xi]]
					t.Release = max(t.Release, end-budget)
				}
			case 1:
				pr.Deadlines = append(pr.Deadlines, smt.Deadline{From: from, To: task[xj], Max: base + budget})
			case 2:
				if span == nil {
					span = spans(p)
				}
				for b := range p.Blocks {
					xk := byRef[schedule.Ref{Block: b, Micro: m}]
					if part[xk] != 1 || span[b][lp.Sink] < 0 {
						continue
					}
					// s_k + ℓ(k, j) ≤ s_i + L, as s_k + t_k ≤ s_i + Max.
					limit := base + budget - span[b][lp.Sink] + p.Blocks[b].Time
					pr.Deadlines = append(pr.Deadlines, smt.Deadline{From: from, To: task[xk], Max: limit})
				}
			}
		}
	}
}
