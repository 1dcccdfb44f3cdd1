package torchcsv

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// cellOf is the compute_comms cell of a compute action (current naming).
func cellOf(a Action) Cell {
	return Cell{Stage: a.Stage, Op: string(typeLetter(a.Kind)), Micro: a.Micro}
}

// currentOps maps the current naming's compute types to kinds.
var currentOps = map[string]placement.Kind{OpForward: placement.Forward, OpBackward: placement.Backward,
	OpInput: placement.Input, OpWeight: placement.Weight}

// AddSendRecv lowers a valid compute-only table to the compute_comms form
// by the rules of PyTorch's _add_send_recv (torch.distributed.pipelining):
// ranks take turns in rank order; a rank appends its next compute action
// once that action's input is there (a forward of stage s > 0 after the
// RECV_F of s, or the forward of s−1 on this rank; a full backward or
// input gradient of s < S−1 after the RECV_B of s, or the backward of s+1
// on this rank), and right after it the SEND to the adjacent stage on
// another rank, while the RECV goes to the end of that rank's row. A
// round in which no rank can append is PyTorch's "Malformed compute
// schedule" and an error here; so is a rank without actions, which
// PyTorch's lowering rejects.
func AddSendRecv(t *Table) (*CommsTable, error) {
	sum, err := Validate(t)
	if err != nil {
		return nil, err
	}
	rank := sum.StageRank
	last := sum.Stages - 1
	out := &CommsTable{Rows: make([][]Cell, len(t.Rows))}
	prev := make([]map[commKey]bool, len(t.Rows))
	queue := make([][]unit, len(t.Rows))
	for r, row := range t.Rows {
		if len(row) == 0 {
			return nil, fmt.Errorf("rank %d has no actions: PyTorch's lowering to sends and receives (_add_send_recv) needs every rank to have one", r)
		}
		prev[r] = map[commKey]bool{}
		queue[r] = units(t, r)
	}
	add := func(r int, c Cell) {
		out.Rows[r] = append(out.Rows[r], c)
		for _, x := range append([]Cell{c}, c.Sub...) {
			prev[r][commKey{x.Op, x.Stage, x.Micro}] = true
		}
	}
	ready := func(r int, a Action) bool {
		s, m := a.Stage, a.Micro
		switch a.Kind {
		case placement.Forward:
			return s == 0 || prev[r][commKey{OpRecvF, s, m}] || prev[r][commKey{OpForward, s - 1, m}]
		case placement.Backward, placement.Input:
			return s == last || prev[r][commKey{OpRecvB, s, m}] || prev[r][commKey{OpInput, s + 1, m}] || prev[r][commKey{OpBackward, s + 1, m}]
		}
		return true
	}
	for {
		progress, left := false, false
		for r := range queue {
			if len(queue[r]) == 0 {
				continue
			}
			u := queue[r][0]
			if slices.ContainsFunc(u.acts, func(a Action) bool { return !ready(r, a) }) {
				left = true // a unit runs once every action of it is ready
				continue
			}
			add(r, u.cell)
			for _, a := range u.acts {
				s, m := a.Stage, a.Micro
				switch {
				case a.Kind == placement.Forward && s < last && rank[s+1] != rank[s]:
					add(r, Cell{Stage: s, Op: OpSendF, Micro: m})
					add(rank[s+1], Cell{Stage: s + 1, Op: OpRecvF, Micro: m})
				case (a.Kind == placement.Backward || a.Kind == placement.Input) && s > 0 && rank[s-1] != rank[s]:
					add(r, Cell{Stage: s, Op: OpSendB, Micro: m})
					add(rank[s-1], Cell{Stage: s - 1, Op: OpRecvB, Micro: m})
				}
			}
			queue[r] = queue[r][1:]
			progress = true
			left = left || len(queue[r]) > 0
		}
		if !left {
			break
		}
		if !progress {
			var stuck string
			for r := range queue {
				if len(queue[r]) > 0 {
					stuck += fmt.Sprintf(", rank %d at %s", r, queue[r][0].cell)
				}
			}
			return nil, fmt.Errorf("PyTorch's lowering to sends and receives cannot order this table (its \"Malformed compute schedule\")%s", stuck)
		}
	}
	return out, nil
}

