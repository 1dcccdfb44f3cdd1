package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/measure"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/partition"
)

type measureOptions struct {
	Programs, Traces           []string
	Model, Calibrate, Perfetto string
	Top                        int
	JSON, Force                bool
}

func measureCommand() *cli.Command {
	return &cli.Command{
		Name:  "measure",
		Usage: "hold a run of the generated workers against the prediction: measured and predicted iteration, idle time and bubbles, the actions and terms that differ; calibrate the model file",
		UsageText: "tessel measure --programs DIR --trace DIR/results --model model.json\n" +
			"   tessel measure --programs A --trace A/results --programs B --trace B/results --model model.json --calibrate calibrated.json --perfetto trace.json",
		Description: "Reads the traces that the workers of tessel gen --model write (sh DIR/launch.sh --out results\n" +
			"--warmup 1 --iterations 5 --trace) and predicts the same programs with the model file's costs:\n" +
			"each block its layers' profiled times, each transfer and each action the calibrated times (0\n" +
			"without a calibration). Reports the measured iteration (the median, with the least and largest)\n" +
			"beside the predicted one, each device's idle time and the bubble rate, the actions whose\n" +
			"measured time differs most from the predicted, and each term of the model as measured and as\n" +
			"charged: the forward, input, weight (or backward) time per block, the time per transfer (from\n" +
			"the waits that blocked) and the runtime's time per action, each with how far it alone moves the\n" +
			"prediction. --calibrate writes the model file with the measured corrections (its \"calibration\",\n" +
			"fitted over every run given) and predicts every run again from it; tessel plan --model reads it.\n" +
			"--perfetto writes the measured and predicted timelines side by side (Chrome trace JSON).",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "programs", Usage: "a `DIR` that tessel gen --model wrote; repeat, each with its --trace"},
			&cli.StringSliceFlag{Name: "trace", Usage: "the results `DIR` of a run of those programs with --trace (trace0.json, …)"},
			&cli.StringFlag{Name: "model", Usage: "the model `FILE` the programs' decoder was profiled into (and calibrated, maybe)"},
			&cli.StringFlag{Name: "calibrate", Usage: "write the model file with the calibration the runs measured to `FILE`"},
			&cli.StringFlag{Name: "perfetto", Usage: "write the measured and predicted timelines to a Chrome trace JSON `FILE` (ui.perfetto.dev)"},
			&cli.IntFlag{Name: "top", Usage: "actions listed per run", Value: 5},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array of the reports instead of text"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite --calibrate and --perfetto if they exist"},
		},
		Action: func(c *cli.Context) error {
			return runMeasure(c.Context, measureOptions{Programs: c.StringSlice("programs"), Traces: c.StringSlice("trace"),
				Model: c.String("model"), Calibrate: c.String("calibrate"), Perfetto: c.String("perfetto"), Top: c.Int("top"),
				JSON: c.Bool("json"), Force: c.Bool("force")}, c.App.Writer)
		},
	}
}

func runMeasure(_ context.Context, o measureOptions, stdout io.Writer) error {
	switch {
	case len(o.Programs) == 0:
		return usageErrorf("measure: --programs DIR is required")
	case len(o.Programs) != len(o.Traces):
		return usageErrorf("measure: %d --programs but %d --trace: give one --trace per --programs", len(o.Programs), len(o.Traces))
	case o.Model == "":
		return usageErrorf("measure: --model FILE is required")
	}
	if err := inputerr.AtLeast("top", o.Top, 0); err != nil {
		return err
	}
	for _, f := range []string{o.Calibrate, o.Perfetto} {
		if f != "" && !o.Force {
			if _, err := os.Stat(f); err == nil {
				return usageErrorf("%s exists (use --force to overwrite it)", f)
			}
		}
	}
	data, err := limits.ReadFile(o.Model, limits.FileBytes)
	if err != nil {
		return usageErrorf("%v", err)
	}
	g, err := partition.Parse(data)
	if err != nil {
		return usageErrorf("%s: %v", o.Model, err)
	}
	var runs []*measure.Run
	var reps []*measure.Report
	for k := range o.Programs {
		r, err := measure.Load(o.Programs[k], o.Traces[k], g)
		if err != nil {
			return usageErrorf("%v", err)
		}
		rep, err := measure.Compare(r, o.Top)
		if err != nil {
			return usageErrorf("%s: %v", o.Programs[k], err)
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
		return printJSON(stdout, sum)
	}
	return sum.WriteText(stdout, o.Calibrate, o.Perfetto)
}
