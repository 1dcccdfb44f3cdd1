package deploy

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/compact"
	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/verify"
)

// GenOptions are the flags of tessel gen.
type GenOptions struct {
	Schedule string
	Out      string // directory
	Backend  string
	Blocking bool
	Force    bool
	Cluster  spec.ClusterSource
	Model    string // a model file of tessel profile: the workers run its decoder
	Split    string // the JSON of tessel partition --json or plan --json: which layers each block runs
}

// Gen writes the runtime of a schedule into a directory.
func Gen(_ context.Context, opts GenOptions, stdout io.Writer) error {
	switch {
	case opts.Schedule == "":
		return inputerr.Errorf("gen: --schedule FILE is required")
	case opts.Out == "":
		return inputerr.Errorf("gen: --out DIR is required")
	case !slices.Contains(runtimegen.Backends(), opts.Backend):
		return inputerr.Errorf("--backend must be one of %s, got %q", strings.Join(runtimegen.Backends(), ", "), opts.Backend)
	case opts.Split != "" && opts.Model == "":
		return inputerr.Errorf("gen: --split goes with --model")
	}
	if err := outfile.CheckDir(opts.Out, opts.Force); err != nil {
		return err
	}
	s, err := verify.Load(opts.Schedule)
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
			return inputerr.Errorf("%s: %v", opts.Schedule, err)
		}
		onNote = fmt.Sprintf("on the cluster the schedule's orders take %d (%d as scheduled)\n", schedule.Makespan(on), schedule.Makespan(s))
		s = on
	}
	if slices.ContainsFunc(s.Placement.Blocks, func(b placement.Block) bool { k, _ := b.Kind.Info(); return k.Gradient }) {
		if err := runtimegen.CheckTrainable(s.Placement); err != nil {
			return inputerr.Errorf("%s: the workers cannot train this placement: %v", opts.Schedule, err)
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
func genDecoder(opts GenOptions, p *placement.Placement) (*runtimegen.Decoder, error) {
	g, err := partition.Load(opts.Model)
	if err != nil {
		return nil, inputerr.Errorf("%v", err)
	}
	if g.Profile == nil || g.Profile.Config == nil {
		return nil, inputerr.Errorf("%s: no decoder config: --model takes a model file that tessel profile wrote of its built-in decoder", opts.Model)
	}
	var names [][]string
	var devices []int
	if opts.Split != "" {
		data, err := limits.ReadFile(opts.Split, limits.FileBytes)
		if err != nil {
			return nil, inputerr.Errorf("%v", err)
		}
		if names, devices, err = partition.ReadStages(data); err != nil {
			return nil, inputerr.Errorf("%s: %v", opts.Split, err)
		}
	}
	dec, err := runtimegen.NewDecoder(p, *g.Profile.Config, names, devices)
	if err != nil {
		return nil, inputerr.Errorf("%s: the decoder of %s cannot run this placement: %v", opts.Schedule, opts.Model, err)
	}
	return dec, nil
}
