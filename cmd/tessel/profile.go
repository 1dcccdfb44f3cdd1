package main

import (
	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/planmodel"
	"github.com/tessel-pp/tessel/profile"
)

func profileCommand() *cli.Command {
	def := profile.DefaultConfig()
	return &cli.Command{
		Name:  "profile",
		Usage: "measure a model's layers with PyTorch (the built-in decoder or your own) and write the model file partition and plan read",
		UsageText: "tessel profile --out model.json                       (the built-in decoder config)\n" +
			"   tessel profile --config decoder.json --out model.json\n" +
			"   tessel profile --user-model my_model.py --out model.json",
		Description: "Runs each layer alone, in rounds: its forward, the gradient for its input and the gradient for its\n" +
			"weights, as the workers of tessel gen split a backward; keeps the median of the rounds after the\n" +
			"warm-up and their 10th–90th percentile spread, in ms, and the bytes of the activation kept for the\n" +
			"backward, the checkpoint, the parameters, the optimizer state and the output. The model is the\n" +
			"built-in decoder-only transformer of --config (default " + string(def.JSON()) + ")\n" +
			"or a Python file whose model() returns (layers, sample) (docs/measured.md). Runs the system's\n" +
			"PyTorch ($PYTHON, else python3 or /usr/bin/python3) on CPU, or on CUDA with --device cuda.\n" +
			"With --against FILE (an earlier profile of the same model), says how many times fall in its spread.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", Usage: "decoder config, a JSON `FILE`: layers, hidden, heads, ffn, seq, batch, vocab; dtype (float32, float64, bfloat16), optimizer (sgd, adam), lr"},
			&cli.StringFlag{Name: "user-model", Usage: "profile your own model instead: a Python `FILE` whose model() returns (layers, sample)"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the model file to `FILE`"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite --out if it exists"},
			&cli.StringFlag{Name: "device", Usage: "cpu or cuda", Value: "cpu"},
			&cli.IntFlag{Name: "warmup", Usage: "rounds run first and dropped", Value: profile.DefaultWarmup},
			&cli.IntFlag{Name: "repeats", Usage: "rounds measured: each time is their median", Value: profile.DefaultRepeats},
			&cli.IntFlag{Name: "threads", Usage: "CPU threads torch may use", Value: 1},
			&cli.StringFlag{Name: "against", Usage: "an earlier model `FILE` of this model: report how many times fall within its spread"},
		},
		Action: func(c *cli.Context) error {
			bar := newProgress(c.App.ErrWriter)
			defer bar.done()
			return planmodel.Profile(c.Context, planmodel.ProfileOptions{Config: c.String("config"), UserModel: c.String("user-model"),
				Device: c.String("device"), Out: c.String("out"), Against: c.String("against"), Warmup: c.Int("warmup"),
				Repeats: c.Int("repeats"), Threads: c.Int("threads"), Force: c.Bool("force"), Progress: bar.line}, bar.clearing(c.App.Writer))
		},
	}
}
