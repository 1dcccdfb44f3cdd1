package deploy

import (
	"context"
	"io"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/quantity"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/torchcsv"
	"github.com/tessel-pp/tessel/verify"
)

// SimulateOptions are the flags of tessel simulate.
type SimulateOptions struct {
	Schedule string // schedule file, or
	Programs string // directory of rank<R>.json written by tessel gen
	CommTime int
	// CommTimeSet says --comm-time was given (it does not go with a cluster).
	CommTimeSet bool
	Cluster     spec.ClusterSource
	QueuedLinks bool
	Blocking    bool // only the blocking programs
	// TorchRecv also runs the schedule as PyTorch's runtime runs its
	// compute_comms CSV, receives early and deferred, on serial links.
	TorchRecv bool
	JSON      bool
}

// Simulate simulates the programs of a schedule file (both modes unless
// Blocking) or of a program directory. Unreadable or invalid input is a
// usage error; a deadlock is an error naming the cycle.
func Simulate(_ context.Context, opts SimulateOptions, stdout io.Writer) error {
	if (opts.Schedule == "") == (opts.Programs == "") {
		return inputerr.Errorf("simulate: give one of --schedule FILE and --programs DIR")
	}
	if opts.CommTime < 0 {
		return inputerr.Errorf("--comm-time must be at least 0, got %d", opts.CommTime)
	}
	if opts.TorchRecv && opts.Schedule == "" {
		return inputerr.Errorf("simulate: --torch-recv applies to --schedule")
	}
	var sets [][]*runtimegen.Program
	var scheduleMakespan *int
	var units *quantity.Scale // the schedule's placement's, for times in its unit
	var torch *torchcsv.RecvComparison
	var timing *placement.Placement // times of blocks and transfers; nil: the programs' and CommTime
	sim := runtimegen.SimOptions{CommTime: opts.CommTime, QueuedLinks: opts.QueuedLinks}
	if opts.Schedule != "" {
		s, err := verify.Load(opts.Schedule)
		if err != nil {
			return err
		}
		given := s.Placement
		if s.Cluster != nil {
			given, timing = s.Given, s.Placement
		}
		on, c, err := opts.Cluster.On(given)
		if err != nil {
			return inputerr.Wrap(err)
		}
		if c != nil {
			timing = on
		}
		if timing != nil && opts.CommTimeSet {
			return inputerr.Errorf("simulate: --comm-time does not go with a cluster: transfers take the cluster's times")
		}
		if sets, err = runtimegen.GenerateModes(s, opts.Blocking); err != nil {
			if len(s.Pairs) > 0 || len(s.LinkOrder) > 0 {
				return inputerr.Wrap(err) // a schedule simulate cannot take
			}
			return err
		}
		m := schedule.Makespan(s)
		scheduleMakespan = &m
		units = s.Placement.Units
		sim = runtimegen.ScheduleSimOptions(s, timing, opts.QueuedLinks, opts.CommTime)
		if opts.TorchRecv {
			timed := *s
			if timing != nil {
				timed.Placement = timing
			}
			if torch, err = torchcsv.CompareRecv(&timed, opts.CommTime); err != nil {
				return inputerr.Errorf("%s: --torch-recv: %v", opts.Schedule, err)
			}
		}
	} else {
		if opts.Blocking {
			return inputerr.Errorf("simulate: --blocking applies to --schedule (programs have their own mode)")
		}
		if opts.Cluster != (spec.ClusterSource{}) {
			return inputerr.Errorf("simulate: --cluster, --device-speed and --transfer-time apply to --schedule")
		}
		progs, err := runtimegen.LoadPrograms(opts.Programs)
		if err != nil {
			return inputerr.Wrap(err)
		}
		if err := runtimegen.Check(progs); err != nil {
			return inputerr.Errorf("%s: %v", opts.Programs, err)
		}
		sets = append(sets, progs)
	}
	out, err := runtimegen.SimulateAll(sets, sim)
	if err != nil {
		return err
	}
	out.ScheduleMakespan = scheduleMakespan
	out.SetUnits(units)
	if opts.JSON {
		if torch != nil {
			return textfmt.JSON(stdout, struct {
				*runtimegen.Report
				TorchRecv *torchcsv.RecvComparison `json:"torch_recv"`
			}{out, torch})
		}
		return textfmt.JSON(stdout, out)
	}
	text, err := out.Text()
	if err != nil {
		return err
	}
	if torch != nil {
		text += "\n" + torch.Text()
	}
	_, err = io.WriteString(stdout, text)
	return err
}
