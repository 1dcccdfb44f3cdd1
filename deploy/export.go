// Package deploy takes a verified schedule to where it runs, as the
// commands gen, simulate, export, import and measure do: per-device
// programs and PyTorch workers (Gen), their simulation (Simulate),
// PyTorch's pipelining CSV, torchtitan's bundle and Megatron-Core's
// arguments (Export), those files read back into schedules (Import), and
// the workers' runs held against their prediction (Measure). Each takes the command's
// options, checks them (a refusal is bad input, package inputerr), writes
// the files asked for (package outfile) and prints what it did.
package deploy

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/megatron"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/torchcsv"
	"github.com/tessel-pp/tessel/verify"
)

// ExportOptions are the flags of tessel export.
type ExportOptions struct {
	Schedule string
	Format   string
	Out      string
	Force    bool
	Split    string // torchtitan: the JSON of tessel partition --json
	MergeBW  bool   // I and W merged into B (PyTorch's _merge_bw)
	Recv     string // torch-csv-comms: early, deferred or auto
	FSDP     FSDPOptions
	Layout   string // megatron: the plan's layout (or Split)
	MoE      string // megatron: --moe-layer-freq
	CommTime int    // --recv auto: transfer time without a cluster
}

// ExportFormats are the formats Export writes.
func ExportFormats() []string {
	return []string{"torch-csv", "torch-csv-comms", "torchtitan", "megatron"}
}

// Export converts a verified schedule file. A schedule whose placement
// is no chain of stages is bad input (exit 2), with the reason.
func Export(ctx context.Context, opts ExportOptions, stdout io.Writer) error {
	switch {
	case opts.Schedule == "":
		return inputerr.Errorf("export: --schedule FILE is required")
	case !slices.Contains(ExportFormats(), opts.Format):
		return inputerr.Errorf("export: --format must be one of %s, got %q", strings.Join(ExportFormats(), ", "), opts.Format)
	case opts.Format == "torchtitan" && opts.Out == "":
		return inputerr.Errorf("export: --format torchtitan writes a folder: give --out DIR")
	case opts.Split != "" && opts.Format != "torchtitan" && opts.Format != "megatron":
		return inputerr.Errorf("export: --split applies to --format torchtitan and megatron")
	case opts.Format == "megatron" && (opts.Split == "") == (opts.Layout == ""):
		return inputerr.Errorf("export: --format megatron takes the plan's split: give one of --split FILE and --megatron-layout LAYOUT")
	}
	switch opts.Format {
	case "torchtitan":
		return exportTitan(opts, stdout)
	case "megatron":
		return exportMegatron(opts, stdout)
	}
	s, merged, err := loadForExport(opts, opts.Out)
	if err != nil {
		return err
	}
	recv, err := torchcsv.ParseRecvOrder(opts.Recv)
	if err != nil {
		return inputerr.Errorf("--recv %v", err)
	}
	if opts.CommTime < 0 {
		return inputerr.Errorf("--comm-time must be at least 0, got %d", opts.CommTime)
	}
	if opts.FSDP.File != "" {
		return exportFSDP(ctx, opts, s, recv, stdout)
	}
	if _, err := opts.FSDP.model(s); err != nil {
		return err
	}
	tab, data, form, err := torchcsv.ExportCSVWith(s, torchcsv.CSVOptions{Comms: opts.Format == "torch-csv-comms",
		Lowering: torchcsv.CommsOptions{Recv: recv, CommTime: opts.CommTime}})
	if err != nil {
		return inputerr.Errorf("%s: cannot export to PyTorch's CSV: %v", opts.Schedule, err)
	}
	if opts.Out == "" {
		_, err := stdout.Write(data)
		return err
	}
	if err := outfile.WriteNew(opts.Out, opts.Force, data); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s: %d ranks, %d stages, %d micro-batches (PyTorch pipelining CSV, %s)%s\n",
		opts.Out, len(tab.Rows), tab.Stages(), s.MicroBatches, form, merged)
	return err
}

// loadForExport checks that the files to write (outs; "" for stdout)
// may be written, reads and verifies the schedule to export and, with
// --merge-bw, merges its backwards; merged is what the "wrote" line adds
// then ("; I and W merged into B: makespan M instead of S").
func loadForExport(opts ExportOptions, outs ...string) (s *schedule.Schedule, merged string, err error) {
	if err := outfile.Check(opts.Force, outs...); err != nil {
		return nil, "", err
	}
	return loadMerged(opts)
}

