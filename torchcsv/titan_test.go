package torchcsv_test

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/testskip"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/torchcsv"
)

// The bundle's stage-to-rank map is the one torchtitan derives for its
// style (pipeline_module_split: loop, rank + s·ranks; V, rank and
// S−1−rank), for a V placement searched by tessel and for loop ones.
func TestTitanStageMap(t *testing.T) {
	for _, tc := range []struct {
		opt             placement.Options
		style, schedule string
		stagesPerRank   int
	}{
		{placement.Options{Devices: 4, Chunks: 2, Order: placement.V}, torchcsv.StyleV, "ZBVZeroBubble", 2},
		{placement.Options{Devices: 4, Chunks: 2, Order: placement.V, SplitBackward: true}, torchcsv.StyleV, "ZBVZeroBubble", 2},
		{placement.Options{Devices: 4, Chunks: 2, Order: placement.Loop}, torchcsv.StyleLoop, "Interleaved1F1B", 2},
		{placement.Options{Devices: 2, Chunks: 3, Order: placement.Loop}, torchcsv.StyleLoop, "Interleaved1F1B", 3},
		{placement.Options{Devices: 4}, torchcsv.StyleLoop, "1F1B", 1},
	} {
		p, err := placement.Builtin("v-shape", tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Memory: 2 * p.Devices}, search.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := torchcsv.Titan(res.Schedule, torchcsv.TitanOptions{})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if b.Style != tc.style || b.Schedule != tc.schedule || b.StagesPerRank != tc.stagesPerRank {
			t.Errorf("%s: style %s, schedule %s, %d per rank", p.Name, b.Style, b.Schedule, b.StagesPerRank)
		}
		for r := range b.Ranks {
			ids, err := torchcsv.TitanStageIDs(r, b.Ranks, b.Stages, b.Style)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range ids {
				if b.StageRank[s] != r {
					t.Errorf("%s: torchtitan puts stage %d on rank %d, the CSV on rank %d", p.Name, s, r, b.StageRank[s])
				}
			}
		}
		if !strings.Contains(string(b.Config("s.csv")), `pipeline_parallel_schedule = "`+tc.schedule+`"`) {
			t.Errorf("%s: config\n%s", p.Name, b.Config("s.csv"))
		}
	}
}

// What torchtitan cannot build is refused in one line.
func TestTitanRefuses(t *testing.T) {
	imported := func(csv string) *torchcsv.Table {
		tab, err := torchcsv.Parse([]byte(csv))
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}
	x, err := placement.Builtin("x-shape", placement.Options{Devices: 4})
	if err != nil {
		t.Fatal(err)
	}
	res, err := search.Run(context.Background(), spec.Spec{Placement: x, MicroBatches: 4, Memory: 8}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		label, csv, err string
	}{
		{"three stages on two ranks", "0F0,1F0,1B0,0B0\n2F0,2B0\n", "3 stages on 2 ranks: torchtitan builds the same number of stages on every rank"},
		{"neither loop nor V", "0F0,1F0,1B0,0B0\n2F0,3F0,3B0,2B0\n", "stage-to-rank map [0 0 1 1] is neither torchtitan's loop"},
	} {
		s, err := torchcsv.Import(imported(tc.csv), torchcsv.DefaultImportOptions())
		if err != nil {
			t.Fatal(err)
		}
		_, err = torchcsv.Titan(s, torchcsv.TitanOptions{})
		if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", tc.label, err, tc.err)
		}
	}
	if _, err := torchcsv.Titan(res.Schedule, torchcsv.TitanOptions{}); err == nil || !strings.Contains(err.Error(), "the forward blocks form 2 chains") {
		t.Errorf("x-shape: got %v", err)
	}
}

