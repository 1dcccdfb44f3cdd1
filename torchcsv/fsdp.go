package torchcsv

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tessel-pp/tessel/fsdpplan"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/rule/fsdp"
	"github.com/tessel-pp/tessel/rule/rules"
	"github.com/tessel-pp/tessel/schedule"
)

// FSDPCell is an UNSHARD, RESHARD or REDUCE_GRAD cell of a file as Read
// finds it: its rank, the cell, and the compute action it precedes in its
// row (Last: none, the row's end).
type FSDPCell struct {
	Rank   int
	Cell   Cell
	Before Action
	Last   bool
}

// fsdpCells lists the rows' FSDP cells with the compute each precedes.
func fsdpCells(rows [][]Cell, kindOfOp map[string]placement.Kind) []FSDPCell {
	var out []FSDPCell
	for r, row := range rows {
		var pending []int
		for _, c := range row {
			switch {
			case opKinds[c.Op] == "other":
				out = append(out, FSDPCell{Rank: r, Cell: c, Last: true})
				pending = append(pending, len(out)-1)
			case c.Op == OpOverlapFB || opKinds[c.Op] == "compute":
				x := c
				if c.Op == OpOverlapFB {
					x = c.Sub[0]
				}
				for _, i := range pending {
					out[i].Before, out[i].Last = Action{Stage: x.Stage, Kind: kindOfOp[x.Op], Micro: x.Micro}, false
				}
				pending = nil
			}
		}
	}
	return out
}

// fsdpStages maps the chain's stage ids to the blocks that run them.
func fsdpBlock(stages []Stage, a Action) int {
	if a.Stage < 0 || a.Stage >= len(stages) {
		return -1
	}
	st := stages[a.Stage]
	switch a.Kind {
	case placement.Forward:
		return st.Forward
	case placement.Backward:
		if st.Backward >= 0 {
			return st.Backward
		}
		return st.Input // a full backward imported as its I and W
	case placement.Input:
		return st.Input
	case placement.Weight:
		return st.Weight
	}
	return -1
}

// FSDPPlan is the file's FSDP actions (rd.FSDP) as a plan of the imported
// schedule s for model m: each action in the gap before the compute it
// precedes in its row. Stages of the file that m does not shard are an
// error.
func FSDPPlan(rd *Reading, s *schedule.Schedule, m fsdp.Model) (fsdp.Plan, error) {
	stages, err := Chain(s.Placement)
	if err != nil {
		return fsdp.Plan{}, err
	}
	index := map[string]int{}
	for i, st := range m.Stages {
		index[st.Forward] = i
	}
	ord := schedule.Orders(s)
	pos := make([]map[schedule.Ref]int, len(ord))
	for d, o := range ord {
		pos[d] = map[schedule.Ref]int{}
		for j, r := range o {
			pos[d][r] = j
		}
	}
	plan := fsdp.Plan{Ranks: make([][]fsdp.Op, len(ord))}
	for _, fc := range rd.FSDP {
		if fc.Cell.Stage >= len(stages) || fc.Rank >= len(ord) {
			return fsdp.Plan{}, fmt.Errorf("rank %d: %s: no such stage", fc.Rank, fc.Cell)
		}
		fwd := s.Placement.Blocks[stages[fc.Cell.Stage].Forward].ID
		st, ok := index[fwd]
		if !ok {
			return fsdp.Plan{}, fmt.Errorf("rank %d: %s: stage %d (%s) is not sharded in the FSDP model", fc.Rank, fc.Cell, fc.Cell.Stage, fwd)
		}
		gap := len(ord[fc.Rank])
		if !fc.Last {
			b := fsdpBlock(stages, fc.Before)
			j, ok := pos[fc.Rank][schedule.Ref{Block: b, Micro: fc.Before.Micro}]
			if b < 0 || !ok {
				return fsdp.Plan{}, fmt.Errorf("rank %d: %s: the compute after it (%s) is not in the schedule", fc.Rank, fc.Cell, fc.Before)
			}
			gap = j
		}
		plan.Ranks[fc.Rank] = append(plan.Ranks[fc.Rank], fsdp.Op{Kind: fsdp.Kind(fc.Cell.Op), Stage: st, Gap: gap})
	}
	return plan, nil
}

