package torchcsv

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/placement"
)

// Naming is how a file's B is read. PyTorch named the input gradient B and
// the full backward BW when it added zero-bubble schedules (a B followed
// by a W of the same stage and micro-batch); it now names them I and B.
type Naming string

const (
	NamingAuto    Naming = ""        // the older naming where the file has BW, or W without I
	NamingCurrent Naming = "current" // B full backward, I input gradient
	NamingOld     Naming = "old"     // B input gradient, BW full backward
)

// Namings are the values of a Naming flag (a new slice each call).
func Namings() []string { return []string{"auto", string(NamingCurrent), string(NamingOld)} }

// ParseNaming reads a Naming flag: "auto" (or empty), "current", "old".
func ParseNaming(s string) (Naming, error) {
	switch s {
	case "auto", "":
		return NamingAuto, nil
	case string(NamingCurrent), string(NamingOld):
		return Naming(s), nil
	}
	return "", fmt.Errorf("must be one of %s, got %q", strings.Join(Namings(), ", "), s)
}

// ReadOptions say how to read what a file leaves open.
type ReadOptions struct {
	Naming Naming
	// KeepOverlaps keeps every OVERLAP_F_B as an overlapped pair
	// (Table.Overlaps; Import then needs an overlap time) rather than
	// its two actions back to back.
	KeepOverlaps bool
}

// Format names of PyTorch's two CSV forms.
const (
	FormatComputeOnly  = "compute_only"
	FormatComputeComms = "compute_comms"
)

// Reading is a file read by Read: its compute actions as a Table that
// Validate accepts and Import takes, which form the file had, and one
// note per way the reading departs from the file's cells.
type Reading struct {
	Table  *Table
	Format string
	Notes  []string
}

