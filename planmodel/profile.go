package planmodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/inputerr"
	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/outfile"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/profile"
	"github.com/tessel-pp/tessel/report"
)

// ProfileOptions are the flags of tessel profile: the decoder's config
// file or a user's model, the device, the rounds, the model file to write
// (Out, replaced only with Force) and an earlier one to agree with.
// Progress, when set, takes profile.Run's status lines.
type ProfileOptions struct {
	Config, UserModel, Device, Out, Against string
	Warmup, Repeats, Threads                int
	Force                                   bool
	Progress                                func(line string)
}

// Profile is tessel profile: the model's layers measured (profile.Run),
// the model file written to Out and its report printed, with how many
// times fall within the spread of Against's.
func Profile(ctx context.Context, o ProfileOptions, stdout io.Writer) error {
	switch {
	case o.Out == "":
		return inputerr.Errorf("profile: --out FILE is required")
	case o.Config != "" && o.UserModel != "":
		return inputerr.Errorf("profile: give --config or --user-model, not both")
	case !slices.Contains(profile.Devices(), o.Device):
		return inputerr.Errorf("profile: --device must be one of %s, got %q", strings.Join(profile.Devices(), ", "), o.Device)
	}
	if err := inputerr.AtLeastAll(inputerr.Bound{Flag: "warmup", V: o.Warmup}, inputerr.Bound{Flag: "repeats", V: o.Repeats, Min: 1},
		inputerr.Bound{Flag: "threads", V: o.Threads, Min: 1}); err != nil {
		return err
	}
	if !o.Force {
		if _, err := os.Stat(o.Out); err == nil {
			return inputerr.Errorf("%s exists (use --force to overwrite it)", o.Out)
		}
	}
	var old []profile.Layer
	if o.Against != "" {
		data, err := limits.ReadFile(o.Against, limits.FileBytes)
		if err != nil {
			return inputerr.Errorf("%v", err)
		}
		if _, err = partition.Parse(data); err == nil {
			old, err = profile.ReadLayers(data)
		}
		if err != nil {
			return inputerr.Errorf("%s: %v", o.Against, err)
		}
	}
	opts := profile.Options{UserModel: o.UserModel, Device: o.Device, Warmup: o.Warmup, Repeats: o.Repeats, Threads: o.Threads}
	if o.UserModel == "" {
		cfg := profile.DefaultConfig()
		if o.Config != "" {
			var err error
			if cfg, err = profile.LoadConfig(o.Config); err != nil {
				return inputerr.Errorf("%v", err) // LoadConfig names the file
			}
		}
		opts.Config = &cfg
	}
	if o.Progress != nil {
		opts.Progress = lineFunc(o.Progress)
	}
	res, err := profile.Run(ctx, opts)
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
	if err := report.Profile(stdout, res); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s (tessel plan --model %s)\n", o.Out, o.Out)
	if old == nil {
		return nil
	}
	a, err := res.Agree(old)
	if err != nil {
		return inputerr.Errorf("%s: %v", o.Against, err)
	}
	return report.ProfileAgreement(stdout, a, o.Against)
}

// lineFunc is an io.Writer that hands each line written to f.
type lineFunc func(string)

func (f lineFunc) Write(b []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		f(l)
	}
	return len(b), nil
}
