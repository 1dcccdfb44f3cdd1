package torchcsv

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/placement"
)

// PyTorch's runtime (_PipelineScheduleRuntime) posts a RECV without
// waiting (batch_isend_irecv) and waits for it at the compute action that
// consumes it; a SEND is posted likewise and waited for at the end of the
// step. So a receive placed early does not block its rank: only a compute
// whose input has not been sent does. checkOrder runs a compute_comms
// table by those rules; an order is refused only where it truly
// deadlocks, and then with its cycle.

// RecvOrder is where a compute_comms table puts its receives.
type RecvOrder string

const (
	// RecvEarly puts each RECV where PyTorch's _add_send_recv does: at the
	// end of the receiver's row when the sender's compute is lowered.
	RecvEarly RecvOrder = "early"
	// RecvDeferred moves each RECV to just before the compute that
	// consumes it, as PyTorch's _defer_recv_ops does (DeferRecv).
	RecvDeferred RecvOrder = "deferred"
	// RecvAuto picks the one of the two whose run ends first where every
	// rank's sends and receives go one at a time (SimulateComms).
	RecvAuto RecvOrder = "auto"
)

// RecvOrders are the values of a RecvOrder flag (a new slice each call).
func RecvOrders() []string {
	return []string{string(RecvEarly), string(RecvDeferred), string(RecvAuto)}
}

// ParseRecvOrder reads a RecvOrder flag ("" is early).
func ParseRecvOrder(s string) (RecvOrder, error) {
	switch s {
	case "":
		return RecvEarly, nil
	case string(RecvEarly), string(RecvDeferred), string(RecvAuto):
		return RecvOrder(s), nil
	}
	return "", fmt.Errorf("must be one of %s, got %q", strings.Join(RecvOrders(), ", "), s)
}

// at is a cell's place: its rank and its index in the rank's row.
type at struct{ rank, i int }

// inputOf is what compute cell x (of kind) waits for: the RECV that
// brings its input and the peer's SEND of it, or, where the producing
// stage is on its own rank, the producing computes (either key may
// exist); ok is false where it waits for nothing (the first stage's
// forward, the last stage's backward, a weight gradient).
func inputOf(x Cell, kind placement.Kind, sum *Summary) (recv commKey, send commKey, producer []commKey, ok bool) {
	s, m, last := x.Stage, x.Micro, sum.Stages-1
	switch {
	case kind == placement.Forward && s > 0:
		if sum.StageRank[s-1] == sum.StageRank[s] {
			return commKey{}, commKey{}, []commKey{{string(placement.Forward), s - 1, m}}, true
		}
		return commKey{OpRecvF, s, m}, commKey{OpSendF, s - 1, m}, nil, true
	case (kind == placement.Backward || kind == placement.Input) && s < last:
		if sum.StageRank[s+1] == sum.StageRank[s] {
			return commKey{}, commKey{}, []commKey{{string(placement.Backward), s + 1, m}, {string(placement.Input), s + 1, m}}, true
		}
		return commKey{OpRecvB, s, m}, commKey{OpSendB, s + 1, m}, nil, true
	}
	return commKey{}, commKey{}, nil, false
}

