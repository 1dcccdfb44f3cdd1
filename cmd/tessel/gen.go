package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
)

// genOptions are the flags of tessel gen.
type genOptions struct {
	Schedule string
	Out      string // directory
	Backend  string
	Blocking bool
	Force    bool
	Cluster  clusterSpec
	Model    string // a model file of tessel profile: the workers run its decoder
	Split    string // the JSON of tessel partition --json or plan --json: which layers each block runs
}

func genCommand() *cli.Command {
	return &cli.Command{
		Name:  "gen",
		Usage: "write per-device programs and PyTorch workers that run a schedule",
		UsageText: "tessel gen --schedule FILE --out DIR [--backend gloo|nccl] [--blocking] [--cluster FILE] [--force]\n" +
			"   tessel gen --schedule FILE --out DIR --model model.json [--split split.json]",
		Description: "Writes into DIR one program per device (rank0.json, …: compute, collective, send, recv\n" +
			"and wait operations in an order that cannot deadlock), worker.py (runs a program on\n" +
			"torch.distributed), blocks.py (an example model, a small MLP split along the placement: replace\n" +
			"it with yours) and launch.sh (runs every rank with torch.distributed.run, with $PYTHON if set):\n\n" +
			"  sh DIR/launch.sh --out results --iterations 3   train the example on every rank\n" +
			"  sh DIR/launch.sh check --out results            compare with one process\n\n" +
			"With --model (a model file of tessel profile, of its built-in decoder) the workers run that\n" +
			"decoder instead of the example, each forward block the layers of its stage in --split (the JSON\n" +
			"of tessel partition --json or tessel plan --json), or, without it, the layers spread evenly; in\n" +
			"the config's dtype. launch.sh --warmup W --iterations K --trace then records every op's start\n" +
			"and end for tessel measure.\n\n" +
			"With --cluster (or --device-speed, --transfer-time) the programs carry the blocks' times there.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "schedule", Aliases: []string{"s"}, Usage: "schedule `FILE` (JSON, see docs/formats.md)"},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "`DIR` to write into: new or empty, unless --force"},
			&cli.StringFlag{Name: "backend", Usage: "torch.distributed backend: " + joinNames(runtimegen.Backends()), Value: "gloo"},
			&cli.BoolFlag{Name: "blocking", Usage: "blocking send and receive (default: non-blocking, overlapping computation)"},
			&cli.BoolFlag{Name: "force", Usage: "write into a DIR that is not empty, replacing files of the same names"},
			clusterFlag("cluster"), clusterFlag("device-speed"), clusterFlag("transfer-time"), clusterFlag("channels"),
			&cli.StringFlag{Name: "model", Usage: "run the decoder of a model `FILE` that tessel profile wrote instead of the example MLP"},
			&cli.StringFlag{Name: "split", Usage: "with --model: the JSON `FILE` of tessel partition --json or plan --json, the layers of each stage"},
		},
		Action: func(c *cli.Context) error {
			return runGen(c.Context, genOptions{
				Schedule: c.String("schedule"), Out: c.String("out"), Backend: c.String("backend"),
				Blocking: c.Bool("blocking"), Force: c.Bool("force"), Cluster: clusterSpecFrom(c),
				Model: c.String("model"), Split: c.String("split"),
			}, c.App.Writer)
		},
	}
}

// runGen writes the runtime of a schedule into a directory.
func runGen(_ context.Context, opts genOptions, stdout io.Writer) error {
	switch {
	case opts.Schedule == "":
		return usageErrorf("gen: --schedule FILE is required")
	case opts.Out == "":
		return usageErrorf("gen: --out DIR is required")
	case !slices.Contains(runtimegen.Backends(), opts.Backend):
		return usageErrorf("--backend must be one of %s, got %q", joinNames(runtimegen.Backends()), opts.Backend)
	case opts.Split != "" && opts.Model == "":
		return usageErrorf("gen: --split goes with --model")
	}
	if err := outfile.CheckDir(opts.Out, opts.Force); err != nil {
		return err
	}
	s, err := loadVerified(opts.Schedule)
	if err != nil {
		return err
	}
	cl, err := opts.Cluster.Cluster(s.Placement.Devices)
	if err != nil {
		return inputerr.Wrap(err)
	}
	var onNote string
	if cl != nil {
		on, err := compact.OnCluster(s, cl)
		if err != nil {
			return usageErrorf("%s: %v", opts.Schedule, err)
		}
		onNote = fmt.Sprintf("on the cluster the schedule's orders take %d (%d as scheduled)\n", schedule.Makespan(on), schedule.Makespan(s))
		s = on
	}
	if slices.ContainsFunc(s.Placement.Blocks, func(b placement.Block) bool { k, _ := b.Kind.Info(); return k.Gradient }) {
		if err := runtimegen.CheckTrainable(s.Placement); err != nil {
			return usageErrorf("%s: the workers cannot train this placement: %v", opts.Schedule, err)
		}
	}
	mode := runtimegen.NonBlocking
	if opts.Blocking {
		mode = runtimegen.Blocking
	}
	progs, err := runtimegen.Generate(s, mode)
	if err != nil {
		if len(s.Pairs) > 0 || len(s.LinkOrder) > 0 {
			return inputerr.Wrap(err) // a schedule gen cannot take
		}
		return err
	}
	var files map[string][]byte
	var dec *runtimegen.Decoder
	if opts.Model != "" {
		if dec, err = genDecoder(opts, s.Placement); err != nil {
			return err
		}
		if files, err = runtimegen.DecoderFiles(progs, opts.Backend, dec); err != nil {
			return err
		}
	} else if files, err = runtimegen.Files(progs, opts.Backend); err != nil {
		return err
	}
	if err := runtimegen.WriteFiles(opts.Out, files); err != nil {
		return outfile.WriteError(fmt.Errorf("gen: %w", err))
	}
	_, err = io.WriteString(stdout, runtimegen.WroteText(opts.Out, progs, mode))
	if err == nil && dec != nil {
		_, err = io.WriteString(stdout, dec.Text(opts.Out, opts.Model, s.Placement))
	}
	if err == nil && onNote != "" {
		_, err = io.WriteString(stdout, onNote)
	}
	return err
}

// genDecoder reads the decoder of --model and cuts it into the forward
// blocks of p (the stages of --split, or evenly).
func genDecoder(opts genOptions, p *placement.Placement) (*runtimegen.Decoder, error) {
	g, err := partition.Load(opts.Model)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	if g.Profile == nil || g.Profile.Config == nil {
		return nil, usageErrorf("%s: no decoder config: --model takes a model file that tessel profile wrote of its built-in decoder", opts.Model)
	}
	var names [][]string
	var devices []int
	if opts.Split != "" {
		data, err := limits.ReadFile(opts.Split, limits.FileBytes)
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		if names, devices, err = partition.ReadStages(data); err != nil {
			return nil, usageErrorf("%s: %v", opts.Split, err)
		}
	}
	dec, err := runtimegen.NewDecoder(p, *g.Profile.Config, names, devices)
	if err != nil {
		return nil, usageErrorf("%s: the decoder of %s cannot run this placement: %v", opts.Schedule, opts.Model, err)
	}
	return dec, nil
}