// Read reads everything PyTorch's _dump_csv writes, in either form:
//
//   - compute_only and compute_comms (any SEND_F, RECV_F, SEND_B, RECV_B
//     cell): the sends and receives are checked (each transfer PyTorch's
//     runtime needs has its SEND on the sender's rank and its RECV on the
//     receiver's, no other, in an order that does not deadlock, simulated
//     as PyTorch's _simulate_comms_compute does) and set aside;
//   - UNSHARD, RESHARD and REDUCE_GRAD are checked for their rank and
//     ignored;
//   - (…;…)OVERLAP_F_B becomes its two actions back to back;
//   - B and BW by opt.Naming; a stage that runs full backwards for some
//     micro-batches and input and weight gradients for others (DualPipeV)
//     gets each full backward as its I and W back to back.
//
// Each of these that applies adds a note. The table passes Validate.
func Read(data []byte, opt ReadOptions) (*Reading, error) {
	var rows [][]Cell
	for n, line := range splitCells(data) {
		row := []Cell{}
		for c, cell := range line {
			if cell == "" {
				continue
			}
			x, err := ParseCell(cell)
			if err != nil {
				return nil, fmt.Errorf("line %d (rank %d), cell %d: %w", n+1, n, c+1, err)
			}
			row = append(row, x)
		}
		rows = append(rows, row)
	}
	rd := &Reading{Format: FormatComputeOnly}
	has := map[string]bool{}
	var firstW, firstBW string
	for _, row := range rows {
		for _, c := range row {
			for _, x := range append([]Cell{c}, c.Sub...) {
				has[x.Op] = true
				if x.Op == OpWeight && firstW == "" {
					firstW = x.String()
				}
				if x.Op == OpBackwardBW && firstBW == "" {
					firstBW = x.String()
				}
			}
		}
	}
	naming := opt.Naming
	switch naming {
	case NamingAuto:
		switch {
		case has[OpBackwardBW] && has[OpInput]:
			return nil, fmt.Errorf("the file has both BW (%s, PyTorch's older name of a full backward) and I (the current name of an input gradient): one file uses one naming", firstBW)
		case has[OpBackwardBW]:
			naming = NamingOld
			rd.Notes = append(rd.Notes, fmt.Sprintf("read with PyTorch's older naming (B input gradient, BW full backward), as the file has BW (%s); --torch-naming current reads B as a full backward", firstBW))
		case has[OpWeight] && !has[OpInput]:
			naming = NamingOld
			rd.Notes = append(rd.Notes, fmt.Sprintf("read with PyTorch's older naming (B input gradient, BW full backward), as the file has W (%s) and no I; --torch-naming current reads B as a full backward", firstW))
		default:
			naming = NamingCurrent
		}
	case NamingCurrent:
		if has[OpBackwardBW] {
			return nil, fmt.Errorf("%s: BW is PyTorch's older name of a full backward, but --torch-naming is current (B full backward, I input gradient)", firstBW)
		}
	case NamingOld:
		if has[OpInput] {
			return nil, fmt.Errorf("the file has I, the current name of an input gradient, but --torch-naming is old (B input gradient, BW full backward)")
		}
	default:
		return nil, fmt.Errorf("naming %q: want one of %s", naming, strings.Join(Namings(), ", "))
	}
	kindOfOp := map[string]placement.Kind{OpForward: placement.Forward, OpWeight: placement.Weight,
		OpBackward: placement.Backward, OpInput: placement.Input}
	if naming == NamingOld {
		kindOfOp[OpBackward], kindOfOp[OpBackwardBW] = placement.Input, placement.Backward
	}
	action := func(c Cell) Action { return Action{Stage: c.Stage, Kind: kindOfOp[c.Op], Micro: c.Micro} }

	t := &Table{}
	overlaps, others, comms := 0, 0, 0
	for r, row := range rows {
		out := []Action{}
		for _, c := range row {
			switch {
			case c.Op == OpOverlapFB && opt.KeepOverlaps:
				overlaps++
				f, b := action(c.Sub[0]), action(c.Sub[1])
				if f.Kind != placement.Forward {
					f, b = b, f
				}
				if f.Kind != placement.Forward || b.Kind != placement.Backward {
					return nil, fmt.Errorf("rank %d: %s: an overlapped pair is a forward and a full backward (B in the current naming)", r, c)
				}
				t.Overlaps = append(t.Overlaps, Overlap{Rank: r, At: len(out), Len: 1})
				out = append(out, f, b)
			case c.Op == OpOverlapFB:
				overlaps++
				for _, x := range c.Sub {
					out = append(out, action(x))
				}
			case c.IsComm():
				comms++
			case opKinds[c.Op] == "other":
				others++
			default:
				out = append(out, action(c))
			}
		}
		t.Rows = append(t.Rows, out)
	}
	sum, err := Validate(t)
	if err != nil {
		return nil, err
	}
	// Every cell's stage is on its rank (PyTorch's validator maps every
	// action's stage), the set-aside ones included.
	for r, row := range rows {
		for i, c := range row {
			if c.Op == OpOverlapFB || opKinds[c.Op] == "compute" {
				continue
			}
			if c.Stage >= sum.Stages {
				return nil, fmt.Errorf("rank %d, action %d (%s): no stage %d (stages are 0..%d)", r, i+1, c, c.Stage, sum.Stages-1)
			}
			if c.Micro >= sum.MicroBatches {
				return nil, fmt.Errorf("rank %d, action %d (%s): no micro-batch %d (micro-batches are 0..%d)", r, i+1, c, c.Micro, sum.MicroBatches-1)
			}
			if got := sum.StageRank[c.Stage]; got != r {
				return nil, fmt.Errorf("rank %d, action %d (%s): stage %d is on rank %d: each stage runs on one rank", r, i+1, c, c.Stage, got)
			}
		}
	}
	if comms > 0 {
		rd.Format = FormatComputeComms
		if err := checkComms(rows, sum, kindOfOp); err != nil {
			return nil, err
		}
		rd.Notes = append(rd.Notes, fmt.Sprintf("compute_comms format: %d sends and receives checked (each SEND with its RECV on the peer rank, no deadlock) and set aside", comms))
	}
	if others > 0 {
		rd.Notes = append(rd.Notes, fmt.Sprintf("%d UNSHARD, RESHARD or REDUCE_GRAD action(s) (FSDP and gradient reduction) ignored", others))
	}
	switch {
	case overlaps > 0 && opt.KeepOverlaps:
		rd.Notes = append(rd.Notes, fmt.Sprintf("%d OVERLAP_F_B action(s) imported as overlapped pairs, each taking the overlap time", overlaps))
	case overlaps > 0:
		rd.Notes = append(rd.Notes, fmt.Sprintf("%d OVERLAP_F_B action(s) imported as their two actions back to back (each runs for its own time; give --overlap-time to import them as overlapped pairs)", overlaps))
	}
	var mixed []string
	for s, m := range sum.Mixed {
		if m {
			mixed = append(mixed, strconv.Itoa(s))
		}
	}
	if len(mixed) > 0 {
		for r, row := range t.Rows {
			out := make([]Action, 0, len(row))
			at := make([]int, len(row)+1) // new position of every action
			for i, a := range row {
				at[i] = len(out)
				if a.Kind == placement.Backward && sum.Mixed[a.Stage] {
					out = append(out, Action{a.Stage, placement.Input, a.Micro}, Action{a.Stage, placement.Weight, a.Micro})
					continue
				}
				out = append(out, a)
			}
			at[len(row)] = len(out)
			for k, o := range t.Overlaps {
				if o.Rank == r {
					t.Overlaps[k] = Overlap{Rank: r, At: at[o.At], Len: at[o.At+o.Len+1] - at[o.At+1]}
				}
			}
			t.Rows[r] = out
		}
		if _, err := Validate(t); err != nil {
			return nil, fmt.Errorf("full backwards as I and W: %w", err) // cannot happen: W right after its I
		}
		which := "stage " + mixed[0] + " runs"
		if len(mixed) > 1 {
			which = "stages " + strings.Join(mixed, ", ") + " run"
		}
		rd.Notes = append(rd.Notes, which+" full backwards (B) for some micro-batches and input and weight gradients (I, W) for others: each of their full backwards imported as its I and W back to back")
	}
	rd.Table = t
	return rd, nil
}

