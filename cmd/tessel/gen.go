package main

import (
	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/deploy"
	"github.com/tessel-pp/tessel/runtimegen"
)

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
			return deploy.Gen(c.Context, deploy.GenOptions{
				Schedule: c.String("schedule"), Out: c.String("out"), Backend: c.String("backend"),
				Blocking: c.Bool("blocking"), Force: c.Bool("force"), Cluster: clusterSpecFrom(c),
				Model: c.String("model"), Split: c.String("split"),
			}, c.App.Writer)
		},
	}
}
