// Package torchcsv reads and writes the compute-only CSV of PyTorch's
// pipelining schedules (torch.distributed.pipelining, PyTorch ≥ 2.6), so
// that a schedule found by tessel reaches the trainers that load schedules
// from a file, and a schedule of PyTorch (its built-in ones, dumped, or a
// user's own) can be verified, rendered, simulated and compared here.
//
// The format: no header; row r holds pipeline rank r's actions in the
// order the rank runs them; each cell is one action `<stage><type><micro>`
// with a global stage id and a type F (forward), B (full backward), I
// (input gradient) or W (weight gradient): "0F1", "3W0". An empty cell is
// an idle step. Only the order matters, not the times.
//
// Export applies to placements that are one chain of stages (Chain):
// every block on one device, the forward blocks one chain, each stage
// trained by a backward block or by an input and a weight block. Validate
// applies the rules of PyTorch's validator to a table. Import builds a
// placement and a verified schedule from a table, with stage times and
// memory given by the caller (ImportOptions).
//
// Read reads everything PyTorch writes, the "compute_comms" form with its
// sends and receives (checked, then set aside), OVERLAP_F_B, BW and the
// older B/W naming included; ExportComms writes the compute_comms form
// (AddSendRecv, PyTorch's lowering; ValidateComms, its checks); Titan the
// settings torchtitan needs to build the stages a schedule runs.
package torchcsv

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/placement"
)

// Action is one compute action: stage Stage runs Kind for micro-batch
// Micro. Kind is forward, backward (PyTorch's full backward, B), input (I)
// or weight (W).
type Action struct {
	Stage int
	Kind  placement.Kind
	Micro int
}

// String is the action's cell: the stage, the upper case of the kind's
// letter (placement.KindInfo.Letter), the micro-batch: "2I3".
func (a Action) String() string {
	return strconv.Itoa(a.Stage) + string(typeLetter(a.Kind)) + strconv.Itoa(a.Micro)
}

// typeLetter is PyTorch's action type of a kind.
func typeLetter(k placement.Kind) byte {
	in, _ := k.Info()
	return in.Letter - 'a' + 'A'
}

// kindOf is the kind of PyTorch's action type c, if any.
func kindOf(c byte) (placement.Kind, bool) {
	for _, k := range placement.Kinds() {
		if typeLetter(k) == c {
			return k, true
		}
	}
	return "", false
}

// maxDigits bounds the stage and micro-batch numbers of a cell, far beyond
// any real pipeline, so that no number overflows.
const maxDigits = 9

// ParseAction reads one cell, "2I3". Spaces around it are ignored.
func ParseAction(cell string) (Action, error) {
	s := strings.TrimSpace(cell)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	j := i
	for j < len(s) && (s[j] < '0' || s[j] > '9') {
		j++
	}
	typ, micro := s[i:j], s[j:]
	switch {
	case i == 0:
		return Action{}, fmt.Errorf("action %q: want STAGE TYPE MICRO-BATCH, e.g. 0F1", cell)
	case typ == "":
		return Action{}, fmt.Errorf("action %q: no type (want F, B, I or W)", cell)
	case len(typ) != 1:
		return Action{}, fmt.Errorf("action %q: type %q is not F, B, I or W (communication actions belong to the compute_comms format)", cell, typ)
	case micro == "":
		return Action{}, fmt.Errorf("action %q: no micro-batch", cell)
	case strings.IndexFunc(micro, func(r rune) bool { return r < '0' || r > '9' }) >= 0:
		return Action{}, fmt.Errorf("action %q: micro-batch %q is not a number", cell, micro)
	case i > maxDigits || len(micro) > maxDigits:
		return Action{}, fmt.Errorf("action %q: numbers of more than %d digits", cell, maxDigits)
	}
	k, ok := kindOf(typ[0])
	if !ok {
		return Action{}, fmt.Errorf("action %q: type %q is not F, B, I or W", cell, typ)
	}
	stage, _ := strconv.Atoi(s[:i])
	m, _ := strconv.Atoi(micro)
	return Action{Stage: stage, Kind: k, Micro: m}, nil
}

// Table is a compute-only schedule: Rows[r] is rank r's actions, in the
// order it runs them. Idle steps (empty cells) are not kept: only the
// order matters.
type Table struct {
	Rows [][]Action
	// Overlaps are the OVERLAP_F_B actions kept as overlapped pairs
	// (none: every action runs alone).
	Overlaps []Overlap
}

// Parse reads a CSV: one line per rank (an empty line is a rank without
// actions), cells separated by commas, optionally quoted; empty cells are
// idle steps and dropped. It checks the syntax only; Validate checks the
// schedule. Errors name the line and the cell.
func Parse(data []byte) (*Table, error) {
	text := strings.TrimSuffix(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	t := &Table{}
	actions := 0
	for n, line := range strings.Split(text, "\n") {
		row := []Action{}
		for c, cell := range strings.Split(line, ",") {
			cell = strings.TrimSpace(cell)
			if len(cell) >= 2 && cell[0] == '"' && cell[len(cell)-1] == '"' {
				cell = strings.TrimSpace(cell[1 : len(cell)-1])
			}
			if cell == "" {
				continue
			}
			a, err := ParseAction(cell)
			if err != nil {
				return nil, fmt.Errorf("line %d (rank %d), cell %d: %w", n+1, n, c+1, err)
			}
			row = append(row, a)
		}
		t.Rows = append(t.Rows, row)
		actions += len(row)
	}
	if actions == 0 {
		return nil, fmt.Errorf("no actions: want one line of actions per rank")
	}
	return t, nil
}

// Marshal writes the table as CSV: one line per rank, its actions in
// order, no empty cells (see the package doc). Same table, same bytes.
func (t *Table) Marshal() []byte {
	var b bytes.Buffer
	for r, row := range t.Rows {
		at := t.overlapsOf(r)
		for i := 0; i < len(row); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if n, ok := at[i]; ok {
				b.WriteString(overlapCell(row, i).String())
				i += n
				continue
			}
			b.WriteString(row[i].String())
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}