// ValidateComms checks a compute_comms table as Read does: its compute
// actions by PyTorch's validator's rules (Validate), every send and
// receive needed once on its rank, and no deadlock as PyTorch's runtime
// runs the rows (checkOrder: receives posted without waiting, a compute
// waiting for the send of its input). Cells are in the current naming.
func ValidateComms(t *CommsTable) (*Summary, error) {
	compute := &Table{}
	for _, row := range t.Rows {
		out := []Action{}
		for _, c := range row {
			for _, x := range append([]Cell{c}, c.Sub...) {
				if k, ok := currentOps[x.Op]; ok {
					out = append(out, Action{Stage: x.Stage, Kind: k, Micro: x.Micro})
				}
			}
		}
		compute.Rows = append(compute.Rows, out)
	}
	sum, err := Validate(compute)
	if err != nil {
		return nil, err
	}
	if err := checkComms(t.Rows, sum, currentOps); err != nil {
		return nil, err
	}
	return sum, nil
}

// ExportComms writes a verified schedule of a chain of stages in the
// compute_comms form: Export's table lowered by AddSendRecv, checked by
// ValidateComms (receives early: ExportCommsWith's default).
func ExportComms(s *schedule.Schedule) (*CommsTable, error) {
	ct, _, err := ExportCommsWith(s, CommsOptions{})
	return ct, err
}

// CommsOptions say how ExportCommsWith lowers a schedule.
type CommsOptions struct {
	// Recv is where the receives go: RecvEarly (also ""), as PyTorch's
	// _add_send_recv puts them; RecvDeferred, moved by DeferRecv; RecvAuto,
	// the one of the two whose run ends first where every rank's sends and
	// receives go one at a time (CompareRecv), early on a tie.
	Recv RecvOrder
	// CommTime is the transfer time RecvAuto times the orders with where
	// the schedule's placement has none (no cluster).
	CommTime int
}

// ExportCommsWith writes a verified schedule of a chain of stages in the
// compute_comms form with its receives where opt says, checked by
// ValidateComms; it returns the order used (early or deferred).
func ExportCommsWith(s *schedule.Schedule, opt CommsOptions) (*CommsTable, RecvOrder, error) {
	order := opt.Recv
	switch order {
	case "":
		order = RecvEarly
	case RecvAuto:
		c, err := CompareRecv(s, opt.CommTime)
		if err != nil {
			return nil, "", err
		}
		order = c.Shorter
	case RecvEarly, RecvDeferred:
	default:
		return nil, "", fmt.Errorf("receive order %q: want one of %s", order, strings.Join(RecvOrders(), ", "))
	}
	ct, err := lower(s, order)
	if err != nil {
		return nil, "", err
	}
	return ct, order, nil
}

// unit is what AddSendRecv appends at once: one compute action, or an
// OVERLAP_F_B (its forward and its whole backward, the backward's weight
// gradient included where the table splits it).
type unit struct {
	acts []Action
	cell Cell
}

// units are rank r's actions as AddSendRecv appends them.
func units(t *Table, r int) []unit {
	row := t.Rows[r]
	at := t.overlapsOf(r)
	var out []unit
	for i := 0; i < len(row); i++ {
		if n, ok := at[i]; ok {
			out = append(out, unit{acts: row[i : i+n+1], cell: overlapCell(row, i)})
			i += n
			continue
		}
		out = append(out, unit{acts: row[i : i+1], cell: cellOf(row[i])})
	}
	return out
}

// ExportCSV is s as PyTorch's pipelining CSV: compute only (Export), or
// with comms its compute_comms form (ExportComms). It returns the
// compute-only table too, the file's bytes and the form's name as tessel
// export reports it ("compute only" or "compute_comms").
func ExportCSV(s *schedule.Schedule, comms bool) (tab *Table, data []byte, form string, err error) {
	return ExportCSVWith(s, CSVOptions{Comms: comms})
}

// CSVOptions say which CSV ExportCSVWith writes.
type CSVOptions struct {
	// Comms writes the compute_comms form, lowered as Lowering says.
	Comms    bool
	Lowering CommsOptions
}

// ExportCSVWith is ExportCSV with its options; the compute_comms form's
// name says where its receives are when they are deferred
// ("compute_comms, receives deferred").
func ExportCSVWith(s *schedule.Schedule, opt CSVOptions) (tab *Table, data []byte, form string, err error) {
	if tab, err = Export(s); err != nil {
		return nil, nil, "", err
	}
	if !opt.Comms {
		return tab, tab.Marshal(), "compute only", nil
	}
	ct, order, err := ExportCommsWith(s, opt.Lowering)
	if err != nil {
		return nil, nil, "", err
	}
	form = "compute_comms"
	if order == RecvDeferred {
		form += ", receives deferred"
	}
	return tab, ct.Marshal(), form, nil
}