// The fields of torchtitan's TrainingConfig and ParallelismConfig
// (torchtitan/config/configs.py at torchcsv.TitanCommit, 2026-08-21), as
// written there: the bundle sets only fields of this list, which is
// torchtitan's today. Both classes are dataclasses with slots, so an
// assignment to any other name fails in torchtitan.
var titanFields = map[string][]string{
	"training": {"num_tokens_per_microbatch_per_dp_rank", "num_tokens_per_train_step", "max_context_length", "max_norm",
		"steps", "enable_cpu_offload", "disable_cuda_graphs", "dtype", "mixed_precision_param", "mixed_precision_reduce",
		"gc_freq", "gc_debug"},
	"parallelism": {"data_parallel_replicate_degree", "data_parallel_shard_degree", "fsdp_reshard_after_forward",
		"enable_fsdp_symm_mem", "tensor_parallel_degree", "enable_sequence_parallel", "spmd_backend",
		"pipeline_parallel_degree", "module_fqns_per_model_part", "pipeline_parallel_first_stage_less_layers",
		"pipeline_parallel_last_stage_less_layers", "pipeline_parallel_layers_per_stage", "pipeline_parallel_schedule",
		"pipeline_parallel_schedule_csv", "num_pp_microbatches", "context_parallel_degree",
		"context_parallel_load_balancer", "context_parallel_ptrr_mask_key", "expert_parallel_degree"},
}

// The bundle's settings name today's fields only (not the removed
// training.local_batch_size and parallelism.pipeline_parallel_microbatch_size),
// and, where Python is installed, run: tessel_pipeline sets them on a
// stand-in of torchtitan's configuration whose classes have exactly those
// slots, and the values read back.
func TestTitanKeys(t *testing.T) {
	if torchcsv.TitanCommit != "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a" {
		t.Fatalf("the field list above is of torchtitan %s: check it against configs.py at %s", "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a", torchcsv.TitanCommit)
	}
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.V})
	if err != nil {
		t.Fatal(err)
	}
	res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Memory: 8}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := torchcsv.Titan(res.Schedule, torchcsv.TitanOptions{Modules: [][]string{{"tok_embeddings", "layers.0"}, {"layers.1"}, {"layers.2"}, {"layers.3"},
		{"layers.4"}, {"layers.5"}, {"layers.6"}, {"layers.7", "norm", `out"put`}}})
	if err != nil {
		t.Fatal(err)
	}
	py := string(b.Config(`/data/run "7"/schedule.csv`))
	known := map[string]bool{}
	for section, fields := range titanFields {
		for _, f := range fields {
			known[section+"."+f] = true
		}
	}
	set := 0
	for _, line := range strings.Split(py, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "config.") {
			continue
		}
		field, _, _ := strings.Cut(strings.TrimPrefix(line, "config."), " =")
		if !known[field] {
			t.Errorf("sets %s, no field of torchtitan's configuration", field)
		}
		set++
	}
	if set != 5 || strings.Contains(py, "local_batch_size") || strings.Contains(py, "pipeline_parallel_microbatch_size") {
		t.Errorf("%d settings:\n%s", set, py)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		testskip.Skip(t, "no python3: the settings were checked by name only")
	}
	var stub strings.Builder
	for section, fields := range titanFields {
		quoted := make([]string, len(fields))
		for i, f := range fields {
			quoted[i] = strconv.Quote(f)
		}
		fmt.Fprintf(&stub, "class %s:\n    __slots__ = (%s,)\n", section, strings.Join(quoted, ", "))
	}
	stub.WriteString("class Config:\n    __slots__ = ('training', 'parallelism')\n" +
		"config = Config()\nconfig.training = training()\nconfig.parallelism = parallelism()\n" +
		py + "\nout = tessel_pipeline(config).parallelism\n" +
		"print(out.pipeline_parallel_degree, out.pipeline_parallel_schedule, out.pipeline_parallel_schedule_csv, out.num_pp_microbatches, out.module_fqns_per_model_part[7])\n")
	cmd := exec.Command(python, "-c", stub.String())
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, got)
	}
	if want := `4 ZBVZeroBubble /data/run "7"/schedule.csv 8 ['layers.7', 'norm', 'out"put']` + "\n"; string(got) != want {
		t.Errorf("python3 read back %q, want %q", got, want)
	}
}

