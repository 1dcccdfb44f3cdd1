package torchcsv

import (
	"fmt"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// Where a rank's sends and receives share one link that carries one
// transfer at a time (one p2p stream per rank, as on platforms where a
// pending receive blocks the fabric, the head-of-line blocking PyTorch's
// deferred receives remove), a receive posted early holds back the sends posted after
// it until its data has arrived. SimulateComms times a compute_comms
// table so, and CompareRecv says what that costs each rank with receives
// posted early and with receives deferred.

// CommsRunOptions say how SimulateComms times a table.
type CommsRunOptions struct {
	// CommTime is the time of a transfer whose placement gives none (no
	// cluster): ≥ 0; a cluster's transfer times otherwise.
	CommTime int
	// Serial makes every rank's sends and receives run one at a time, in
	// the order its row posts them; false lets them overlap freely.
	Serial bool
}

// CommsRun is a timed run of a compute_comms table.
type CommsRun struct {
	Makespan int `json:"makespan"`
	// FirstCompute is when every stage's first compute starts (by stage
	// id; stage s on its rank).
	FirstCompute []int `json:"first_compute"`
}

// SimulateComms runs t, a compute_comms table of schedule s (its compute
// actions those of Export(s)), as PyTorch's runtime does, each compute
// taking its block's time (an OVERLAP_F_B its pair's) and each transfer
// its dependency's (opt.CommTime without a cluster): a rank runs its
// computes in its row's order, each once the receives of its input are
// done; a SEND or RECV is posted when the rank's row reaches it (at the
// end of the computes before it). A send takes its transfer time from
// when it is posted; a receive is done when its send is. With
// opt.Serial, a rank's sends and receives run one after the other in the
// order posted: a send starts once the ones before it are done, a
// receive is done once its send is and the ones before it are. A run in
// which the sends and receives wait for each other forever is an error.
func SimulateComms(s *schedule.Schedule, t *CommsTable, opt CommsRunOptions) (*CommsRun, error) {
	p := s.Placement
	stages, err := Chain(p)
	if err != nil {
		return nil, err
	}
	if opt.CommTime < 0 {
		return nil, fmt.Errorf("transfer time %d: want ≥ 0", opt.CommTime)
	}
	if len(t.Rows) != p.Devices {
		return nil, fmt.Errorf("%d rows for %d devices", len(t.Rows), p.Devices)
	}
	ct := commTimes{p: p, stages: stages, roles: p.Roles(), commTime: opt.CommTime}
	duration, transfer, recvOf := ct.duration, ct.transfer, ct.recvOf
	type posted struct {
		c    Cell
		post int
	}
	R := len(t.Rows)
	pc, now := make([]int, R), make([]int, R)
	pending, free := make([][]posted, R), make([]int, R) // posted, not done
	done := map[commKey]int{}                            // when each send and receive is done
	run := &CommsRun{FirstCompute: make([]int, len(stages))}
	for r := range run.FirstCompute {
		run.FirstCompute[r] = -1
	}
	for {
		progress := false
		for r, row := range t.Rows {
			// The rank's computes, posting its sends and receives.
			for pc[r] < len(row) {
				c := row[pc[r]]
				if c.IsComm() {
					pending[r] = append(pending[r], posted{c, now[r]})
					pc[r]++
					progress = true
					continue
				}
				if opKinds[c.Op] == "other" {
					pc[r]++
					continue
				}
				start, ready := now[r], true
				for _, x := range append([]Cell{c}, c.Sub...) {
					if k, ok := recvOf(x); ok {
						e, ok := done[k]
						ready = ready && ok
						start = max(start, e)
					}
				}
				if !ready {
					break
				}
				d, err := duration(c)
				if err != nil {
					return nil, err
				}
				for _, x := range append([]Cell{c}, c.Sub...) {
					if x.Op != OpOverlapFB && run.FirstCompute[x.Stage] < 0 {
						run.FirstCompute[x.Stage] = start
					}
				}
				now[r] = start + d
				run.Makespan = max(run.Makespan, now[r])
				pc[r]++
				progress = true
			}
			// Its sends and receives: in order where serial (a receive
			// whose data has not arrived holds the link), each on its own
			// otherwise.
			left := pending[r][:0]
			for i, q := range pending[r] {
				k := commKey{q.c.Op, q.c.Stage, q.c.Micro}
				start := q.post
				if opt.Serial {
					start = max(start, free[r])
				}
				end, ok := 0, true
				if q.c.Op == OpSendF || q.c.Op == OpSendB {
					end = start + transfer(q.c)
				} else {
					var e int
					e, ok = done[sendOf(k)]
					end = max(start, e)
				}
				if !ok {
					if opt.Serial {
						left = append(left, pending[r][i:]...)
						break
					}
					left = append(left, q)
					continue
				}
				done[k] = end
				run.Makespan = max(run.Makespan, end)
				free[r] = end
				progress = true
			}
			pending[r] = left
		}
		if !progress {
			break
		}
	}
	for r, row := range t.Rows {
		if pc[r] < len(row) {
			return nil, fmt.Errorf("rank %d stops at action %d (%s): its input never arrives when every rank's sends and receives go one at a time", r, pc[r]+1, row[pc[r]])
		}
	}
	return run, nil
}

// commTimes times the cells of a compute_comms table on a schedule's
// placement (SimulateComms): its chain of stages and, without transfer
// times on the placement, commTime per transfer.
type commTimes struct {
	p        *placement.Placement
	stages   []Stage
	roles    []placement.Role
	commTime int
}

// blockOf is the placement's block of a compute cell.
func (ct commTimes) blockOf(c Cell) (int, bool) {
	if c.Stage < 0 || c.Stage >= len(ct.stages) {
		return 0, false
	}
	st := ct.stages[c.Stage]
	b := map[string]int{OpForward: st.Forward, OpBackward: st.Backward, OpInput: st.Input, OpWeight: st.Weight}[c.Op]
	if st.Input >= 0 && c.Op == OpBackward {
		b = st.Input // an OVERLAP_F_B writes a split backward as one B
	}
	return b, b >= 0
}

// duration is a compute cell's time (an OVERLAP_F_B's, its pair's).
func (ct commTimes) duration(c Cell) (int, error) {
	p := ct.p
	if c.Op == OpOverlapFB {
		f, _ := ct.blockOf(c.Sub[0])
		g, _ := ct.blockOf(c.Sub[1])
		_, d, why := p.OverlapGroup(f, g, ct.roles)
		if why != "" {
			return 0, fmt.Errorf("%s: %s", c, why)
		}
		return d, nil
	}
	b, ok := ct.blockOf(c)
	if !ok {
		return 0, fmt.Errorf("%s: no block of the schedule's placement", c)
	}
	return p.Blocks[b].Time, nil
}

// transfer is a SEND's time.
func (ct commTimes) transfer(c Cell) int {
	stages := ct.stages
	var d placement.Dep
	if c.Op == OpSendF {
		d = placement.Dep{From: stages[c.Stage].Forward, To: stages[c.Stage+1].Forward}
	} else {
		grad := func(s int) int {
			if stages[s].Backward >= 0 {
				return stages[s].Backward
			}
			return stages[s].Input
		}
		d = placement.Dep{From: grad(c.Stage), To: grad(c.Stage - 1)}
	}
	if ct.p.Transfers == nil {
		return ct.commTime
	}
	return ct.p.Transfer(d)
}

// recvOf is the receive a compute waits for.
func (ct commTimes) recvOf(x Cell) (commKey, bool) {
	stages := ct.stages
	last := len(stages) - 1
	switch {
	case x.Op == OpForward && x.Stage > 0 && stages[x.Stage-1].Device != stages[x.Stage].Device:
		return commKey{OpRecvF, x.Stage, x.Micro}, true
	case (x.Op == OpBackward || x.Op == OpInput) && x.Stage < last && stages[x.Stage+1].Device != stages[x.Stage].Device:
		return commKey{OpRecvB, x.Stage, x.Micro}, true
	}
	return commKey{}, false
}

// sendOf is the send a receive waits for.
func sendOf(k commKey) commKey {
	if k.op == OpRecvF {
		return commKey{OpSendF, k.stage - 1, k.micro}
	}
	return commKey{OpSendB, k.stage + 1, k.micro}
}

// lower is s's compute_comms table with its receives in order (early or
// deferred), checked by ValidateComms.
func lower(s *schedule.Schedule, order RecvOrder) (*CommsTable, error) {
	t, err := Export(s)
	if err != nil {
		return nil, err
	}
	ct, err := AddSendRecv(t)
	if err != nil {
		return nil, err
	}
	sum, err := ValidateComms(ct)
	if err != nil {
		return nil, fmt.Errorf("the lowered table fails the checks of its sends and receives: %w", err)
	}
	if order == RecvDeferred {
		if ct, err = DeferRecv(ct, sum.StageRank); err != nil {
			return nil, err
		}
		if _, err := ValidateComms(ct); err != nil {
			return nil, fmt.Errorf("the table with deferred receives fails the checks of its sends and receives: %w", err)
		}
	}
	return ct, nil
}

// RecvComparison is a schedule run as PyTorch's runtime runs it with
// receives posted early and deferred, on links that carry one transfer at
// a time (every rank's sends and receives in the order posted), beside
// links that overlap transfers freely.
type RecvComparison struct {
	// StageRank is the rank of every stage.
	StageRank []int `json:"stage_rank"`
	// Early and Deferred are the runs on serial links; FreeLinks the run
	// of either order where transfers overlap freely (the same for both:
	// only the order of posting differs).
	Early     *CommsRun `json:"early"`
	Deferred  *CommsRun `json:"deferred"`
	FreeLinks *CommsRun `json:"free_links"`
	// Delay is, for every stage, how much later its first compute starts
	// with receives posted early than deferred (negative: earlier).
	Delay []int `json:"first_compute_delay"`
	// Shorter is the order whose run ends first ("early" on a tie).
	Shorter RecvOrder `json:"shorter"`
}

// CompareRecv runs s's compute_comms tables with receives early and
// deferred (SimulateComms) on serial links, and on free links.
func CompareRecv(s *schedule.Schedule, commTime int) (*RecvComparison, error) {
	early, err := lower(s, RecvEarly)
	if err != nil {
		return nil, err
	}
	deferred, err := lower(s, RecvDeferred)
	if err != nil {
		return nil, err
	}
	sum, err := ValidateComms(early)
	if err != nil {
		return nil, err
	}
	c := &RecvComparison{StageRank: sum.StageRank}
	if c.Early, err = SimulateComms(s, early, CommsRunOptions{CommTime: commTime, Serial: true}); err != nil {
		return nil, fmt.Errorf("receives posted early: %w", err)
	}
	if c.Deferred, err = SimulateComms(s, deferred, CommsRunOptions{CommTime: commTime, Serial: true}); err != nil {
		return nil, fmt.Errorf("receives deferred: %w", err)
	}
	if c.FreeLinks, err = SimulateComms(s, early, CommsRunOptions{CommTime: commTime}); err != nil {
		return nil, err
	}
	for st := range c.StageRank {
		c.Delay = append(c.Delay, c.Early.FirstCompute[st]-c.Deferred.FirstCompute[st])
	}
	c.Shorter = RecvEarly
	if c.Deferred.Makespan < c.Early.Makespan {
		c.Shorter = RecvDeferred
	}
	return c, nil
}
