package profile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/fuzzcorpus"
	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/profile"
)

// Good configs parse and round-trip (bad ones: TestBadConfigs).
func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		in, err string
	}{
		{`{"layers": 2, "hidden": 8, "heads": 2, "ffn": 16, "seq": 4, "batch": 1, "vocab": 8}`, ""},
		{`{"layers": 2, "hidden": 8, "heads": 2, "ffn": 16, "seq": 4, "batch": 1, "vocab": 8, "dtype": "bfloat16", "optimizer": "adam", "lr": 0.1}`, ""},
	} {
		c, err := profile.ParseConfig([]byte(tc.in))
		if tc.err == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.in, err)
			} else if back, err := profile.ParseConfig(c.JSON()); err != nil || back != c {
				t.Errorf("%s: round trip %+v, %v", tc.in, back, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line saying %q", tc.in, err, tc.err)
		}
	}
	if err := profile.DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(profile.DefaultConfig().LayerNames(), " "); !strings.HasPrefix(got, "embedding decoder.0 ") || !strings.HasSuffix(got, "decoder.7 head") {
		t.Errorf("layer names %q", got)
	}
}

// Every bad config in testdata/bad-configs fails to load with one line
// that starts with its path and says what is wrong.
func TestBadConfigs(t *testing.T) {
	want := map[string]string{
		"empty.json":             "empty input: want a decoder config object",
		"malformed.json":         "malformed JSON: unexpected end of input",
		"not-object.json":        "decoder config: want an object, got an array",
		"trailing.json":          "trailing data after the decoder config object at line 1, column 85",
		"missing-vocab.json":     `decoder config: missing field "vocab"`,
		"unknown-field.json":     `decoder config: unknown field "hiden"`,
		"field-twice.json":       `decoder config: field "layers" given twice`,
		"null-dtype.json":        `decoder config: field "dtype": want a string, got null`,
		"string-size.json":       `decoder config: field "hidden": want an integer, got a string`,
		"fractional-layers.json": `decoder config: field "layers": want an integer, got 2.5`,
		"zero-layers.json":       `decoder config: "layers" 0: want an integer in 1..16382`,
		"vocab-too-big.json":     `decoder config: "vocab" 2097152: want an integer in 1..1048576`,
		"heads-not-divisor.json": "decoder config: hidden 9 is not a multiple of heads 2",
		"unknown-dtype.json":     `decoder config: dtype "float16": want one of [float32 float64 bfloat16]`,
		"unknown-optimizer.json": `decoder config: optimizer "lamb": want one of [sgd adam]`,
		"negative-lr.json":       "decoder config: lr -0.1: want a number in (0, 1e6)",
	}
	files, err := filepath.Glob(filepath.Join("testdata", "bad-configs", "*.json"))
	if err != nil || len(files) != len(want) {
		t.Fatalf("%d bad configs, %d expected messages (%v)", len(files), len(want), err)
	}
	for _, f := range files {
		_, err := profile.LoadConfig(f)
		w, ok := want[filepath.Base(f)]
		switch {
		case !ok:
			t.Errorf("%s: no expected message (got %v)", f, err)
		case err == nil:
			t.Errorf("%s: loaded", f)
		case err.Error() != f+": "+w:
			t.Errorf("%s: error %q, want %q", f, err, f+": "+w)
		}
	}
}

