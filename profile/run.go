package profile

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

//go:embed decoder.py profile.py
var sources embed.FS

// DecoderSource is decoder.py, the built-in decoder in PyTorch, which the
// workers of tessel gen --model import too.
func DecoderSource() []byte {
	b, _ := sources.ReadFile("decoder.py") // embedded: cannot fail
	return b
}

// Options say what Run measures and how.
type Options struct {
	// Config is the built-in decoder's; UserModel, when set instead, the
	// path of a Python file whose model() returns (layers, sample).
	Config    *Config
	UserModel string
	// Device is "cpu" (default) or "cuda".
	Device string
	// Warmup rounds are dropped (0: none; tessel profile's default is
	// DefaultWarmup); of Repeats rounds (0: DefaultRepeats) each time's
	// median and spread are kept. Threads is the CPU threads torch may
	// use (0: 1).
	Warmup, Repeats, Threads int
	// Python is the interpreter; "" tries $PYTHON, then python3 and
	// /usr/bin/python3, the first that imports torch.
	Python string
	// Progress receives the profiler's progress lines; nil discards them.
	Progress io.Writer
}

// badInputStatus is profile.py's exit status on bad input (BAD_INPUT).
const badInputStatus = 3

// InputError is a profile refused for what it was asked to measure: a
// decoder config or a user model the profiler cannot run, a device or
// dtype this machine lacks, no Python that imports torch. Its message is
// one line; tessel profile exits 2 on it.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Pass is one pass's times over the repeated rounds, in ms.
type Pass struct {
	Median float64 `json:"median"`
	P10    float64 `json:"p10"`
	P90    float64 `json:"p90"`
}

// Layer is what Run measured of one layer.
type Layer struct {
	Name                   string
	Forward, Input, Weight Pass
	// The bytes of one micro-batch's activation kept for the backward,
	// of its checkpoint (the layer's input), of the parameters and their
	// gradients, of the optimizer's state, of the output (what crosses
	// to the next layer) and, on CUDA, the peak over a forward and
	// backward (0: not measured).
	ActivationBytes, CheckpointBytes, ParamBytes, OptimizerBytes, OutputBytes, PeakBytes int64
}

// Result is a profile: the layers in pipeline order and how they were
// measured.
type Result struct {
	Meta        Meta
	DeviceBytes int64
	Layers      []Layer
}

// raw is what profile.py writes.
type raw struct {
	Device      string `json:"device"`
	DeviceName  string `json:"device_name"`
	DeviceBytes int64  `json:"device_bytes"`
	DType       string `json:"dtype"`
	Torch       string `json:"torch"`
	Threads     int    `json:"threads"`
	Warmup      int    `json:"warmup"`
	Repeats     int    `json:"repeats"`
	Clock       string `json:"clock"`
	Layers      []struct {
		Name            string `json:"name"`
		Forward         Pass   `json:"forward"`
		Input           Pass   `json:"input"`
		Weight          Pass   `json:"weight"`
		ActivationBytes int64  `json:"activation_bytes"`
		CheckpointBytes int64  `json:"checkpoint_bytes"`
		ParamBytes      int64  `json:"param_bytes"`
		OptimizerBytes  int64  `json:"optimizer_bytes"`
		OutputBytes     int64  `json:"output_bytes"`
		PeakBytes       int64  `json:"peak_bytes"`
	} `json:"layers"`
}

// DefaultWarmup and DefaultRepeats are tessel profile's rounds: dropped,
// and measured.
const DefaultWarmup, DefaultRepeats = 2, 10

// Method is how a profile's times are taken, in words (Meta.Method).
const Method = "each layer alone, in rounds (every layer once per round): the forward with autograd recording, " +
	"then torch.autograd.grad of its output for its input (the graph kept), then torch.autograd.backward for its weights, " +
	"as tessel's workers split a backward; the median of the rounds after warm-up, spread the 10th to 90th percentile"

