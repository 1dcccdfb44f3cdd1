package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Bad input to profile, measure and gen --model is one line on stderr and
// exit code 2, before anything runs.
func TestMeasuredBadInput(t *testing.T) {
	dir := t.TempDir()
	exists := filepath.Join(dir, "exists.json")
	if err := os.WriteFile(exists, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	badCfg := "../../profile/testdata/bad-configs/heads-not-divisor.json"
	handModel := "../../testdata/models/gpt-like.json"
	decoderModel := "../../testdata/models/decoder-cpu.json"
	kept := "../../testdata/measured/plan-n4"
	// The model file of the kept run's decoder, but wider and in float64.
	otherDecoder := filepath.Join(dir, "other-decoder.json")
	data, err := os.ReadFile(decoderModel)
	if err != nil {
		t.Fatal(err)
	}
	other := strings.Replace(strings.Replace(string(data), `"hidden":128,`, `"hidden":256,`, 1), `"dtype":"float32","optimizer"`, `"dtype":"float64","optimizer"`, 1)
	if err := os.WriteFile(otherDecoder, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	type tc struct {
		args []string
		want string
		once string // said exactly once, where set
	}
	cases := []tc{
		{[]string{"profile"}, "--out FILE is required", ""},
		{[]string{"profile", "--out", exists}, "exists (use --force", ""},
		{[]string{"profile", "--out", filepath.Join(dir, "m.json"), "--config", badCfg}, "hidden 9 is not a multiple of heads 2", ""},
		{[]string{"profile", "--out", filepath.Join(dir, "m.json"), "--config", badCfg, "--user-model", "x.py"}, "not both", ""},
		{[]string{"profile", "--out", filepath.Join(dir, "m.json"), "--user-model", "no-such-model.py"}, "tessel: profile: user model no-such-model.py: no such file or directory", ""},
		{[]string{"profile", "--out", filepath.Join(dir, "m.json"), "--device", "tpu"}, "--device must be one of cpu, cuda", ""},
		{[]string{"profile", "--out", filepath.Join(dir, "m.json"), "--repeats", "0"}, "--repeats", ""},
		{[]string{"profile", "--out", filepath.Join(dir, "m.json"), "--against", handModel}, "has no spread", ""},
		{[]string{"measure", "--model", decoderModel}, "--programs DIR is required", ""},
		{[]string{"measure", "--programs", dir, "--model", decoderModel}, "1 --programs but 0 --trace", ""},
		{[]string{"measure", "--programs", dir, "--trace", dir}, "--model FILE is required", ""},
		{[]string{"measure", "--programs", dir, "--trace", dir, "--model", filepath.Join(dir, "none.json")}, "no such file", ""},
		{[]string{"measure", "--programs", dir, "--trace", dir, "--model", decoderModel}, "rank0.json", ""},
		{[]string{"measure", "--programs", dir, "--trace", dir, "--model", decoderModel, "--calibrate", exists}, "exists (use --force", ""},
		{[]string{"gen", "--schedule", "x.json", "--out", dir, "--split", "s.json"}, "--split goes with --model", ""},
		{[]string{"gen", "--schedule", "../../schedule/testdata/schedules/v-shape-1f1b.json", "--out", filepath.Join(dir, "g"), "--model", handModel}, "no decoder config", ""},
		{[]string{"gen", "--schedule", "../../schedule/testdata/schedules/v-shape-1f1b.json", "--out", filepath.Join(dir, "g2"), "--model", decoderModel, "--split", exists}, "no \"stages\"", ""},
		{[]string{"measure", "--programs", kept, "--trace", kept + "/results", "--model", otherDecoder},
			"the programs run another decoder than the model file profiled (hidden 128, not 256; dtype float32, not float64)", ""},
	}
	// Every bad decoder config (their messages: profile's TestBadConfigs),
	// named once, nothing written.
	never := filepath.Join(dir, "never.json")
	configs, _ := filepath.Glob("../../profile/testdata/bad-configs/*.json")
	for _, f := range configs {
		cases = append(cases, tc{[]string{"profile", "--out", never, "--config", f}, "tessel: " + f + ": ", f})
	}
	// Every bad trace directory (their messages: measure's TestBadTraces).
	traces, _ := filepath.Glob("../../testdata/measured/bad-traces/*")
	for _, d := range traces {
		cases = append(cases, tc{[]string{"measure", "--programs", kept, "--trace", d, "--model", decoderModel}, "tessel: " + d + "/trace", ""})
	}
	if len(configs) == 0 || len(traces) == 0 {
		t.Fatalf("%d bad configs, %d bad trace directories", len(configs), len(traces))
	}
	for _, tc := range cases {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"tessel"}, tc.args...), &stdout, &stderr)
		msg := stderr.String()
		if code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.want) || tc.once != "" && strings.Count(msg, tc.once) != 1 {
			t.Errorf("tessel %s: exit %d, stderr %q; want 2 and one line saying %q", strings.Join(tc.args, " "), code, msg, tc.want)
		}
	}
	if _, err := os.Stat(never); err == nil {
		t.Errorf("a bad config wrote %s", never)
	}
}

