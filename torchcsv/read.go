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
	// FSDP are the file's UNSHARD, RESHARD and REDUCE_GRAD cells, each
	// with the compute it precedes (ImportFSDP reads them as part of
	// the schedule).
	FSDP []FSDPCell
}

// Read reads everything PyTorch's _dump_csv writes, in either form:
//
//   - compute_only and compute_comms (any SEND_F, RECV_F, SEND_B, RECV_B
//     cell): the sends and receives are checked (each transfer PyTorch's
//     runtime needs has its SEND on the sender's rank and its RECV on the
//     receiver's, no other, in an order that does not deadlock as PyTorch's
//     runtime runs it: receives posted early or deferred, a compute
//     waiting for its input's send; checkOrder) and set aside;
//   - UNSHARD, RESHARD and REDUCE_GRAD are checked for their rank and
//     kept in Reading.FSDP with the compute each precedes (ImportFSDP);
//   - (…;…)OVERLAP_F_B becomes its two actions back to back;
//   - B and BW by opt.Naming; a stage that runs full backwards for some
//     micro-batches and input and weight gradients for others (DualPipeV)
//     gets each full backward as its I and W back to back.
//
// Each of these that applies adds a note. The table passes Validate.
func Read(data []byte, opt ReadOptions) (*Reading, error) {
	ct, err := ParseComms(data)
	if err != nil {
		return nil, err
	}
	rows := ct.Rows
	rd := &Reading{Format: FormatComputeOnly}
	naming, err := rd.naming(rows, opt.Naming)
	if err != nil {
		return nil, err
	}
	kindOfOp := map[string]placement.Kind{OpForward: placement.Forward, OpWeight: placement.Weight,
		OpBackward: placement.Backward, OpInput: placement.Input}
	if naming == NamingOld {
		kindOfOp[OpBackward], kindOfOp[OpBackwardBW] = placement.Input, placement.Backward
	}
	t, n, err := computeTable(rows, kindOfOp, opt.KeepOverlaps)
	if err != nil {
		return nil, err
	}
	sum, err := Validate(t)
	if err != nil {
		return nil, err
	}
	if err := checkSetAside(rows, sum); err != nil {
		return nil, err
	}
	if n.comms > 0 {
		rd.Format = FormatComputeComms
		if err := checkComms(rows, sum, kindOfOp); err != nil {
			return nil, err
		}
		rd.Notes = append(rd.Notes, fmt.Sprintf("compute_comms format: %d sends and receives checked (each SEND with its RECV on the peer rank, no deadlock) and set aside", n.comms))
	}
	if n.others > 0 {
		rd.FSDP = fsdpCells(rows, kindOfOp)
		rd.Notes = append(rd.Notes, fmt.Sprintf("%d UNSHARD, RESHARD or REDUCE_GRAD action(s) (FSDP and gradient reduction) read as part of the schedule", n.others))
	}
	switch {
	case n.overlaps > 0 && opt.KeepOverlaps:
		rd.Notes = append(rd.Notes, fmt.Sprintf("%d OVERLAP_F_B action(s) imported as overlapped pairs, each taking the overlap time", n.overlaps))
	case n.overlaps > 0:
		rd.Notes = append(rd.Notes, fmt.Sprintf("%d OVERLAP_F_B action(s) imported as their two actions back to back (each runs for its own time; give --overlap-time to import them as overlapped pairs)", n.overlaps))
	}
	if err := rd.splitMixed(t, sum); err != nil {
		return nil, err
	}
	rd.Table = t
	return rd, nil
}