// Run measures the model of opts with PyTorch (see the package doc): it
// writes the profiler into a temporary directory, runs it, and reads what
// it wrote. The profiler's progress goes to opts.Progress; ctx stops it.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if (opts.Config == nil) == (opts.UserModel == "") {
		return nil, errors.New("profile: give a decoder config or a user model, one of them")
	}
	if opts.Device == "" {
		opts.Device = "cpu"
	}
	if !slices.Contains(Devices(), opts.Device) {
		return nil, fmt.Errorf("profile: device %q: want one of %v", opts.Device, Devices())
	}
	if opts.Repeats == 0 {
		opts.Repeats = DefaultRepeats
	}
	if opts.Threads == 0 {
		opts.Threads = 1
	}
	if opts.Warmup < 0 || opts.Repeats < 1 || opts.Threads < 1 {
		return nil, fmt.Errorf("profile: warm-up %d, repeats %d, threads %d: want ≥ 0, ≥ 1, ≥ 1", opts.Warmup, opts.Repeats, opts.Threads)
	}
	if opts.Config != nil {
		if err := opts.Config.Validate(); err != nil {
			return nil, &InputError{err}
		}
	} else if _, err := os.Stat(opts.UserModel); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &InputError{fmt.Errorf("profile: user model %s: %w", opts.UserModel, err)}
	}
	python, err := FindPython(opts.Python)
	if err != nil {
		return nil, &InputError{err}
	}
	dir, err := os.MkdirTemp("", "tessel-profile-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for _, name := range []string{"decoder.py", "profile.py"} {
		b, _ := sources.ReadFile(name)
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	out := filepath.Join(dir, "out.json")
	var userAbs string
	args := []string{filepath.Join(dir, "profile.py"), "--out", out, "--device", opts.Device,
		"--warmup", strconv.Itoa(opts.Warmup), "--repeats", strconv.Itoa(opts.Repeats), "--threads", strconv.Itoa(opts.Threads)}
	meta := Meta{Tool: "tessel profile", Device: opts.Device, Threads: opts.Threads, Warmup: opts.Warmup, Repeats: opts.Repeats,
		TimeUnit: "ms", Method: Method}
	if opts.Config != nil {
		cfg := filepath.Join(dir, "config.json")
		if err := os.WriteFile(cfg, opts.Config.JSON(), 0o644); err != nil {
			return nil, err
		}
		args = append(args, "--config", cfg)
		c := *opts.Config
		meta.Model, meta.Config = "decoder", &c
	} else {
		abs, err := filepath.Abs(opts.UserModel)
		userAbs = abs
		if err != nil {
			return nil, err
		}
		args = append(args, "--user-model", abs)
		meta.Model, meta.UserModel = "user", opts.UserModel
	}
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS="+strconv.Itoa(opts.Threads))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("profile: %s: %w", python, err)
	}
	var last string
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) != "" {
			last = line
		}
		if opts.Progress != nil && strings.HasPrefix(line, "profile: round ") {
			fmt.Fprintln(opts.Progress, line)
		}
	}
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("profile: %w", ctx.Err())
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == badInputStatus {
			// profile.py's bad_input: its last line says what, naming
			// the user's file as the user did.
			msg := strings.TrimSpace(last)
			if opts.UserModel != "" {
				msg = strings.ReplaceAll(msg, userAbs, opts.UserModel)
			}
			return nil, &InputError{errors.New(msg)}
		}
		return nil, fmt.Errorf("profile: the profiler failed (%v): %s", err, strings.TrimSpace(last))
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, fmt.Errorf("profile: the profiler wrote nothing: %w", err)
	}
	return parseRaw(data, meta)
}

// parseRaw turns profile.py's output into a Result.
func parseRaw(data []byte, meta Meta) (*Result, error) {
	var r raw
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("profile: the profiler's output: %w", err)
	}
	if len(r.Layers) == 0 {
		return nil, errors.New("profile: the profiler measured no layers")
	}
	meta.DeviceName, meta.DType, meta.Torch, meta.Clock = r.DeviceName, r.DType, r.Torch, r.Clock
	res := &Result{Meta: meta, DeviceBytes: r.DeviceBytes, Layers: make([]Layer, len(r.Layers))}
	for i, l := range r.Layers {
		res.Layers[i] = Layer{Name: l.Name, Forward: l.Forward, Input: l.Input, Weight: l.Weight,
			ActivationBytes: l.ActivationBytes, CheckpointBytes: l.CheckpointBytes, ParamBytes: l.ParamBytes,
			OptimizerBytes: l.OptimizerBytes, OutputBytes: l.OutputBytes, PeakBytes: l.PeakBytes}
	}
	return res, nil
}

