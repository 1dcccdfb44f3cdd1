package deploy

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/measure"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/report"
)

// MeasureOptions are the flags of tessel measure: the program directories
// and the traces of their runs, one each, the model file, the files to
// write (a calibrated model file, a Perfetto trace) and the actions
// listed per run.
type MeasureOptions struct {
	Programs, Traces           []string
	Model, Calibrate, Perfetto string
	Top                        int
	JSON, Force                bool
}

// Measure is tessel measure: every run held against its prediction
// (package measure), the
// calibration and the Perfetto trace written where asked, the summary
// printed (text or JSON).
func Measure(_ context.Context, o MeasureOptions, stdout io.Writer) error {
	switch {
	case len(o.Programs) == 0:
		return inputerr.Errorf("measure: --programs DIR is required")
	case len(o.Programs) != len(o.Traces):
		return inputerr.Errorf("measure: %d --programs but %d --trace: give one --trace per --programs", len(o.Programs), len(o.Traces))
	case o.Model == "":
		return inputerr.Errorf("measure: --model FILE is required")
	}
	if err := inputerr.AtLeast("top", o.Top, 0); err != nil {
		return err
	}
	for _, f := range []string{o.Calibrate, o.Perfetto} {
		if f != "" && !o.Force {
			if _, err := os.Stat(f); err == nil {
				return inputerr.Errorf("%s exists (use --force to overwrite it)", f)
			}
		}
	}
	data, err := limits.ReadFile(o.Model, limits.FileBytes)
	if err != nil {
		return inputerr.Errorf("%v", err)
	}
	g, err := partition.Parse(data)
	if err != nil {
		return inputerr.Errorf("%s: %v", o.Model, err)
	}
	var runs []*measure.Run
	var reps []*measure.Report
	for k := range o.Programs {
		r, err := measure.Load(o.Programs[k], o.Traces[k], g)
		if err != nil {
			return inputerr.Errorf("%v", err)
		}
		rep, err := measure.Compare(r, o.Top)
		if err != nil {
			return inputerr.Errorf("%s: %v", o.Programs[k], err)
		}
		runs, reps = append(runs, r), append(reps, rep)
	}
	var cal *measure.Calibrated
	if o.Calibrate != "" {
		if cal, err = measure.Calibrate(data, runs); err != nil {
			return fmt.Errorf("measure: calibrate: %w", err)
		}
		if err := outfile.WriteNew(o.Calibrate, o.Force, cal.Model); err != nil {
			return err
		}
	}
	if o.Perfetto != "" {
		if err := outfile.WriteDrawn(o.Perfetto, o.Force, func(w io.Writer) error { return measure.Perfetto(w, runs, reps) }); err != nil {
			return err
		}
	}
	sum := measure.Summary{Reports: reps, Calibrated: cal}
	if o.JSON {
		return textfmt.JSON(stdout, sum)
	}
	return report.Measure(stdout, sum, o.Calibrate, o.Perfetto)
}