// naming is the naming the rows are read with: naming itself, or with
// NamingAuto the one their actions show (a note says why where old).
func (rd *Reading) naming(rows [][]Cell, naming Naming) (Naming, error) {
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
	switch naming {
	case NamingAuto:
		switch {
		case has[OpBackwardBW] && has[OpInput]:
			return "", fmt.Errorf("the file has both BW (%s, PyTorch's older name of a full backward) and I (the current name of an input gradient): one file uses one naming", firstBW)
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
			return "", fmt.Errorf("%s: BW is PyTorch's older name of a full backward, but --torch-naming is current (B full backward, I input gradient)", firstBW)
		}
	case NamingOld:
		if has[OpInput] {
			return "", fmt.Errorf("the file has I, the current name of an input gradient, but --torch-naming is old (B input gradient, BW full backward)")
		}
	default:
		return "", fmt.Errorf("naming %q: want one of %s", naming, strings.Join(Namings(), ", "))
	}
	return naming, nil
}

// actionCounts count the actions a reading sets aside or folds.
type actionCounts struct{ overlaps, others, comms int }

// computeTable is the compute actions of the rows, an OVERLAP_F_B kept as
// a pair (keep) or as its two actions back to back; sends, receives and
// FSDP's actions counted and set aside.
func computeTable(rows [][]Cell, kindOfOp map[string]placement.Kind, keep bool) (*Table, actionCounts, error) {
	action := func(c Cell) Action { return Action{Stage: c.Stage, Kind: kindOfOp[c.Op], Micro: c.Micro} }
	t := &Table{}
	var n actionCounts
	for r, row := range rows {
		out := []Action{}
		for _, c := range row {
			switch {
			case c.Op == OpOverlapFB && keep:
				n.overlaps++
				f, b := action(c.Sub[0]), action(c.Sub[1])
				if f.Kind != placement.Forward {
					f, b = b, f
				}
				if f.Kind != placement.Forward || b.Kind != placement.Backward {
					return nil, n, fmt.Errorf("rank %d: %s: an overlapped pair is a forward and a full backward (B in the current naming)", r, c)
				}
				t.Overlaps = append(t.Overlaps, Overlap{Rank: r, At: len(out), Len: 1})
				out = append(out, f, b)
			case c.Op == OpOverlapFB:
				n.overlaps++
				for _, x := range c.Sub {
					out = append(out, action(x))
				}
			case c.IsComm():
				n.comms++
			case opKinds[c.Op] == "other":
				n.others++
			default:
				out = append(out, action(c))
			}
		}
		t.Rows = append(t.Rows, out)
	}
	return t, n, nil
}

// checkSetAside checks that every cell's stage is on its rank (PyTorch's
// validator maps every action's stage), the set-aside ones included.
func checkSetAside(rows [][]Cell, sum *Summary) error {
	for r, row := range rows {
		for i, c := range row {
			if c.Op == OpOverlapFB || opKinds[c.Op] == "compute" {
				continue
			}
			if c.Stage >= sum.Stages {
				return fmt.Errorf("rank %d, action %d (%s): no stage %d (stages are 0..%d)", r, i+1, c, c.Stage, sum.Stages-1)
			}
			if c.Micro >= sum.MicroBatches {
				return fmt.Errorf("rank %d, action %d (%s): no micro-batch %d (micro-batches are 0..%d)", r, i+1, c, c.Micro, sum.MicroBatches-1)
			}
			if got := sum.StageRank[c.Stage]; got != r {
				return fmt.Errorf("rank %d, action %d (%s): stage %d is on rank %d: each stage runs on one rank", r, i+1, c, c.Stage, got)
			}
		}
	}
	return nil
}

// splitMixed turns every full backward of a stage that also runs input
// and weight gradients (DualPipeV) into its I and W back to back, with a
// note.
func (rd *Reading) splitMixed(t *Table, sum *Summary) error {
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
			return fmt.Errorf("full backwards as I and W: %w", err) // cannot happen: W right after its I
		}
		which := "stage " + mixed[0] + " runs"
		if len(mixed) > 1 {
			which = "stages " + strings.Join(mixed, ", ") + " run"
		}
		rd.Notes = append(rd.Notes, which+" full backwards (B) for some micro-batches and input and weight gradients (I, W) for others: each of their full backwards imported as its I and W back to back")
	}
	return nil
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
// orders free of deadlock as PyTorch's runtime runs them (checkOrder).
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
	return checkOrder(rows, sum, kindOfOp)
}