// Every bad user model in testdata/bad-user-models is refused before it
// is measured, in one line that says what is wrong, with the profiler's
// exit status for bad input (which tessel profile turns into 2). One
// Python process checks them all, through profile.py's own functions;
// TestUserModel runs one of them through Run.
func TestBadUserModels(t *testing.T) {
	testskip.Short(t, "runs PyTorch")
	python, err := profile.FindPython("")
	if err != nil {
		testskip.Skip(t, err.Error())
	}
	want := map[string]string{
		"no-model.py":          "no function model() returning (layers, sample)",
		"import-raises.py":     "importing it raised ModuleNotFoundError: No module named 'torch_that_does_not_exist'",
		"model-raises.py":      "model() raised ValueError: no weights here",
		"not-a-pair.py":        "model() must return (layers, sample), got list",
		"layer-not-module.py":  "layers[1]: want a (name, torch.nn.Module) pair",
		"no-layers.py":         "model() returned no layers",
		"duplicate-name.py":    "layers[1]: name 'block' already used by layers[0]",
		"sample-not-tensor.py": "the sample input must be a tensor, got list",
		"shapes-differ.py":     "layers[1] (down) fails on its input: RuntimeError: mat1 and mat2 shapes cannot be multiplied (2x8 and 4x2)",
		"output-not-tensor.py": "layers[1] (split) returns tuple, not a tensor",
		"loss-not-scalar.py":   "loss() must return a tensor of one element",
	}
	files, err := filepath.Glob(filepath.Join("testdata", "bad-user-models", "*.py"))
	if err != nil || len(files) != len(want) {
		t.Fatalf("%d bad user models, %d expected messages (%v)", len(files), len(want), err)
	}
	// For each file, a JSON line: the path, the exit status bad_input
	// gave and what it wrote.
	driver := `
import contextlib, importlib.util, io, json, sys
spec = importlib.util.spec_from_file_location("tessel_profiler", "profile.py")
p = importlib.util.module_from_spec(spec)
spec.loader.exec_module(p)
for path in sys.argv[1:]:
    err, status = io.StringIO(), None
    with contextlib.redirect_stderr(err):
        try:
            mods, sample, loss = p.load_user(path)
            p.chain(path, mods, sample, loss)
        except SystemExit as e:
            status = e.code
    print(json.dumps({"path": path, "status": status, "stderr": err.getvalue()}))
`
	out, err := exec.Command(python, append([]string{"-c", driver}, files...)...).Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for range files {
		var r struct {
			Path   string
			Status *int
			Stderr string
		}
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		w := "profile: " + r.Path + ": " + want[filepath.Base(r.Path)] + "\n"
		if r.Status == nil || *r.Status != 3 || r.Stderr != w {
			t.Errorf("%s: exit %v, stderr %q; want 3 and %q", filepath.Base(r.Path), r.Status, r.Stderr, w)
		}
	}
}

// result is a profile of two layers measured by hand.
func result() *profile.Result {
	cfg := profile.Config{Layers: 1, Hidden: 8, Heads: 2, FFN: 16, Seq: 4, Batch: 1, Vocab: 8, DType: "float32", Optimizer: "sgd", LR: 0.01}
	return &profile.Result{
		Meta: profile.Meta{Tool: "tessel profile", Model: "decoder", Config: &cfg, Device: "cpu", DeviceName: "test cpu", DType: "float32",
			Torch: "1.13", Clock: "time.perf_counter_ns", Threads: 1, Warmup: 2, Repeats: 10, TimeUnit: "ms", Method: profile.Method},
		DeviceBytes: 1 << 34,
		Layers: []profile.Layer{
			{Name: "embedding", Forward: profile.Pass{Median: 0.0001, P10: 0, P90: 0.0002}, Input: profile.Pass{}, Weight: profile.Pass{Median: 0.2, P10: 0.19, P90: 0.25},
				ActivationBytes: 100, CheckpointBytes: 200, ParamBytes: 4000, OutputBytes: 64},
			{Name: "decoder.0", Forward: profile.Pass{Median: 10.12345, P10: 9.5, P90: 11}, Input: profile.Pass{Median: 8, P10: 7, P90: 9},
				Weight: profile.Pass{Median: 12, P10: 11, P90: 13}, ActivationBytes: 5000, CheckpointBytes: 64, ParamBytes: 8000, OptimizerBytes: 16000, OutputBytes: 64},
			{Name: "head", Forward: profile.Pass{Median: 3, P10: 2.9, P90: 3.1}, Input: profile.Pass{Median: 2, P10: 1.9, P90: 2.1},
				Weight: profile.Pass{Median: 4, P10: 3.9, P90: 4.1}, ActivationBytes: 700, CheckpointBytes: 64, ParamBytes: 900, PeakBytes: 12345},
		},
	}
}