// FSDPFileModel is the model a file's own FSDP actions imply where no
// costs are given: the stages with any such action sharded, every cost 0,
// max_active_stages the most stages the file holds at once on a rank.
// Checking the file against it (ImportFSDP) checks what the file alone
// says: every compute of a sharded stage runs gathered, each stage
// reduces its gradients once after its last weight gradient, and is
// released by the end.
func FSDPFileModel(rd *Reading, s *schedule.Schedule) (fsdp.Model, error) {
	stages, err := Chain(s.Placement)
	if err != nil {
		return fsdp.Model{}, err
	}
	m := fsdp.Model{Per: fsdp.PerIteration, MaxActive: 1}
	seen := map[int]bool{}
	held := map[int]map[int]bool{}
	for _, fc := range rd.FSDP {
		if fc.Cell.Stage >= len(stages) {
			return fsdp.Model{}, fmt.Errorf("rank %d: %s: no such stage", fc.Rank, fc.Cell)
		}
		if !seen[fc.Cell.Stage] {
			seen[fc.Cell.Stage] = true
			m.Stages = append(m.Stages, fsdp.Stage{Forward: s.Placement.Blocks[stages[fc.Cell.Stage].Forward].ID})
		}
		if held[fc.Rank] == nil {
			held[fc.Rank] = map[int]bool{}
		}
		switch fc.Cell.Op {
		case OpUnshard:
			held[fc.Rank][fc.Cell.Stage] = true
		case OpReshard:
			delete(held[fc.Rank], fc.Cell.Stage)
		}
		m.MaxActive = max(m.MaxActive, len(held[fc.Rank]))
	}
	return m, nil
}

// ImportFSDP reads the file's FSDP actions as part of the imported
// schedule s: with m nil, against FSDPFileModel (costs 0); with a model,
// against its costs (and its max_active_stages), the computes re-timed
// to wait for their gathers. The result is checked (fsdpplan.Verify).
func ImportFSDP(rd *Reading, s *schedule.Schedule, m *fsdp.Model) (*fsdpplan.Schedule, error) {
	if len(rd.FSDP) == 0 {
		return nil, errors.New("the file has no UNSHARD, RESHARD or REDUCE_GRAD actions")
	}
	var model fsdp.Model
	if m != nil {
		model = *m
	} else {
		var err error
		if model, err = FSDPFileModel(rd, s); err != nil {
			return nil, err
		}
	}
	plan, err := FSDPPlan(rd, s, model)
	if err != nil {
		return nil, err
	}
	return fsdpplan.Time(s, model, plan)
}

// ExportFSDP is the compute_comms form of fs's compute schedule (receives
// as opt says) with its FSDP actions in their places: each in its gap,
// just before the compute that follows it (after that compute's
// receives), the last gap's at the row's end. PyTorch's compute_comms
// loader runs them as written. fs is checked first (fsdpplan.Verify).
func ExportFSDP(fs *fsdpplan.Schedule, opt CommsOptions) (*CommsTable, RecvOrder, error) {
	if err := fsdpplan.Verify(fs); err != nil {
		return nil, "", err
	}
	ct, order, err := ExportCommsWith(fs.Compute, opt)
	if err != nil {
		return nil, "", err
	}
	stages, err := Chain(fs.Compute.Placement)
	if err != nil {
		return nil, "", err
	}
	torchStage := map[string]int{}
	for i, st := range stages {
		torchStage[fs.Compute.Placement.Blocks[st.Forward].ID] = i
	}
	cell := func(op fsdp.Op) Cell {
		return Cell{Stage: torchStage[fs.Model.Stages[op.Stage].Forward], Op: string(op.Kind), Micro: -1}
	}
	for r, row := range ct.Rows {
		if r >= len(fs.Plan.Ranks) {
			break
		}
		ops := fs.Plan.Ranks[r]
		out := make([]Cell, 0, len(row)+len(ops))
		j, k := 0, 0
		for _, c := range row {
			if opKinds[c.Op] == "compute" {
				for ; k < len(ops) && ops[k].Gap <= j; k++ {
					out = append(out, cell(ops[k]))
				}
				j++
			}
			out = append(out, c)
		}
		for ; k < len(ops); k++ {
			out = append(out, cell(ops[k]))
		}
		ct.Rows[r] = out
	}
	if _, err := ValidateComms(ct); err != nil {
		return nil, "", fmt.Errorf("exported table fails PyTorch's rules: %w", err)
	}
	return ct, order, nil
}

