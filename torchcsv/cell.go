package torchcsv

import (
	"fmt"
	"strconv"
	"strings"
)

// PyTorch's action types as a CSV writes them (torch.distributed.pipelining's
// _ComputationType), beside the compute types of Action: the older name of
// a full backward, communication, FSDP and gradient reduction actions, and
// the container of overlapped actions.
const (
	OpForward    = "F"
	OpBackward   = "B" // full backward; the input gradient in the older naming
	OpInput      = "I"
	OpWeight     = "W"
	OpBackwardBW = "BW" // the older naming's full backward
	OpSendF      = "SEND_F"
	OpRecvF      = "RECV_F"
	OpSendB      = "SEND_B"
	OpRecvB      = "RECV_B"
	OpUnshard    = "UNSHARD"
	OpReshard    = "RESHARD"
	OpReduceGrad = "REDUCE_GRAD"
	OpOverlapFB  = "OVERLAP_F_B"
)

// opKinds: what each type is.
var opKinds = map[string]string{
	OpForward: "compute", OpBackward: "compute", OpInput: "compute", OpWeight: "compute", OpBackwardBW: "compute",
	OpSendF: "comm", OpRecvF: "comm", OpSendB: "comm", OpRecvB: "comm",
	OpUnshard: "other", OpReshard: "other", OpReduceGrad: "other",
}

// Cell is one cell of either of PyTorch's formats: stage Stage runs Op for
// micro-batch Micro (-1 where the cell names none: UNSHARD, RESHARD,
// REDUCE_GRAD); an OVERLAP_F_B cell holds its actions in Sub and no stage.
type Cell struct {
	Stage int
	Op    string
	Micro int
	Sub   []Cell
}

// String is the cell as PyTorch writes it: "2F0", "3SEND_B1", "1UNSHARD",
// "(0F7;7B3)OVERLAP_F_B".
func (c Cell) String() string {
	if c.Op == OpOverlapFB {
		parts := make([]string, len(c.Sub))
		for i, s := range c.Sub {
			parts[i] = s.String()
		}
		return "(" + strings.Join(parts, ";") + ")" + OpOverlapFB
	}
	s := strconv.Itoa(c.Stage) + c.Op
	if c.Micro >= 0 {
		s += strconv.Itoa(c.Micro)
	}
	return s
}

// IsComm says whether the cell is a send or a receive.
func (c Cell) IsComm() bool { return opKinds[c.Op] == "comm" }

const typesHelp = "F, B, I or W (nor one of BW, SEND_F, RECV_F, SEND_B, RECV_B, UNSHARD, RESHARD, REDUCE_GRAD, (…;…)OVERLAP_F_B)"

// ParseCell reads one non-empty cell of either format. Spaces around it
// are ignored. Errors are one line naming the cell.
func ParseCell(cell string) (Cell, error) {
	s := strings.TrimSpace(cell)
	if strings.HasPrefix(s, "(") {
		end := strings.IndexByte(s, ')')
		if strings.Count(s, "(") > 1 {
			return Cell{}, fmt.Errorf("action %q: an OVERLAP_F_B inside an OVERLAP_F_B", cell)
		}
		if end < 0 {
			return Cell{}, fmt.Errorf("action %q: \"(\" without \")\": want (0F1;1B0)OVERLAP_F_B", cell)
		}
		if typ := s[end+1:]; typ != OpOverlapFB {
			return Cell{}, fmt.Errorf("action %q: type %q after the parentheses: only OVERLAP_F_B holds actions in parentheses", cell, typ)
		}
		c := Cell{Stage: -1, Op: OpOverlapFB, Micro: -1}
		for _, part := range strings.Split(s[1:end], ";") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			sub, err := ParseCell(part)
			if err != nil {
				return Cell{}, fmt.Errorf("action %q: %w", cell, err)
			}
			if opKinds[sub.Op] != "compute" {
				return Cell{}, fmt.Errorf("action %q: %s is not a compute action (F, B, I, W): OVERLAP_F_B overlaps compute", cell, sub)
			}
			c.Sub = append(c.Sub, sub)
		}
		if len(c.Sub) != 2 {
			return Cell{}, fmt.Errorf("action %q: OVERLAP_F_B holds %d actions: want two, a forward and a backward (0F1;1B0)", cell, len(c.Sub))
		}
		return c, nil
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	j := i
	for j < len(s) && (s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] == '_') {
		j++
	}
	typ, micro := s[i:j], s[j:]
	kind := opKinds[typ]
	switch {
	case i == 0:
		return Cell{}, fmt.Errorf("action %q: want STAGE TYPE MICRO-BATCH, e.g. 0F1", cell)
	case typ == "":
		return Cell{}, fmt.Errorf("action %q: no type (want F, B, I or W)", cell)
	case typ == OpOverlapFB:
		return Cell{}, fmt.Errorf("action %q: OVERLAP_F_B holds its actions in parentheses, e.g. (0F1;1B0)OVERLAP_F_B", cell)
	case kind == "":
		return Cell{}, fmt.Errorf("action %q: type %q is not %s", cell, typ, typesHelp)
	case micro == "" && kind != "other":
		return Cell{}, fmt.Errorf("action %q: no micro-batch", cell)
	case strings.IndexFunc(micro, func(r rune) bool { return r < '0' || r > '9' }) >= 0:
		return Cell{}, fmt.Errorf("action %q: micro-batch %q is not a number", cell, micro)
	case i > maxDigits || len(micro) > maxDigits:
		return Cell{}, fmt.Errorf("action %q: numbers of more than %d digits", cell, maxDigits)
	}
	c := Cell{Op: typ, Micro: -1}
	c.Stage, _ = strconv.Atoi(s[:i])
	if micro != "" {
		c.Micro, _ = strconv.Atoi(micro)
	}
	return c, nil
}

// splitCells splits a CSV into rows of non-empty cells (quotes and spaces
// around a cell dropped), as Parse does.
func splitCells(data []byte) [][]string {
	text := strings.TrimSuffix(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	var rows [][]string
	for _, line := range strings.Split(text, "\n") {
		row := []string{}
		for _, cell := range strings.Split(line, ",") {
			cell = strings.TrimSpace(cell)
			if len(cell) >= 2 && cell[0] == '"' && cell[len(cell)-1] == '"' {
				cell = strings.TrimSpace(cell[1 : len(cell)-1])
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	return rows
}

// CommsTable is a schedule in PyTorch's compute_comms format: every rank's
// actions, compute and communication, in order.
type CommsTable struct {
	Rows [][]Cell
}

// ParseComms reads a CSV of either of PyTorch's forms cell by cell
// (ParseCell), one row per line, empty cells dropped: the syntax only
// (Read checks the schedule). Errors name the line and the cell.
func ParseComms(data []byte) (*CommsTable, error) {
	t := &CommsTable{}
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
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// Marshal writes the table as CSV, one line per rank (as Table.Marshal).
func (t *CommsTable) Marshal() []byte {
	var b strings.Builder
	for _, row := range t.Rows {
		for i, c := range row {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(c.String())
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}
