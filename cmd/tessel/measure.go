package main

import (
	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/deploy"
)

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
			"beside the predicted one and the error against the median and the least (the iteration the\n" +
			"machine disturbed least, which the profile's undisturbed times model), each device's idle time\n" +
			"and the bubble rate, the actions whose measured time differs most from the predicted, and each\n" +
			"term of the model as the least iteration measured it and as charged: the forward, input, weight\n" +
			"(or backward) time per block, the time per transfer (from the waits that blocked) and the\n" +
			"runtime's time per action, each with how far it alone moves the prediction. --calibrate writes\n" +
			"the model file with the measured corrections (its \"calibration\", fitted over every run given,\n" +
			"each from its least iteration) and predicts every run again from it; tessel plan --model reads it.\n" +
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
			return deploy.Measure(c.Context, deploy.MeasureOptions{Programs: c.StringSlice("programs"), Traces: c.StringSlice("trace"),
				Model: c.String("model"), Calibrate: c.String("calibrate"), Perfetto: c.String("perfetto"), Top: c.Int("top"),
				JSON: c.Bool("json"), Force: c.Bool("force")}, c.App.Writer)
		},
	}
}