// loadMerged reads and verifies the schedule to export, merging its
// backwards with --merge-bw (loadForExport).
func loadMerged(opts ExportOptions) (s *schedule.Schedule, merged string, err error) {
	if s, err = verify.Load(opts.Schedule); err != nil || !opts.MergeBW {
		return s, "", err
	}
	m, err := torchcsv.MergeBackward(s)
	if err != nil {
		return nil, "", inputerr.Errorf("%s: --merge-bw: %v", opts.Schedule, err)
	}
	if m != s {
		merged = fmt.Sprintf("; I and W merged into B: makespan %d instead of %d", schedule.Makespan(m), schedule.Makespan(s))
	}
	return m, merged, nil
}

// exportTitan writes the torchtitan bundle: the folder opts.Out with
// schedule.csv and the settings (torchcsv.TitanSettingsFile).
func exportTitan(opts ExportOptions, stdout io.Writer) error {
	csvPath, pyPath := filepath.Join(opts.Out, "schedule.csv"), filepath.Join(opts.Out, torchcsv.TitanSettingsFile)
	if err := outfile.CheckDir(opts.Out, true); err != nil {
		return err
	}
	if err := outfile.CheckNew(opts.Force, csvPath, pyPath); err != nil {
		return err
	}
	s, merged, err := loadMerged(opts)
	if err != nil {
		return err
	}
	var to torchcsv.TitanOptions
	if opts.Split != "" {
		data, err := limits.ReadFile(opts.Split, limits.FileBytes)
		if err != nil {
			return inputerr.Wrap(err)
		}
		if to.Modules, to.StageDevices, err = partition.ReadStages(data); err != nil {
			return inputerr.Errorf("%s: %v", opts.Split, err)
		}
	}
	b, err := torchcsv.Titan(s, to)
	if err != nil {
		return inputerr.Errorf("%s: cannot export to torchtitan: %v", opts.Schedule, err)
	}
	bundle := []outfile.File{{Path: "schedule.csv", Data: b.Table.Marshal()}, {Path: torchcsv.TitanSettingsFile, Data: b.Config(csvPath)}}
	if err := outfile.WriteDir(opts.Out, opts.Force, bundle); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s and %s: %d ranks, %d stages (%s style, %d per rank), %d micro-batches%s\n",
		csvPath, pyPath, b.Ranks, b.Stages, b.Style, b.StagesPerRank, b.MicroBatches, merged)
	return err
}

// exportMegatron writes the Megatron-Core arguments of the plan.
func exportMegatron(opts ExportOptions, stdout io.Writer) error {
	s, merged, err := loadForExport(opts, opts.Out)
	if err != nil {
		return err
	}
	var l *megatron.Layout
	if opts.Split != "" {
		data, err := limits.ReadFile(opts.Split, limits.FileBytes)
		if err != nil {
			return inputerr.Wrap(err)
		}
		names, _, err := partition.ReadStages(data)
		if err == nil {
			l, err = megatron.LayoutOfSplit(names, s.Placement.Devices)
		}
		if err != nil {
			return inputerr.Errorf("%s: %v", opts.Split, err)
		}
	} else if l, err = megatron.ParseLayout(opts.Layout, megatron.LayoutOptions{PP: s.Placement.Devices}); err != nil {
		return inputerr.Errorf("--megatron-layout: %v", err)
	}
	moe, err := megatron.ParseMoELayerFreq(opts.MoE, l.Layers)
	if err != nil {
		return inputerr.Errorf("--moe-layer-freq: %v", err)
	}
	a, err := megatron.Arguments(s, megatron.ArgsOptions{Layout: l, MoE: moe, Source: opts.Schedule})
	if err != nil {
		return inputerr.Errorf("%s: cannot export to Megatron-Core: %v", opts.Schedule, err)
	}
	if opts.Out == "" {
		_, err := stdout.Write(a.Text())
		return err
	}
	if err := outfile.WriteNew(opts.Out, opts.Force, a.Text()); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s: Megatron-Core arguments, %d ranks, %d stages (%d per rank)%s\n", opts.Out, l.PP, len(l.Stages), l.VPP, merged)
	return err
}
