package compare

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// PaperModel is one row of the paper's Table II (§VI-B): a model, its
// placement, the settings of our Tessel search for it and the paper's
// bubble rates as the number of micro-batches grows, on 4 devices.
type PaperModel struct {
	Model, Placement string
	NR, Memory       int
	Paper            [4]string // 1F1B, Chimera-direct, 1F1B+, Tessel
}

// PaperTableII lists the paper's Table II (a new slice each call).
func PaperTableII() []PaperModel {
	return []PaperModel{
		{"GPT", "m-shape", 6, 6, [4]string{"0%", "20%", "25%", "0%"}},
		{"mT5", "nn-shape", 6, 6, [4]string{"0%", "20%", "20%", "0%"}},
		{"Flava", "k-shape", 3, 6, [4]string{"0%", "20%", "×", "0%"}},
	}
}

// TableIIMethod is one of Table II's columns: a baseline name and the
// placement it runs on ("" = the model's own), or "tessel".
type TableIIMethod struct{ Name, Title, Placement string }

// TableIIMethods are Table II's columns, in order.
func TableIIMethods() []TableIIMethod {
	return []TableIIMethod{
		{"1f1b", "1F1B", "v-shape"},
		{"chimera-direct", "Chimera-direct", "x-shape"},
		{"1f1b-plus", "1F1B+", ""},
		{"tessel", "Tessel", ""},
	}
}

// TableIICell is one method on one model; it is also the JSON form.
type TableIICell struct {
	Method     string   `json:"method"`
	Placement  string   `json:"placement"`
	BubbleRate *float64 `json:"bubble_rate"` // null: ×
	Paper      string   `json:"paper"`
	Note       string   `json:"note,omitempty"`
}

// TableIIRow is one model.
type TableIIRow struct {
	Model     string        `json:"model"`
	Placement string        `json:"placement"`
	Cells     []TableIICell `json:"cells"`
}

// TableIIResult is our Table II beside the paper's.
type TableIIResult struct {
	Devices int          `json:"devices"`
	Rows    []TableIIRow `json:"rows"`
}

// TableIIOptions configure TableII.
type TableIIOptions struct {
	Devices int // recorded in the result; the placements Load gives decide
	Seed    int // random seed of the solver
	// Load returns the built-in placement of a name (on a cluster, if
	// any).
	Load     func(name string) (*placement.Placement, error)
	Progress func(line string)
}

// TableII measures the paper's Table II: the baselines' steady-state
// bubble rates (baseline.SteadyBubbleRate) and the bubble rate of
// Tessel's repetend, the least-period one whose warmup and cooldown exist
// (search.SteadyRepetend) with the settings of PaperTableII.
func TableII(ctx context.Context, opt TableIIOptions) (*TableIIResult, error) {
	out := &TableIIResult{Devices: opt.Devices}
	for _, model := range PaperTableII() {
		p, err := opt.Load(model.Placement)
		if err != nil {
			return nil, err
		}
		row := TableIIRow{Model: model.Model, Placement: model.Placement}
		for k, m := range TableIIMethods() {
			on := p
			if m.Placement != "" {
				if on, err = opt.Load(m.Placement); err != nil {
					return nil, err
				}
			}
			cell := TableIICell{Method: m.Title, Placement: on.Name, Paper: model.Paper[k]}
			if opt.Progress != nil {
				opt.Progress(fmt.Sprintf("compare: Table II, %s, %s", model.Model, m.Title))
			}
			if m.Name == "tessel" {
				res, err := search.SteadyRepetend(ctx, spec.Spec{Placement: on, Memory: model.Memory}, search.SteadyOptions{MaxNR: model.NR, Seed: opt.Seed})
				if err != nil {
					return nil, fmt.Errorf("compare: %s: repetend search: %w", on.Name, err)
				}
				if r := res.Best; r != nil {
					cell.BubbleRate = textfmt.Ptr(textfmt.Round6(schedule.RepetendBubbleRate(on, r.Period)))
					cell.Note = fmt.Sprintf("memory %d, N_R %d, period %d", model.Memory, r.NR, r.Period)
				} else {
					cell.Note = fmt.Sprintf("no repetend with memory %d, N_R ≤ %d", model.Memory, model.NR)
				}
			} else {
				bm, ok := baseline.Lookup(m.Name)
				if !ok {
					return nil, fmt.Errorf("compare: no baseline %q", m.Name)
				}
				rate, period, err := baseline.SteadyBubbleRate(bm, on)
				switch {
				case errors.Is(err, baseline.ErrNotApplicable):
					cell.Note = "not applicable"
				case err != nil:
					return nil, fmt.Errorf("compare: %w", err)
				default:
					cell.BubbleRate = textfmt.Ptr(textfmt.Round6(rate))
					cell.Note = "steady period " + strconv.FormatFloat(period, 'f', -1, 64)
				}
			}
			row.Cells = append(row.Cells, cell)
		}
		out.Rows = append(out.Rows, row)
	}
	return out, nil
}