// The model file of a profile loads with the strict reader, keeps times
// to the microsecond (a forward stays > 0), caps a checkpoint at its
// activation, and is the same bytes for the same result.
func TestModelFile(t *testing.T) {
	r := result()
	data := r.ModelFile()
	if string(data) != string(result().ModelFile()) {
		t.Fatal("the same result gave two model files")
	}
	g, err := partition.Parse(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if g.Name != "decoder-1x8" || !g.Bytes || g.Profile == nil || g.Profile.Config.Hidden != 8 || g.Profile.Method != profile.Method {
		t.Errorf("name %q, bytes %v, profile %+v", g.Name, g.Bytes, g.Profile)
	}
	if g.Nodes[0].Acc != 0.001 || g.Nodes[1].Acc != 10.123 {
		t.Errorf("forward times %v, %v: want 0.001 (kept > 0) and 10.123", g.Nodes[0].Acc, g.Nodes[1].Acc)
	}
	if g.Checkpoints[0] != 100 {
		t.Errorf("embedding checkpoint %v: want its activation, 100", g.Checkpoints[0])
	}
	if g.Static[1] != 24000 {
		t.Errorf("decoder.0 holds %v for good: want params and optimizer state, 24000", g.Static[1])
	}
	if s := g.Spreads[1]["weight"]; s != [2]float64{11, 13} {
		t.Errorf("decoder.0's weight spread %v", s)
	}
	for _, want := range []string{`"peak_bytes": 12345`, `"time_unit":"ms"`, `"device_name":"test cpu"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("model file lacks %s:\n%s", want, data)
		}
	}
}

// A second profile agrees with the first where each median falls in the
// first's spread, or within Slack of its median; Agree names the others
// and refuses another model.
func TestAgree(t *testing.T) {
	old, err := profile.ReadLayers(result().ModelFile())
	if err != nil {
		t.Fatal(err)
	}
	r := result()
	r.Layers[1].Forward.Median = 11.5 // outside [9.5, 11]
	r.Layers[2].Input.Median = 2.005  // inside
	r.Layers[0].Forward.Median = 0.009
	a, err := r.Agree(old)
	if err != nil {
		t.Fatal(err)
	}
	if a.Total != 9 || a.Within != 8 || len(a.Outside) != 1 || !strings.HasPrefix(a.Outside[0], "decoder.0 forward 11.500 ms") {
		t.Errorf("agreement %+v", a)
	}
	r.Layers = r.Layers[:2]
	if _, err := r.Agree(old); err == nil {
		t.Error("agreed with a model of other layers")
	}
	if _, err := profile.ReadLayers([]byte(`{"layers": [{"name": "a", "forward": 1}]}`)); err == nil {
		t.Error("read layers without a spread")
	}
}

// SetCalibration writes the calibration before the layers, replaces it
// when set again, and every other field keeps its bytes.
func TestSetCalibration(t *testing.T) {
	data := result().ModelFile()
	c := &profile.Calibration{Scale: map[string]float64{"forward": 1.23456, "weight": 0.9}, Transfer: 0.1234567, ActionOverhead: 0.05, Measured: "a test"}
	out, err := profile.SetCalibration(data, c)
	if err != nil {
		t.Fatal(err)
	}
	want := `  "calibration": {"scale": {"forward": 1.2346, "weight": 0.9}, "transfer": 0.123, "action_overhead": 0.05, "measured": "a test"},` + "\n  \"layers\""
	if !strings.Contains(string(out), want) {
		t.Fatalf("calibration not before the layers as %q:\n%s", want, out)
	}
	if strings.Replace(string(out), want[:strings.Index(want, "\n")+1], "", 1) != string(data) {
		t.Errorf("other fields changed:\n%s", out)
	}
	g, err := partition.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if g.Calibration.ScaleOf("forward") != 1.2346 || g.Calibration.ScaleOf("input") != 1 || g.Calibration.Transfer != 0.123 {
		t.Errorf("read back %+v", g.Calibration)
	}
	if _, err := profile.SetCalibration([]byte(`[1]`), c); err == nil {
		t.Error("set a calibration in an array")
	}
}

// A user's own model (the documented example) profiles through the same
// path: its layers by name, the loss its file gives, a model file that
// loads.
func TestUserModel(t *testing.T) {
	testskip.Short(t, "profiles a model with PyTorch")
	if _, err := profile.FindPython(""); err != nil {
		testskip.Skip(t, err.Error())
	}
	var progress strings.Builder
	r, err := profile.Run(context.Background(), profile.Options{UserModel: "testdata/user_model.py", Warmup: 1, Repeats: 2, Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range r.Layers {
		names = append(names, l.Name)
		if !(l.Forward.Median > 0) || l.ParamBytes <= 0 || l.Forward.P10 > l.Forward.P90 {
			t.Errorf("layer %s: %+v", l.Name, l)
		}
	}
	if strings.Join(names, " ") != "stem block1 block2 classifier" || r.Layers[3].OutputBytes != 0 || r.Layers[0].OutputBytes != 4*16*16*16*4 {
		t.Errorf("layers %v, output bytes %d and %d", names, r.Layers[0].OutputBytes, r.Layers[3].OutputBytes)
	}
	if r.Meta.Model != "user" || r.Meta.DType != "float32" || !strings.Contains(progress.String(), "profile: round 3/3 (measured)") {
		t.Errorf("meta %+v, progress %q", r.Meta, progress.String())
	}
	g, err := partition.Parse(r.ModelFile())
	if err != nil {
		t.Fatal(err)
	}
	if g.Name != "user_model" || g.Profile.UserModel != "testdata/user_model.py" {
		t.Errorf("model %q from %q", g.Name, g.Profile.UserModel)
	}
	var in *profile.InputError
	if _, err := profile.Run(context.Background(), profile.Options{UserModel: "testdata/missing.py"}); !errors.As(err, &in) {
		t.Errorf("a file that does not exist: %v, want an InputError", err)
	}
	bad := "testdata/bad-user-models/shapes-differ.py"
	_, err = profile.Run(context.Background(), profile.Options{UserModel: bad, Warmup: 1, Repeats: 2})
	if !errors.As(err, &in) || !strings.HasPrefix(err.Error(), "profile: "+bad+": layers[1] (down) fails on its input: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("%s: %v, want an InputError of one line naming the file as given", bad, err)
	}
}

// FuzzParseConfig feeds the decoder config reader arbitrary bytes: a
// valid config or a one-line error, never a panic.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"layers": 2, "hidden": 8, "heads": 2, "ffn": 16, "seq": 4, "batch": 1, "vocab": 8}`))
	f.Add([]byte(`{"layers": 2, "hidden": 8, "heads": 2, "ffn": 16, "seq": 4, "batch": 1, "vocab": 8, "dtype": "bfloat16", "optimizer": "adam", "lr": 1e-3}`))
	f.Add([]byte(`{"layers": -1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := profile.ParseConfig(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of more than one line: %q", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed a config that does not validate: %v", err)
		}
	})
}

var update = flag.Bool("update", false, "rewrite the fuzz seed corpus")

// TestFuzzCorpus checks that FuzzParseConfig's seed corpus holds every
// file of testdata/bad-configs; -update rewrites it.
func TestFuzzCorpus(t *testing.T) {
	fuzzcorpus.Check(t, filepath.Join("testdata", "fuzz", "FuzzParseConfig"), []string{filepath.Join("testdata", "bad-configs")}, *update, "./profile")
}
