package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/megatron"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/report"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/torchcsv"
)

// ImportOptions are the flags of tessel import.
type ImportOptions struct {
	TorchCSV     string
	Name         string
	Naming       string // auto, current or old
	Opt          torchcsv.ImportOptions
	Out          string // schedule file
	PlacementOut string // placement file
	Force        bool
	OverlapTime  string // --overlap-time: keep OVERLAP_F_B as pairs
	FSDP         FSDPOptions
	// A Megatron-Core layout instead of a CSV: the layout, the layer
	// count, the pipeline and virtual sizes, a split backward, and the
	// micro-batches and group size of Megatron-Core's order for --out.
	Megatron            string
	Layers, PP, VPP     int
	SplitBackward       bool
	MicroBatches, Group int
}

// Import reads the CSV, builds and verifies the schedule, prints one
// line about it and writes the files asked for. Everything wrong with the
// file or the flags is a usage error (exit 2).
func Import(_ context.Context, opts ImportOptions, stdout io.Writer) error {
	if opts.Megatron != "" {
		if opts.TorchCSV != "" {
			return inputerr.Errorf("import: give one of --torch-csv and --megatron-layout")
		}
		return importMegatron(opts, stdout)
	}
	if opts.Layers != 0 || opts.PP != 0 || opts.VPP != 0 || opts.SplitBackward || opts.MicroBatches != 0 || opts.Group != 0 {
		return inputerr.Errorf("import: --num-layers, --pp, --vpp, --split-backward, --micro-batches and --group go with --megatron-layout")
	}
	if opts.TorchCSV == "" {
		return inputerr.Errorf("import: --torch-csv FILE is required (or --megatron-layout LAYOUT)")
	}
	o := &opts.Opt
	if err := o.Check(); err != nil {
		return inputerr.Wrap(err)
	}
	if err := inputerr.AtLeast("memory", o.Memory, 0); err != nil {
		return err
	}
	if opts.Out != "" && opts.Out == opts.PlacementOut {
		return inputerr.Errorf("import: --out and --placement-out name the same file %s", opts.Out)
	}
	if err := (outfile.Schedule{Out: opts.Out, SVG: opts.PlacementOut, Force: opts.Force}).Check(); err != nil {
		return err
	}
	data, err := limits.ReadFile(opts.TorchCSV, limits.FileBytes)
	if err != nil {
		return inputerr.Wrap(err)
	}
	o.Name = opts.Name
	if o.Name == "" {
		o.Name = strings.TrimSuffix(filepath.Base(opts.TorchCSV), filepath.Ext(opts.TorchCSV))
	}
	naming, err := torchcsv.ParseNaming(opts.Naming)
	if err != nil {
		return inputerr.Errorf("--torch-naming %v", err)
	}
	if opts.OverlapTime != "" {
		if o.Overlap, err = placement.ParseOverlapTime(opts.OverlapTime); err != nil {
			return inputerr.Errorf("--overlap-time: %v", err)
		}
	}
	rd, err := torchcsv.Read(data, torchcsv.ReadOptions{Naming: naming, KeepOverlaps: o.Overlap != nil})
	var s *schedule.Schedule
	if err == nil {
		s, err = torchcsv.Import(rd.Table, *o)
	}
	if err != nil {
		return inputerr.Errorf("%s: %v", opts.TorchCSV, err)
	}
	s, fsdpText, err := importFSDP(rd, s, opts.FSDP, opts.TorchCSV)
	if err != nil {
		return err
	}
	if opts.Out != "" {
		if err := (outfile.Schedule{Out: opts.Out, Force: opts.Force}).Write(s); err != nil {
			return err
		}
	}
	if opts.PlacementOut != "" {
		pj, err := outfile.Drawn(s, func(s *schedule.Schedule, w io.Writer) error { return s.Placement.Write(w) })
		if err != nil {
			return err
		}
		if err := outfile.WriteNew(opts.PlacementOut, opts.Force, pj); err != nil {
			return err
		}
	}
	for _, n := range rd.Notes {
		if _, err := fmt.Fprintf(stdout, "note: %s\n", n); err != nil {
			return err
		}
	}
	_, err = io.WriteString(stdout, torchcsv.ImportText(opts.TorchCSV, s)+fsdpText)
	return err
}

// importMegatron reads a Megatron-Core layout: it prints its stages,
// writes its placement and, with --out, Megatron-Core's order on it.
func importMegatron(opts ImportOptions, stdout io.Writer) error {
	o := &opts.Opt
	switch {
	case opts.PP < 1:
		return inputerr.Errorf("import: --megatron-layout needs --pp, the pipeline size")
	case opts.Layers < 0 || opts.VPP < 0 || opts.MicroBatches < 0 || opts.Group < 0:
		return inputerr.Errorf("import: --num-layers, --vpp, --micro-batches and --group must be at least 0")
	case opts.Out != "" && opts.MicroBatches == 0:
		return inputerr.Errorf("import: --out writes Megatron-Core's order: give --micro-batches")
	case opts.Out == "" && (opts.MicroBatches != 0 || opts.Group != 0):
		return inputerr.Errorf("import: --micro-batches and --group go with --out")
	case opts.OverlapTime != "" || opts.Naming != "auto":
		return inputerr.Errorf("import: --overlap-time and --torch-naming go with --torch-csv")
	}
	if err := o.Check(); err != nil {
		return inputerr.Wrap(err)
	}
	if err := (outfile.Schedule{Out: opts.Out, SVG: opts.PlacementOut, Force: opts.Force}).Check(); err != nil {
		return err
	}
	l, err := megatron.ParseLayout(opts.Megatron, megatron.LayoutOptions{Layers: opts.Layers, PP: opts.PP, VPP: opts.VPP})
	if err != nil {
		return inputerr.Wrap(err)
	}
	p, err := l.Placement(megatron.PlacementOptions{Name: opts.Name, ForwardTime: o.ForwardTime, BackwardTime: o.BackwardTime,
		InputTime: o.InputTime, WeightTime: o.WeightTime, ForwardMemory: o.ForwardMemory, BackwardMemory: o.BackwardMemory,
		InputMemory: o.InputMemory, WeightMemory: o.WeightMemory, SplitBackward: opts.SplitBackward})
	if err != nil {
		return inputerr.Wrap(err)
	}
	var s *schedule.Schedule
	if opts.Out != "" {
		if s, err = megatron.Order(spec.Spec{Placement: p, MicroBatches: opts.MicroBatches, Memory: o.Memory}, megatron.OrderOptions{Group: opts.Group}); err != nil {
			return inputerr.Wrap(err)
		}
		if err := (outfile.Schedule{Out: opts.Out, Force: opts.Force}).Write(s); err != nil {
			return err
		}
	}
	if opts.PlacementOut != "" {
		var b bytes.Buffer
		if err := p.Write(&b); err != nil {
			return err
		}
		if err := outfile.WriteNew(opts.PlacementOut, opts.Force, b.Bytes()); err != nil {
			return err
		}
	}
	return report.MegatronImport(stdout, l, p, s, opts.Group)
}