// commKey is a communication or compute action without its rank.
type commKey struct {
	op           string
	stage, micro int
}

// transfers are the sends and receives PyTorch's runtime needs for the
// compute actions of sum: a forward of stage s feeds s+1, a full backward
// or input gradient of s feeds s−1, wherever the two stages are on
// different ranks. It maps every such SEND and RECV to the rank that runs it.
func transfers(sum *Summary) map[commKey]int {
	need := map[commKey]int{}
	for s := range sum.Stages {
		for m := range sum.MicroBatches {
			if s+1 < sum.Stages && sum.StageRank[s+1] != sum.StageRank[s] {
				need[commKey{OpSendF, s, m}] = sum.StageRank[s]
				need[commKey{OpRecvF, s + 1, m}] = sum.StageRank[s+1]
				need[commKey{OpSendB, s + 1, m}] = sum.StageRank[s+1]
				need[commKey{OpRecvB, s, m}] = sum.StageRank[s]
			}
		}
	}
	return need
}

// checkComms checks the sends and receives of a compute_comms file: each
// one needed, once, on its rank (transfers), none missing, and the ranks'
// orders free of deadlock (simulate).
func checkComms(rows [][]Cell, sum *Summary, kindOfOp map[string]placement.Kind) error {
	need := transfers(sum)
	seen := map[commKey]bool{}
	for r, row := range rows {
		for i, c := range row {
			if !c.IsComm() {
				continue
			}
			k := commKey{c.Op, c.Stage, c.Micro}
			if _, ok := need[k]; !ok {
				return fmt.Errorf("rank %d, action %d (%s): no transfer needs it (sends and receives run between adjacent stages on different ranks: F to the next stage, B or I to the previous)", r, i+1, c)
			}
			if seen[k] {
				return fmt.Errorf("rank %d, action %d (%s): appears twice", r, i+1, c)
			}
			seen[k] = true
		}
	}
	var missing []commKey
	for k := range need {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		slices.SortFunc(missing, func(a, b commKey) int {
			if a.micro != b.micro {
				return a.micro - b.micro
			}
			if a.stage != b.stage {
				return a.stage - b.stage
			}
			return strings.Compare(a.op, b.op)
		})
		k := missing[0]
		return fmt.Errorf("rank %d has no %s: a compute_comms file holds every send and receive between stages on different ranks (%d missing)",
			need[k], Cell{Stage: k.stage, Op: k.op, Micro: k.micro}, len(missing))
	}
	return simulate(rows, sum, kindOfOp)
}

