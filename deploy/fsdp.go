package deploy

import (
	"context"
	"fmt"
	"io"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/rule/fsdp"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/torchcsv"
)

// FSDPOptions are the FSDP-sharded stages of Export and Import: the FSDP
// file, at most MaxActive stages gathered at once (0: the file's), and
// where the gathers go (Lookahead: tessel, full, auto or a list; export
// only).
type FSDPOptions struct {
	File      string
	MaxActive int
	Lookahead string
}

// model reads the FSDP file for schedule s's placement (nil without one).
func (o FSDPOptions) model(s *schedule.Schedule) (*fsdp.Model, error) {
	if o.File == "" {
		if o.MaxActive != 0 || o.Lookahead != "" && o.Lookahead != "tessel" {
			return nil, inputerr.Errorf("--max-active-stages and --unshard-lookahead go with --fsdp FILE")
		}
		return nil, nil
	}
	data, err := limits.ReadFile(o.File, limits.FileBytes)
	if err != nil {
		return nil, inputerr.Wrap(err)
	}
	f, err := fsdp.Read(data)
	if err != nil {
		return nil, inputerr.Errorf("%s: %v", o.File, err)
	}
	m := f.For(s.Placement)
	if o.MaxActive != 0 {
		m.MaxActive = o.MaxActive
		if err := m.Check(); err != nil {
			return nil, inputerr.Errorf("--max-active-stages: %v", err)
		}
	}
	return &m, nil
}

// exportFSDP writes the compute_comms CSV of s with its FSDP actions.
func exportFSDP(ctx context.Context, opts ExportOptions, s *schedule.Schedule, recv torchcsv.RecvOrder, stdout io.Writer) error {
	if opts.Format != "torch-csv-comms" {
		return inputerr.Errorf("export: --fsdp applies to --format torch-csv-comms (PyTorch lowers a compute_only file with its own UNSHARD and RESHARD)")
	}
	m, err := opts.FSDP.model(s)
	if err != nil {
		return err
	}
	e, err := torchcsv.ExportFSDPWith(ctx, s, torchcsv.FSDPOptions{Model: *m, Lookahead: opts.FSDP.Lookahead,
		Lowering: torchcsv.CommsOptions{Recv: recv, CommTime: opts.CommTime}})
	if err != nil {
		return inputerr.Errorf("%s: cannot export with FSDP: %v", opts.Schedule, err)
	}
	if opts.Out == "" {
		_, err := stdout.Write(e.Table.Marshal())
		return err
	}
	if err := outfile.WriteNew(opts.Out, opts.Force, e.Table.Marshal()); err != nil {
		return err
	}
	form := "compute_comms"
	if e.Order == torchcsv.RecvDeferred {
		form += ", receives deferred"
	}
	_, err = fmt.Fprintf(stdout, "wrote %s: %d ranks, %d micro-batches (PyTorch pipelining CSV, %s, with FSDP actions)\n%s",
		opts.Out, len(e.Table.Rows), s.MicroBatches, form, e.Text())
	return err
}

// importFSDP reads a file's FSDP actions as part of the imported
// schedule s (with --fsdp, at the file's costs): the schedule to write
// and the line to print.
func importFSDP(rd *torchcsv.Reading, s *schedule.Schedule, o FSDPOptions, path string) (*schedule.Schedule, string, error) {
	m, err := o.model(s)
	if err != nil {
		return nil, "", err
	}
	if len(rd.FSDP) == 0 {
		if m != nil {
			return nil, "", inputerr.Errorf("%s: --fsdp: the file has no UNSHARD, RESHARD or REDUCE_GRAD actions", path)
		}
		return s, "", nil
	}
	fs, err := torchcsv.ImportFSDP(rd, s, m)
	if err != nil {
		return nil, "", inputerr.Errorf("%s: %v", path, err)
	}
	text := torchcsv.FSDPText(fs)
	if m == nil {
		text = "fsdp: the file's actions checked at cost 0 (give --fsdp FILE for their costs): " + text[len("fsdp: "):]
	}
	return fs.Compute, text, nil
}