// FSDPText is the lines tessel prints about an FSDP schedule: its
// makespan (and the lower bound of its spec, which shards stages:
// rules.LowerBounds, the rule's argument fsdp.Bound among them) and peaks
// beside the compute schedule's.
func FSDPText(fs *fsdpplan.Schedule) string {
	m := schedule.Measure(fs.Compute)
	var b strings.Builder
	counts := map[fsdp.Kind]int{}
	for _, ops := range fs.Plan.Ranks {
		for _, op := range ops {
			counts[op.Kind]++
		}
	}
	// fs is verified: its spec's model resolves on its placement.
	lb := fmt.Sprintf(" (lower bound %d)", rules.LowerBounds(fs.Compute.Spec).Makespan)
	fmt.Fprintf(&b, "fsdp: %d sharded stage(s), max_active_stages %d, gathered per %s; %d UNSHARD, %d RESHARD, %d REDUCE_GRAD; makespan %d%s (computes end at %d), peak memory %s with gathered parameters, verified\n",
		len(fs.Model.Stages), fs.Model.MaxActive, fs.Model.Per, counts[fsdp.Unshard], counts[fsdp.Reshard], counts[fsdp.ReduceGrad],
		fs.Makespan, lb, m.Makespan, intList(fs.Peak))
	return b.String()
}

func intList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// FSDPOptions say where ExportFSDPWith puts a sharded schedule's actions.
type FSDPOptions struct {
	Model fsdp.Model
	// Lookahead is "tessel" (or ""): fsdp.Search's placement, compared
	// with PyTorch's "full" and "auto"; or PyTorch's own placement with
	// unshard_lookahead "full", "auto" or a list of distances per rank.
	Lookahead string
	Lowering  CommsOptions
}

// FSDPExport is a sharded schedule exported: the compute_comms table with
// its FSDP actions, the schedule they belong to, where its receives are,
// and with tessel's placement the placements compared.
type FSDPExport struct {
	Table    *CommsTable
	Schedule *fsdpplan.Schedule
	Order    RecvOrder
	Compared []fsdpplan.Placed
}

// ExportFSDPWith places the FSDP actions on the verified schedule s as
// opt says and exports it (ExportFSDP).
func ExportFSDPWith(ctx context.Context, s *schedule.Schedule, opt FSDPOptions) (*FSDPExport, error) {
	out := &FSDPExport{}
	switch opt.Lookahead {
	case "", "tessel":
		res, err := fsdpplan.Search(ctx, s, opt.Model, fsdpplan.Options{})
		if err != nil {
			return nil, err
		}
		out.Schedule, out.Compared = res.Best, res.Compared
	default:
		l, err := fsdp.ParseLookahead(opt.Lookahead)
		if err != nil {
			return nil, fmt.Errorf("unshard lookahead: %w (or tessel)", err)
		}
		if out.Schedule, err = fsdpplan.PyTorch(s, opt.Model, l); err != nil {
			return nil, err
		}
	}
	var err error
	if out.Table, out.Order, err = ExportFSDP(out.Schedule, opt.Lowering); err != nil {
		return nil, err
	}
	return out, nil
}

// Text is FSDPText and, with tessel's placement, one line comparing it
// with PyTorch's on the same schedule and costs.
func (e *FSDPExport) Text() string {
	t := FSDPText(e.Schedule)
	if len(e.Compared) > 0 {
		parts := make([]string, len(e.Compared))
		for i, c := range e.Compared {
			who := "PyTorch " + strconvQuote(c.Name)
			if c.Name == "tessel" {
				who = "tessel"
			}
			parts[i] = fmt.Sprintf("%s makespan %d, peak %d", who, c.Makespan, c.Peak)
		}
		t += "fsdp placements on the same costs: " + strings.Join(parts, "; ") + "\n"
	}
	return t
}

func strconvQuote(s string) string { return `"` + s + `"` }