// checkOrder runs the ranks' rows as PyTorch's runtime does: a rank goes
// through its row in order; a SEND or a RECV is posted and the rank moves
// on; a compute waits until the SEND of its input has been posted on the
// peer rank. Statically, a compute must come after the RECV of its input
// and after the compute of its own rank that produces it, and a SEND after
// the compute whose output it sends (PyTorch's runtime fails otherwise).
// Where no rank can move while some have cells left, the ranks wait for
// each other in a cycle, which the error names. UNSHARD, RESHARD and
// REDUCE_GRAD are skipped. The pairs of sends and receives are checked
// before (checkComms).
func checkOrder(rows [][]Cell, sum *Summary, kindOfOp map[string]placement.Kind) error {
	pos := map[commKey]at{} // every cell, compute included, by key
	key := func(c Cell) commKey {
		if k, ok := kindOfOp[c.Op]; ok {
			return commKey{string(k), c.Stage, c.Micro}
		}
		return commKey{c.Op, c.Stage, c.Micro}
	}
	for r, row := range rows {
		for i, c := range row {
			for _, x := range append([]Cell{c}, c.Sub...) {
				if x.Op != OpOverlapFB && opKinds[x.Op] != "other" {
					pos[key(x)] = at{r, i}
				}
			}
		}
	}
	cell := func(p at) Cell { return rows[p.rank][p.i] }
	where := func(p at) string { return fmt.Sprintf("rank %d, action %d (%s)", p.rank, p.i+1, cell(p)) }
	// waits[r][i]: the sends the compute at (r, i) waits for.
	waits := make([][][]commKey, len(rows))
	for r, row := range rows {
		waits[r] = make([][]commKey, len(row))
		for i, c := range row {
			here := at{r, i}
			switch c.Op {
			case OpSendF, OpSendB:
				kind := []placement.Kind{placement.Forward}
				if c.Op == OpSendB {
					kind = []placement.Kind{placement.Backward, placement.Input}
				}
				found := false
				for _, k := range kind {
					if p, ok := pos[commKey{string(k), c.Stage, c.Micro}]; ok {
						found = true
						if p.rank == r && p.i >= i {
							return fmt.Errorf("%s: sends the output of %s (action %d) before computing it", where(here), cell(p), p.i+1)
						}
					}
				}
				if !found {
					return fmt.Errorf("%s: no compute action produces what it sends", where(here)) // cannot happen after checkComms
				}
				continue
			}
			for _, x := range append([]Cell{c}, c.Sub...) {
				kind, ok := kindOfOp[x.Op]
				if !ok {
					continue
				}
				recv, send, producers, ok := inputOf(x, kind, sum)
				if !ok {
					continue
				}
				if producers != nil {
					for _, k := range producers {
						if p, ok := pos[k]; ok && p.rank == r && p.i >= i && !(p.i == i && len(c.Sub) > 0) {
							return fmt.Errorf("%s: runs before %s (action %d), whose output it takes on the same rank", where(here), cell(p), p.i+1)
						}
					}
					continue
				}
				if p, ok := pos[recv]; ok && p.i > i {
					return fmt.Errorf("%s: runs before its receive %s (action %d): PyTorch's runtime waits at a compute for a receive posted before it", where(here), cell(p), p.i+1)
				}
				waits[r][i] = append(waits[r][i], send)
			}
		}
	}
	// Run: posted[k] once the SEND k has been reached.
	posted := map[commKey]bool{}
	pc := make([]int, len(rows))
	for {
		progress := false
		for r, row := range rows {
			for pc[r] < len(row) {
				c := row[pc[r]]
				if slices.ContainsFunc(waits[r][pc[r]], func(k commKey) bool { return !posted[k] }) {
					break
				}
				if c.Op == OpSendF || c.Op == OpSendB {
					posted[commKey{c.Op, c.Stage, c.Micro}] = true
				}
				pc[r]++
				progress = true
			}
		}
		if !progress {
			break
		}
	}
	// Every blocked rank waits for a send of another blocked rank (a send
	// at or after where that rank stopped): follow the waits from the
	// first blocked rank until a rank repeats.
	first := -1
	for r, row := range rows {
		if pc[r] < len(row) {
			first = r
			break
		}
	}
	if first < 0 {
		return nil
	}
	var cycle []string
	seen := map[int]int{}
	for r := first; ; {
		if n, ok := seen[r]; ok {
			cycle = cycle[n:]
			break
		}
		seen[r] = len(cycle)
		var k commKey
		for _, w := range waits[r][pc[r]] {
			if !posted[w] {
				k = w
				break
			}
		}
		p := pos[k]
		cycle = append(cycle, fmt.Sprintf("rank %d at action %d (%s) waits for %s, rank %d's action %d",
			r, pc[r]+1, rows[r][pc[r]], Cell{Stage: k.stage, Op: k.op, Micro: k.micro}, p.rank, p.i+1))
		r = p.rank
	}
	return fmt.Errorf("the sends and receives deadlock (PyTorch would wait forever): %s", strings.Join(cycle, "; "))
}

// DeferRecv moves every RECV of a compute_comms table to just before the
// compute that consumes it, by PyTorch's rule (_defer_recv_ops, the
// lowering with overlap_pp_comm off): each rank's row is read in order; a
// RECV is held back; before a SEND to a rank of higher number, the rank
// first posts every receive it holds from that rank, in the order held
// (rank parity: the lower rank posts its receive first, the match the
// higher rank's send needs); before a compute (or each action of an
// OVERLAP_F_B) comes the receive of its input, if held. Other cells keep
// their order. A receive no compute consumes is an error, as in PyTorch.
func DeferRecv(t *CommsTable, stageRank []int) (*CommsTable, error) {
	rankOf := func(s int) (int, error) {
		if s < 0 || s >= len(stageRank) {
			return 0, fmt.Errorf("stage %d is on no rank", s)
		}
		return stageRank[s], nil
	}
	out := &CommsTable{Rows: make([][]Cell, len(t.Rows))}
	for r, row := range t.Rows {
		var held []Cell
		res := make([]Cell, 0, len(row))
		take := func(k commKey) {
			if i := slices.IndexFunc(held, func(c Cell) bool { return c.Op == k.op && c.Stage == k.stage && c.Micro == k.micro }); i >= 0 {
				res = append(res, held[i])
				held = slices.Delete(held, i, i+1)
			}
		}
		for _, c := range row {
			switch c.Op {
			case OpRecvF, OpRecvB:
				held = append(held, c)
				continue
			case OpSendF, OpSendB:
				to := c.Stage + 1
				if c.Op == OpSendB {
					to = c.Stage - 1
				}
				peer, err := rankOf(to)
				if err != nil {
					return nil, fmt.Errorf("rank %d, %s: %w", r, c, err)
				}
				if r < peer {
					kept := held[:0:0]
					for _, h := range held {
						from := h.Stage - 1
						if h.Op == OpRecvB {
							from = h.Stage + 1
						}
						if p, err := rankOf(from); err == nil && p == peer {
							res = append(res, h)
						} else {
							kept = append(kept, h)
						}
					}
					held = kept
				}
			}
			for _, x := range append([]Cell{c}, c.Sub...) {
				switch x.Op {
				case OpForward:
					take(commKey{OpRecvF, x.Stage, x.Micro})
				case OpBackward, OpInput, OpBackwardBW:
					take(commKey{OpRecvB, x.Stage, x.Micro})
				}
			}
			res = append(res, c)
		}
		if len(held) > 0 {
			return nil, fmt.Errorf("rank %d: %s is consumed by no compute action after it", r, held[0])
		}
		out.Rows[r] = res
	}
	return out, nil
}