// FindPython returns python if set, else $PYTHON, else the first of
// python3 and /usr/bin/python3 that imports torch.
func FindPython(python string) (string, error) {
	if python == "" {
		python = os.Getenv("PYTHON")
	}
	if python != "" {
		if out, err := exec.Command(python, "-c", "import torch").CombinedOutput(); err != nil {
			return "", fmt.Errorf("profile: %s cannot import torch (%v): %s", python, err, lastLine(out))
		}
		return python, nil
	}
	for _, c := range []string{"python3", "/usr/bin/python3"} {
		if _, err := exec.LookPath(c); err != nil {
			continue
		}
		if exec.Command(c, "-c", "import torch").Run() == nil {
			return c, nil
		}
	}
	return "", errors.New("profile: neither python3 nor /usr/bin/python3 imports torch: install PyTorch (Debian: apt-get install python3-torch) or set PYTHON")
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// ms rounds a time to the microsecond; a forward time stays > 0.
func ms(x float64) float64 { return math.Round(x*1000) / 1000 }

// ModelFile is the layer profile of r (docs/formats.md): device_bytes, the
// profile object, and per layer its median times, bytes and spread. The
// same result gives the same bytes.
func (r *Result) ModelFile() []byte {
	var b bytes.Buffer
	name := "model"
	if r.Meta.Config != nil {
		name = r.Meta.Config.Name()
	} else if r.Meta.UserModel != "" {
		name = strings.TrimSuffix(filepath.Base(r.Meta.UserModel), filepath.Ext(r.Meta.UserModel))
	}
	q := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	fmt.Fprintf(&b, "{\n  \"name\": %s,\n  \"device_bytes\": %d,\n", q(name), max(r.DeviceBytes, 1))
	b.WriteString("  \"profile\": ")
	b.Write(r.Meta.JSON())
	b.WriteString(",\n  \"layers\": [\n")
	for i, l := range r.Layers {
		f := max(ms(l.Forward.Median), 0.001)
		fmt.Fprintf(&b, "    {\"name\": %s, \"forward\": %s, \"input\": %s, \"weight\": %s, ", q(l.Name), num(f), num(ms(l.Input.Median)), num(ms(l.Weight.Median)))
		fmt.Fprintf(&b, "\"param_bytes\": %d, \"optimizer_bytes\": %d, \"activation_bytes\": %d, \"checkpoint_bytes\": %d, \"output_bytes\": %d, ",
			l.ParamBytes, l.OptimizerBytes, l.ActivationBytes, min(l.CheckpointBytes, l.ActivationBytes), l.OutputBytes)
		if l.PeakBytes > 0 {
			fmt.Fprintf(&b, "\"peak_bytes\": %d, ", l.PeakBytes)
		}
		fmt.Fprintf(&b, "\"spread\": {\"forward\": [%s, %s], \"input\": [%s, %s], \"weight\": [%s, %s]}}",
			num(ms(l.Forward.P10)), num(ms(l.Forward.P90)), num(ms(l.Input.P10)), num(ms(l.Input.P90)), num(ms(l.Weight.P10)), num(ms(l.Weight.P90)))
		if i < len(r.Layers)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("  ]\n}\n")
	return b.Bytes()
}

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// JSON is the profile object of a model file, on one line, its fields in
// a fixed order.
func (m *Meta) JSON() []byte {
	type out struct {
		Tool       string  `json:"tool"`
		Model      string  `json:"model"`
		Config     *Config `json:"config,omitempty"`
		UserModel  string  `json:"user_model,omitempty"`
		Device     string  `json:"device"`
		DeviceName string  `json:"device_name,omitempty"`
		DType      string  `json:"dtype"`
		Torch      string  `json:"torch"`
		Clock      string  `json:"clock"`
		Threads    int     `json:"threads"`
		Warmup     int     `json:"warmup"`
		Repeats    int     `json:"repeats"`
		TimeUnit   string  `json:"time_unit"`
		Method     string  `json:"method,omitempty"`
	}
	b, _ := json.Marshal(out{m.Tool, m.Model, m.Config, m.UserModel, m.Device, m.DeviceName, m.DType, m.Torch, m.Clock,
		m.Threads, m.Warmup, m.Repeats, m.TimeUnit, m.Method})
	return b
}