// simulate runs every rank's cells in lockstep as PyTorch's
// _simulate_comms_compute does: a rank runs its next cell when it is ready
// (a forward after its input arrived — the receive, or the previous
// stage's forward on the same rank —, a full backward or input gradient
// after its gradient arrived likewise, a SEND after its compute, a RECV
// after the peer's SEND, a weight gradient at once, an OVERLAP_F_B when
// both of its actions are). UNSHARD, RESHARD and REDUCE_GRAD are skipped.
// No rank able to run while some have cells left is a deadlock.
func simulate(rows [][]Cell, sum *Summary, kindOfOp map[string]placement.Kind) error {
	queue := make([][]Cell, len(rows))
	pos := make([][]int, len(rows)) // the cell's position in its row, for messages
	for r, row := range rows {
		for i, c := range row {
			if opKinds[c.Op] != "other" {
				queue[r] = append(queue[r], c)
				pos[r] = append(pos[r], i+1)
			}
		}
	}
	done := make([]map[commKey]bool, len(rows))
	for r := range done {
		done[r] = map[commKey]bool{}
	}
	key := func(c Cell) commKey {
		if k, ok := kindOfOp[c.Op]; ok {
			return commKey{string(k), c.Stage, c.Micro}
		}
		return commKey{c.Op, c.Stage, c.Micro}
	}
	last := sum.Stages - 1
	var ready func(r int, c Cell) bool
	ready = func(r int, c Cell) bool {
		s, m := c.Stage, c.Micro
		switch c.Op {
		case OpOverlapFB:
			return ready(r, c.Sub[0]) && ready(r, c.Sub[1])
		case OpSendF:
			return done[r][commKey{string(placement.Forward), s, m}]
		case OpSendB:
			return done[r][commKey{string(placement.Input), s, m}] || done[r][commKey{string(placement.Backward), s, m}]
		case OpRecvF:
			return done[sum.StageRank[s-1]][commKey{OpSendF, s - 1, m}]
		case OpRecvB:
			return done[sum.StageRank[s+1]][commKey{OpSendB, s + 1, m}]
		}
		switch kindOfOp[c.Op] {
		case placement.Forward:
			return s == 0 || done[r][commKey{OpRecvF, s, m}] || done[r][commKey{string(placement.Forward), s - 1, m}]
		case placement.Input, placement.Backward:
			return s == last || done[r][commKey{OpRecvB, s, m}] ||
				done[r][commKey{string(placement.Input), s + 1, m}] || done[r][commKey{string(placement.Backward), s + 1, m}]
		}
		return true // W
	}
	for {
		progress, left := false, false
		for r := range queue {
			if len(queue[r]) == 0 {
				continue
			}
			c := queue[r][0]
			if !ready(r, c) {
				left = true
				continue
			}
			for _, x := range append([]Cell{c}, c.Sub...) {
				done[r][key(x)] = true
			}
			queue[r], pos[r] = queue[r][1:], pos[r][1:]
			progress = true
			left = left || len(queue[r]) > 0
		}
		if !left {
			return nil
		}
		if !progress {
			var stuck []string
			for r := range queue {
				if len(queue[r]) > 0 {
					stuck = append(stuck, fmt.Sprintf("rank %d at action %d (%s)", r, pos[r][0], queue[r][0]))
				}
			}
			return fmt.Errorf("the sends and receives deadlock (PyTorch would wait forever): %s", strings.Join(stuck, ", "))
		}
	}
}