// A hostile output path or module name cannot put code into the Python
// file torchtitan loads: each is one Python string literal (which reads
// back as the bytes given, under Python's surrogateescape), the comments
// stay comments, and a pasted flag is one shell word.
func TestTitanHostileStrings(t *testing.T) {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 4, Chunks: 2, Order: placement.V})
	if err != nil {
		t.Fatal(err)
	}
	res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Memory: 8}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hostile := []string{
		"tt\n[evil]\nx = 1\n#/schedule.csv",
		"tt\n\nimport os; os.system('touch pwned')\n#/schedule.csv",
		`tt"""; import os #\"/schedule.csv`,
		"tt\r\x00\x1b\xff\u2028\x0c/schedule.csv",
		"tt/$(touch pwned)/`id`/it's/schedule.csv",
	}
	python, pyErr := exec.LookPath("python3")
	for _, path := range hostile {
		modules := [][]string{{"tok_embeddings", "layers.0"}, {"layers.1"}, {"layers.2"}, {"layers.3"},
			{"layers.4"}, {"layers.5"}, {"layers.6"}, {"layers.7", "norm", path}}
		b, err := torchcsv.Titan(res.Schedule, torchcsv.TitanOptions{Modules: modules})
		if err != nil {
			t.Fatal(err)
		}
		py := string(b.Config(path))
		// Without Python: every line is a comment, blank, the one def or
		// inside it.
		for _, line := range strings.Split(py, "\n") {
			if line != "" && !strings.HasPrefix(line, "#") && line != "def tessel_pipeline(config):" && !strings.HasPrefix(line, "    ") {
				t.Errorf("%q: a line outside the function and the comments: %q\n%s", path, line, py)
			}
		}
		if strings.Contains(py, "$(touch") && !strings.Contains(py, `'tt/$(touch pwned)/`+"`id`"+`/it'\''s/schedule.csv'`) {
			t.Errorf("%q: the flag is not one single-quoted shell word:\n%s", path, py)
		}
		if pyErr != nil {
			continue
		}
		// With Python: the file parses to the one function, and the path
		// and the module name read back as the bytes given.
		stub := "import ast, os, shlex\n" +
			"src = bytes.fromhex('" + fmt.Sprintf("%x", py) + "').decode('utf-8')\n" +
			"tree = ast.parse(src)\n" +
			"assert [type(n).__name__ for n in tree.body] == ['FunctionDef'], ast.dump(tree)\n" +
			"ns = {}\nexec(compile(tree, 'torchtitan_pipeline.py', 'exec'), ns)\n" +
			"class P: pass\nclass C: pass\nc = C(); c.parallelism = P()\n" +
			"out = ns['tessel_pipeline'](c).parallelism\n" +
			"want = os.fsdecode(bytes.fromhex('" + fmt.Sprintf("%x", path) + "'))\n" +
			"assert out.pipeline_parallel_schedule_csv == want, (out.pipeline_parallel_schedule_csv, want)\n" +
			"assert out.module_fqns_per_model_part[7][2] == want\n" +
			"flags = [l for l in src.split('\\n') if l.startswith('# The same from the command line: ')][0]\n" +
			"words = shlex.split(flags[len('# The same from the command line: '):].split(' (')[0])\n" +
			"if '--parallelism.pipeline_parallel_schedule_csv' in words:\n" +
			"    assert words[words.index('--parallelism.pipeline_parallel_schedule_csv') + 1] == want, words\n" +
			"print('ok')\n"
		got, err := exec.Command(python, "-c", stub).CombinedOutput()
		if err != nil || string(got) != "ok\n" {
			t.Errorf("%q: python3: %v\n%s\n%s", path, err, got, py)
		}
	}
	if pyErr != nil {
		testskip.Skip(t, "no python3: the settings were checked line by line only")
	}
}