// gen --model writes the decoder's workers: the layers of each stage of
// the plan's split on its forward block, and says how to measure a run.
func TestGenDecoder(t *testing.T) {
	dir := t.TempDir()
	split := filepath.Join(dir, "split.json")
	var stdout, stderr bytes.Buffer
	model := "../../testdata/models/decoder-cpu.json"
	if code := run(context.Background(), []string{"tessel", "partition", "--model", model, "--devices", "4", "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("partition: %s", stderr.String())
	}
	if err := os.WriteFile(split, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	out := filepath.Join(dir, "run")
	if code := run(context.Background(), []string{"tessel", "gen", "--schedule", "../../schedule/testdata/schedules/v-shape-1f1b.json",
		"--out", out, "--model", model, "--split", split}, &stdout, &stderr); code != 0 {
		t.Fatalf("gen: %s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "model: the decoder of "+model+" (float32)") || !strings.Contains(stdout.String(), "tessel measure --programs "+out) {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	for _, name := range []string{"decoder.py", "stages.json", "blocks.py"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
	stages, err := os.ReadFile(filepath.Join(out, "stages.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(stages), `"embedding"`) || !strings.Contains(string(stages), `"head"`) {
		t.Errorf("stages.json:\n%s", stages)
	}
}

// measure reads the run kept in testdata: the report, and a calibration
// whose model file plan reads and whose prediction of the run is within
// 10% of the measurement.
func TestMeasureTestdata(t *testing.T) {
	dir := t.TempDir()
	cal := filepath.Join(dir, "calibrated.json")
	trace := filepath.Join(dir, "trace.json")
	kept := "../../testdata/measured/plan-n4"
	var stdout, stderr bytes.Buffer
	args := []string{"tessel", "measure", "--programs", kept, "--trace", kept + "/results", "--model", "../../testdata/models/decoder-cpu.json",
		"--calibrate", cal, "--perfetto", trace}
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("measure: %s", stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"decoder-8x128 (plan-n4): 2 devices, 4 micro-batches", "outside the measured spread", "off by ",
		"calibration: forward ×", "wrote " + cal + " (tessel plan --model " + cal + ")", "wrote " + trace} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var after, before, measured float64
	line := out[strings.Index(out, "  plan-n4: predicted"):]
	if _, err := fmt.Sscanf(line, "  plan-n4: predicted %f ms calibrated (%f before), measured %f ms", &after, &before, &measured); err != nil {
		t.Fatalf("%v: %q", err, line)
	}
	if math.Abs(after-measured) > 0.1*measured || math.Abs(before-measured) < 0.1*measured {
		t.Errorf("predicted %v before and %v after calibration, measured %v", before, after, measured)
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"tessel", "plan", "--model", cal, "--devices", "2", "-n", "4"}, &stdout, &stderr); code != 0 {
		t.Fatalf("plan from the calibrated file: %s", stderr.String())
	}
	// The same bytes again.
	var again bytes.Buffer
	if code := run(context.Background(), append(args, "--force"), &again, &stderr); code != 0 || again.String() != out {
		t.Errorf("a second measure printed otherwise (exit %d)", code)
	}
}
