package measure

import (
	"fmt"
	"maps"
	"strings"

	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/profile"
)

// Fit is the calibration the runs measured, on top of old (the
// calibration their costs already carry; nil for none), from each run's
// least iteration (Run.Least: the profile's times are undisturbed, and
// so is the least disturbed iteration; the others carry what the
// machine took away, which no model of the schedule predicts): each
// pass's scale times the ratio of its measured time to its predicted
// time over every run, every transfer the median time the blocked waits
// show (old's where none blocked), and every action the runtime's mean
// time between actions. Costs built from the returned calibration
// (ModelCosts of the model file it is set in) charge what the runs
// measured.
func Fit(runs []*Run, old *profile.Calibration) (*profile.Calibration, error) {
	if len(runs) == 0 {
		return nil, fmt.Errorf("no runs to fit")
	}
	meas, pred := map[string]float64{}, map[string]float64{}
	var transfers []float64
	between, actions := 0.0, 0
	var names []string
	for _, r := range runs {
		o := observe(r, []Timeline{r.Least()})
		for p, t := range o.passMeasured {
			meas[p] += t
		}
		for p, t := range o.passPredicted {
			pred[p] += t
		}
		transfers = append(transfers, o.transfers...)
		between += o.overhead * float64(o.actions)
		actions += o.actions
		names = append(names, r.Name)
	}
	c := &profile.Calibration{Scale: map[string]float64{}}
	if old != nil {
		maps.Copy(c.Scale, old.Scale)
		c.Transfer = old.Transfer
	}
	for p, m := range meas {
		if pred[p] > 0 && m > 0 {
			c.Scale[p] = old.ScaleOf(p) * m / pred[p]
		}
	}
	if len(transfers) > 0 {
		c.Transfer = median(transfers)
	}
	if actions > 0 {
		c.ActionOverhead = between / float64(actions)
	}
	t := runs[0].Traces[0]
	c.Measured = fmt.Sprintf("tessel measure of %s: %d iterations each after %d warm-up, %s, %s, %s, torch %s",
		strings.Join(names, ", "), len(t.Iterations), t.Warmup, t.Device, t.Backend, t.DType, t.Torch)
	return c, nil
}

// Calibrated is a model file with the calibration that runs measured,
// and each run predicted again with it.
type Calibrated struct {
	Model       []byte               `json:"-"` // the model file, its "calibration" set (profile.SetCalibration)
	Calibration *profile.Calibration `json:"calibration"`
	// Predicted is, per run, its iteration predicted with the
	// calibrated costs, in ms.
	Predicted []float64 `json:"predicted_ms"`
}

// Calibrate fits the runs (Fit, on top of the calibration the model file
// data carries), writes the calibration into the model file, and predicts
// every run again from the file as partition reads it.
func Calibrate(data []byte, runs []*Run) (*Calibrated, error) {
	g, err := partition.Parse(data)
	if err != nil {
		return nil, err
	}
	c, err := Fit(runs, g.Calibration)
	if err != nil {
		return nil, err
	}
	out, err := profile.SetCalibration(data, c)
	if err != nil {
		return nil, err
	}
	g2, err := partition.Parse(out)
	if err != nil {
		return nil, fmt.Errorf("the calibrated model file does not load (a bug): %w", err)
	}
	res := &Calibrated{Model: out, Calibration: c}
	for _, r := range runs {
		costs, err := ModelCosts(g2, r.Decoder, r.Progs[0].Blocks)
		if err != nil {
			return nil, err
		}
		tl, err := Predict(r.Progs, costs)
		if err != nil {
			return nil, err
		}
		res.Predicted = append(res.Predicted, tl.End())
	}
	return res, nil
}

// Text is the calibration in one line.
func Text(c *profile.Calibration) string {
	var parts []string
	for _, p := range profile.Passes() {
		if s, ok := c.Scale[p]; ok {
			parts = append(parts, fmt.Sprintf("%s ×%.3f", p, s))
		}
	}
	parts = append(parts, fmt.Sprintf("transfer %.3f ms", c.Transfer), fmt.Sprintf("%.3f ms per action", c.ActionOverhead))
	return strings.Join(parts, ", ")
}
