package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/profile"
)

type profileOptions struct {
	Config, UserModel, Device, Out, Against, Python string
	Warmup, Repeats, Threads                        int
	Force                                           bool
}

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
			return runProfile(c.Context, profileOptions{Config: c.String("config"), UserModel: c.String("user-model"),
				Device: c.String("device"), Out: c.String("out"), Against: c.String("against"), Warmup: c.Int("warmup"),
				Repeats: c.Int("repeats"), Threads: c.Int("threads"), Force: c.Bool("force")}, c.App.Writer, c.App.ErrWriter)
		},
	}
}

func runProfile(ctx context.Context, o profileOptions, stdout, stderr io.Writer) error {
	switch {
	case o.Out == "":
		return usageErrorf("profile: --out FILE is required")
	case o.Config != "" && o.UserModel != "":
		return usageErrorf("profile: give --config or --user-model, not both")
	case !slices.Contains(profile.Devices(), o.Device):
		return usageErrorf("profile: --device must be one of %s, got %q", joinNames(profile.Devices()), o.Device)
	}
	for _, f := range []struct {
		name   string
		v, min int
	}{{"warmup", o.Warmup, 0}, {"repeats", o.Repeats, 1}, {"threads", o.Threads, 1}} {
		if err := inputerr.AtLeast(f.name, f.v, f.min); err != nil {
			return err
		}
	}
	if !o.Force {
		if _, err := os.Stat(o.Out); err == nil {
			return usageErrorf("%s exists (use --force to overwrite it)", o.Out)
		}
	}
	var old []profile.Layer
	if o.Against != "" {
		data, err := limits.ReadFile(o.Against, limits.FileBytes)
		if err != nil {
			return usageErrorf("%v", err)
		}
		if _, err = partition.Parse(data); err == nil {
			old, err = profile.ReadLayers(data)
		}
		if err != nil {
			return usageErrorf("%s: %v", o.Against, err)
		}
	}
	opts := profile.Options{UserModel: o.UserModel, Device: o.Device, Warmup: o.Warmup, Repeats: o.Repeats, Threads: o.Threads}
	if o.UserModel == "" {
		cfg := profile.DefaultConfig()
		if o.Config != "" {
			var err error
			if cfg, err = profile.LoadConfig(o.Config); err != nil {
				return usageErrorf("%v", err) // LoadConfig names the file
			}
		}
		opts.Config = &cfg
	}
	bar := newProgress(stderr)
	opts.Progress = lineFunc(func(line string) { bar.show("%s", line) })
	res, err := profile.Run(ctx, opts)
	bar.done()
	if err != nil {
		var in *profile.InputError
		if errors.As(err, &in) {
			return inputerr.Wrap(err)
		}
		return err
	}
	data := res.ModelFile()
	if _, err := partition.Parse(data); err != nil {
		return fmt.Errorf("profile: the model file written does not load (a bug): %w", err)
	}
	if err := outfile.WriteNew(o.Out, o.Force, data); err != nil {
		return err
	}
	if err := res.WriteText(stdout); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (tessel plan --model %s)\n", o.Out, o.Out)
	if old == nil {
		return nil
	}
	a, err := res.Agree(old)
	if err != nil {
		return usageErrorf("%s: %v", o.Against, err)
	}
	return a.WriteText(stdout, o.Against)
}

// lineFunc is an io.Writer that hands each line written to f.
type lineFunc func(string)

func (f lineFunc) Write(b []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		f(l)
	}
	return len(b), nil
}
