package main

import (
	"bytes"
	"context"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/opgraph"
	"github.com/tessel-pp/tessel/outfile"
)

// genDagOptions are the flags of tessel gen-dag.
type genDagOptions struct {
	Opt        opgraph.Options
	Out        string // placement file
	ClusterOut string // cluster file
	Latency    float64
	PerUnit    float64
	Force      bool
}

func genDagCommand() *cli.Command {
	d := opgraph.Options{}.Defaults()
	return &cli.Command{
		Name:      "gen-dag",
		Usage:     "write a random layered operator graph (She et al. §V-B) as a placement whose operators choose their device",
		UsageText: "tessel gen-dag [--nodes N] [--seed S] [--devices D] --out FILE [--cluster-out FILE]",
		Description: "Draws a random DAG as She et al., \"Automatic Operator-level Parallelism Planning\n" +
			"for Distributed Deep Learning – A Mixed-Integer Programming Approach\", §V-B, do:\n" +
			"operators in layers, each with 1..3 inputs from the layer before (or earlier) and at\n" +
			"most 3 consumers, random times, memories and tensor sizes. Every operator may run on\n" +
			"any one device (\"candidates\"); the cluster file joins every pair of devices with a\n" +
			"link on which a tensor takes about as long as an operator. The same flags give the\n" +
			"same bytes (docs/operator-placement.md).",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "nodes", Usage: "operators", Value: d.Nodes},
			&cli.Uint64Flag{Name: "seed", Usage: "the random stream (the same seed, the same graph)", Value: 1},
			&cli.IntFlag{Name: "devices", Aliases: []string{"d"}, Usage: "devices, each a candidate of every operator", Value: d.Devices},
			&cli.IntFlag{Name: "max-degree", Usage: "most inputs and consumers of an operator", Value: d.MaxDegree},
			&cli.IntFlag{Name: "width", Usage: "mean operators of a layer", Value: d.Width},
			&cli.IntFlag{Name: "max-time", Usage: "operator times are drawn from 1..`T`", Value: d.MaxTime},
			&cli.IntFlag{Name: "max-size", Usage: "tensor sizes are drawn from 1..`Z`", Value: d.MaxSize},
			&cli.Float64Flag{Name: "latency", Usage: "latency of every link of the cluster file", Value: opgraph.DefaultLink().Latency},
			&cli.Float64Flag{Name: "per-unit", Usage: "time per unit of tensor size of every link of the cluster file", Value: opgraph.DefaultLink().PerUnit},
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the placement to a JSON `FILE` (- : standard output)"},
			&cli.StringFlag{Name: "cluster-out", Usage: "write the cluster to a JSON `FILE`"},
			&cli.BoolFlag{Name: "force", Usage: "overwrite files that exist"},
		},
		Action: func(c *cli.Context) error {
			o := opgraph.Options{Nodes: c.Int("nodes"), Seed: c.Uint64("seed"), Devices: c.Int("devices"), MaxDegree: c.Int("max-degree"), Width: c.Int("width"), MaxTime: c.Int("max-time"), MaxSize: c.Int("max-size")}
			return runGenDag(c.Context, genDagOptions{Opt: o, Out: c.String("out"), ClusterOut: c.String("cluster-out"),
				Latency: c.Float64("latency"), PerUnit: c.Float64("per-unit"), Force: c.Bool("force")}, c.App.Writer)
		},
	}
}

// runGenDag writes the placement and the cluster. Bad flags are usage
// errors (exit 2).
func runGenDag(_ context.Context, opts genDagOptions, stdout io.Writer) error {
	if opts.Out == "" {
		return usageErrorf("gen-dag: --out FILE is required (- for standard output)")
	}
	if err := outfile.Check(opts.Force, opts.Out, opts.ClusterOut); err != nil {
		return err
	}
	o := opts.Opt
	for _, f := range []struct {
		name string
		v    int
	}{{"nodes", o.Nodes}, {"devices", o.Devices}, {"max-degree", o.MaxDegree}, {"width", o.Width}, {"max-time", o.MaxTime}, {"max-size", o.MaxSize}} {
		if f.v < 1 {
			return usageErrorf("gen-dag: --%s must be at least 1, got %d", f.name, f.v)
		}
	}
	p, err := opgraph.Generate(o)
	if err != nil {
		return usageErrorf("gen-dag: %v", err)
	}
	cl := opgraph.Cluster(p.Devices, cluster.Link{Latency: opts.Latency, PerUnit: opts.PerUnit})
	if err := cl.Validate(); err != nil {
		return usageErrorf("gen-dag: %v", err)
	}
	var pb, cb bytes.Buffer
	if err := p.Write(&pb); err != nil {
		return err
	}
	if err := cl.Write(&cb); err != nil {
		return err
	}
	var files []outfile.File
	if opts.Out != "-" {
		files = append(files, outfile.File{Path: opts.Out, Data: pb.Bytes()})
	}
	if opts.ClusterOut != "" {
		files = append(files, outfile.File{Path: opts.ClusterOut, Data: cb.Bytes()})
	}
	if err := outfile.WriteAll(opts.Force, files); err != nil {
		return err
	}
	if opts.Out == "-" {
		if _, err := stdout.Write(pb.Bytes()); err != nil {
			return err
		}
	}
	if opts.Out != "-" {
		io.WriteString(stdout, opgraph.Summary(p))
	}
	return nil
}
