package torchcsv

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/schedule"
)

// torchtitan builds a rank's pipeline stages from the model before it
// reads a schedule CSV: which stages a rank holds follows the schedule
// style, "v" for the schedule classes ScheduleZBVZeroBubble and
// ScheduleDualPipeV and "loop" for every other (torchtitan's
// pipeline_module_split), while the CSV then maps each stage to the rank
// whose row runs it. The two must agree, or a rank runs a stage it never
// built.

// Schedule styles of torchtitan.
const (
	StyleLoop = "loop"
	StyleV    = "v"
)

// TitanStageIDs is the stages torchtitan gives pipeline rank rank of size
// ranks for numStages stages in style: loop, rank + s·ranks for every s;
// v (two stages per rank), rank and numStages−1−rank. An error where
// torchtitan's assertions fail.
func TitanStageIDs(rank, ranks, numStages int, style string) ([]int, error) {
	if ranks < 1 || numStages%ranks != 0 {
		return nil, fmt.Errorf("%d stages on %d ranks: torchtitan needs the stages evenly divisible by the ranks", numStages, ranks)
	}
	per := numStages / ranks
	switch style {
	case StyleLoop:
		ids := make([]int, per)
		for s := range per {
			ids[s] = rank + s*ranks
		}
		return ids, nil
	case StyleV:
		if per != 2 {
			return nil, fmt.Errorf("%d stages per rank: torchtitan's V style holds two", per)
		}
		return []int{rank, numStages - 1 - rank}, nil
	}
	return nil, fmt.Errorf("style %q: torchtitan has loop and v", style)
}

// TitanOptions are what a schedule does not say.
type TitanOptions struct {
	// Modules, when given, are the module names (fully qualified, as the
	// layer profile names its layers) of every stage in pipeline order:
	// torchtitan's module_fqns_per_model_part.
	Modules [][]string
	// StageDevices, when given with Modules, are the devices of those
	// stages (a partition's), checked against the schedule's.
	StageDevices []int
}

// TitanBundle is what torchtitan needs to run a schedule: the CSV and the
// settings that make it build the stages the CSV runs.
type TitanBundle struct {
	Table         *Table
	Ranks         int
	Stages        int
	StagesPerRank int
	Style         string // StyleLoop or StyleV
	// Schedule is the pipeline_parallel_schedule to name: with a CSV it
	// only sets the style (torchtitan runs the CSV with its
	// _PipelineScheduleRuntime).
	Schedule     string
	MicroBatches int
	StageRank    []int // the rank of every stage, equal to torchtitan's for Style
	Modules      [][]string
	// Recomputed are the transformer blocks (module names) that a
	// per-stage recompute policy recomputes in every micro-batch: every
	// stage's first RecomputedLayers transformer layers (names that
	// partition.MegatronSymbol reads as t, torchtitan's "layers.N"); nil
	// where the schedule has no policy.
	Recomputed []string
}

// Titan makes the torchtitan bundle of a verified schedule of a chain of
// stages (Export). It refuses, in one line, what torchtitan cannot build:
// a placement that is no chain of stages, a stage count not divisible by
// the ranks, or a stage-to-rank map that is neither torchtitan's loop nor
// its V.
func Titan(s *schedule.Schedule, opt TitanOptions) (*TitanBundle, error) {
	t, err := Export(s)
	if err != nil {
		return nil, err
	}
	sum, err := Validate(t)
	if err != nil {
		return nil, err
	}
	b := &TitanBundle{Table: t, Ranks: sum.Ranks, Stages: sum.Stages, MicroBatches: sum.MicroBatches, StageRank: sum.StageRank}
	if sum.Stages%sum.Ranks != 0 {
		return nil, fmt.Errorf("%d stages on %d ranks: torchtitan builds the same number of stages on every rank (stages divisible by ranks)", sum.Stages, sum.Ranks)
	}
	b.StagesPerRank = sum.Stages / sum.Ranks
	for _, style := range []string{StyleLoop, StyleV} {
		if titanMatches(sum, style) {
			b.Style = style
			break
		}
	}
	switch {
	case b.Style == StyleV:
		b.Schedule = "ZBVZeroBubble"
	case b.Style == StyleLoop && b.StagesPerRank == 1:
		b.Schedule = "1F1B"
	case b.Style == StyleLoop:
		b.Schedule = "Interleaved1F1B"
	default:
		return nil, fmt.Errorf("stage-to-rank map %v is neither torchtitan's loop (stage s on rank s mod %d) nor its V (two stages per rank, rank r holding r and %d−r)",
			sum.StageRank, sum.Ranks, sum.Stages-1)
	}
	if opt.Modules != nil {
		if len(opt.Modules) != sum.Stages {
			return nil, fmt.Errorf("module names of %d stages for a schedule of %d stages", len(opt.Modules), sum.Stages)
		}
		for i, d := range opt.StageDevices {
			if i < sum.Stages && d != sum.StageRank[i] {
				return nil, fmt.Errorf("stage %d of the split is on device %d, but on rank %d in the schedule: not the split of this schedule", i, d, sum.StageRank[i])
			}
		}
		for i, m := range opt.Modules {
			if len(m) == 0 {
				return nil, fmt.Errorf("stage %d has no modules", i)
			}
		}
		b.Modules = opt.Modules
	}
	if err := b.recomputed(s); err != nil {
		return nil, err
	}
	return b, nil
}

// recomputed sets b.Recomputed from the schedule's per-stage policy: the
// first k transformer blocks of every stage that recomputes k layers.
// torchtitan checkpoints transformer blocks only, so a stage with fewer
// than k, or a policy without module names, is an error.
func (b *TitanBundle) recomputed(s *schedule.Schedule) error {
	stages, err := Chain(s.Placement)
	if err != nil {
		return err
	}
	ks := RecomputedLayers(s.Placement, stages)
	if ks == nil {
		return nil
	}
	if b.Modules == nil {
		return fmt.Errorf("the schedule recomputes layers of every micro-batch, stage by stage (%v): give the split (--split) so that the settings name the transformer blocks to recompute", ks)
	}
	for i, k := range ks {
		var names []string
		for _, n := range b.Modules[i] {
			if c, ok := partition.MegatronSymbol(n); ok && c == 't' && len(names) < k {
				names = append(names, n)
			}
		}
		if len(names) < k {
			return fmt.Errorf("stage %d recomputes %d layers, but holds %d transformer blocks (torchtitan checkpoints those only)", i, k, len(names))
		}
		b.Recomputed = append(b.Recomputed, names...)
	}
	return nil
}

// titanMatches says whether every rank holds the stages torchtitan gives
// it in style.
func titanMatches(sum *Summary, style string) bool {
	for r := range sum.Ranks {
		ids, err := TitanStageIDs(r, sum.Ranks, sum.Stages, style)
		if err != nil {
			return false
		}
		for _, s := range ids {
			if sum.StageRank[s] != r {
				return false
			}
		}
	}
	return true
}

// TitanCommit is the torchtitan commit whose configuration fields the
// bundle sets (torchtitan/config/configs.py, 2026-08-21): since February
// 2026 torchtitan reads no TOML job file, only Python configurations
// (--module, --config) and the frozen --section.option flags; since August
// 2026 it counts micro-batches in parallelism.num_pp_microbatches and
// sizes them in tokens (training.num_tokens_per_microbatch_per_dp_rank).
const TitanCommit = "b5bcd76c66d0acb1a08b176d9639425bc55e0b2a"

// TitanSettingsFile is the name of the bundle's settings in its folder.
const TitanSettingsFile = "torchtitan_pipeline.py"

// titanSetting is one field the bundle sets: its path in torchtitan's
// Trainer.Config, its value as Python and as one shell word (flag; ""
// where it cannot be a flag in a one-line comment).
type titanSetting struct{ field, value, flag string }

// settings are the fields the bundle sets, in order. Strings are escaped
// for where they land (a path or a module name may hold anything): Python
// string literals in the function, shell words in the flags.
func (b *TitanBundle) settings(csvPath string) []titanSetting {
	ints := func(field string, v int) titanSetting {
		return titanSetting{field, strconv.Itoa(v), strconv.Itoa(v)}
	}
	strs := func(field, v string) titanSetting {
		return titanSetting{field, textfmt.PythonString(v), shellWord(v)}
	}
	out := []titanSetting{
		ints("parallelism.pipeline_parallel_degree", b.Ranks),
		strs("parallelism.pipeline_parallel_schedule", b.Schedule),
		strs("parallelism.pipeline_parallel_schedule_csv", csvPath),
		ints("parallelism.num_pp_microbatches", b.MicroBatches),
	}
	if b.Modules != nil {
		parts := make([]string, len(b.Modules))
		for i, m := range b.Modules {
			q := make([]string, len(m))
			for j, n := range m {
				q[j] = textfmt.PythonString(n)
			}
			parts[i] = "        [" + strings.Join(q, ", ") + "],\n"
		}
		out = append(out, titanSetting{field: "parallelism.module_fqns_per_model_part", value: "[\n" + strings.Join(parts, "") + "    ]"})
	}
	return out
}

// shellWord is s as one shell word: in double quotes where no character
// of s is special to a shell (as the flags were always written), else in
// single quotes (textfmt.ShellQuote), so that a pasted flag runs nothing;
// "" where s holds a character that is not printable (a newline would end
// the comment the flags are written in).
func shellWord(s string) string {
	switch {
	case strings.ContainsFunc(s, func(r rune) bool { return r == utf8.RuneError || !strconv.IsPrint(r) }):
		return ""
	case s != "" && textfmt.ShellQuote(s) == s:
		return `"` + s + `"`
	}
	return textfmt.ShellQuote(s)
}

// pythonComment is s for a Python comment: as it is, or, where it holds
// anything a Python string would escape (a newline would end the comment,
// a byte that is not UTF-8 would make the file unreadable), as that
// string.
func pythonComment(s string) string {
	if q := textfmt.PythonString(s); q != `"`+s+`"` {
		return q
	}
	return s
}

// Config is the bundle's torchtitan settings, with csvPath the CSV's path
// as torchtitan will open it: a Python function that sets them on the
// Trainer.Config of a torchtitan configuration (torchtitan's way of
// configuring a run since it dropped TOML job files), and in a comment
// the same as command-line flags.
func (b *TitanBundle) Config(csvPath string) []byte {
	var w bytes.Buffer
	fmt.Fprintf(&w, "# torchtitan settings for the schedule in %s (written by tessel export --format torchtitan)\n", pythonComment(csvPath))
	fmt.Fprintf(&w, "# Fields of torchtitan's Trainer.Config as of torchtitan commit %s (2026-08-21):\n", TitanCommit[:7])
	fmt.Fprintf(&w, "# return tessel_pipeline(config) from your configuration function (--module, --config).\n")
	fmt.Fprintf(&w, "# %d ranks, %d stages (%d per rank, %s style), %d micro-batches; the micro-batch size is\n", b.Ranks, b.Stages, b.StagesPerRank, b.Style, b.MicroBatches)
	fmt.Fprintf(&w, "# training.num_tokens_per_microbatch_per_dp_rank, the configuration's own.\n")
	for r := range b.Ranks {
		ids, _ := TitanStageIDs(r, b.Ranks, b.Stages, b.Style)
		parts := make([]string, len(ids))
		for i, s := range ids {
			parts[i] = strconv.Itoa(s)
		}
		fmt.Fprintf(&w, "# rank %d: stages %s\n", r, strings.Join(parts, ", "))
	}
	var flags, inConfig []string
	for _, s := range b.settings(csvPath) {
		if s.flag == "" {
			inConfig = append(inConfig, strings.TrimPrefix(s.field, "parallelism."))
			continue
		}
		flags = append(flags, "--"+s.field+" "+s.flag)
	}
	fmt.Fprintf(&w, "# The same from the command line: %s", strings.Join(flags, " "))
	if b.Recomputed != nil {
		inConfig = append(inConfig, "activation_checkpoint")
	}
	if inConfig != nil {
		them := "it"
		if len(inConfig) > 1 {
			them = "them"
		}
		fmt.Fprintf(&w, " (%s: set %s in the configuration)", strings.Join(inConfig, " and "), them)
	}
	if b.Recomputed != nil {
		b.writeRecompute(&w)
	}
	w.WriteString("\n\n\ndef tessel_pipeline(config):\n")
	w.WriteString("    \"\"\"Sets the pipeline of config, a torchtitan Trainer.Config, to run the schedule's CSV.\"\"\"\n")
	for _, s := range b.settings(csvPath) {
		if s.field == "parallelism.pipeline_parallel_schedule" {
			fmt.Fprintf(&w, "    # The schedule's name sets the %s style of the stages; the order is the CSV's.\n", b.Style)
		}
		fmt.Fprintf(&w, "    config.%s = %s\n", s.field, s.value)
	}
	if b.Recomputed != nil {
		w.WriteString("    # The plan's per-stage recompute policy (TesselRecompute above).\n")
		w.WriteString("    config.activation_checkpoint = TesselRecompute.Config()\n")
	}
	w.WriteString("    return config\n")
	return w.Bytes()
}

// writeRecompute writes the activation-checkpointing policy of a per-stage
// recompute policy: a subclass of torchtitan's FullAC (its extension
// point since torchtitan dropped layer-selective checkpointing) that
// checkpoints the blocks named and leaves the others, the same class on
// every rank, as each rank wraps only the blocks it holds.
func (b *TitanBundle) writeRecompute(w *bytes.Buffer) {
	names := make([]string, len(b.Recomputed))
	for i, n := range b.Recomputed {
		names[i] = "            " + textfmt.PythonString(n) + ",\n"
	}
	w.WriteString("\n\n\nfrom dataclasses import dataclass\n\n")
	w.WriteString("from torchtitan.distributed.activation_checkpoint import FullAC\n\n\n")
	w.WriteString("class TesselRecompute(FullAC):\n")
	w.WriteString("    \"\"\"Recomputes, in every micro-batch, the transformer blocks of the plan's per-stage\n")
	w.WriteString("    policy (each stage's first layers, as planned) and keeps the others' activations.\"\"\"\n\n")
	w.WriteString("    RECOMPUTED = frozenset(\n        {\n" + strings.Join(names, "") + "        }\n    )\n\n")
	w.WriteString("    @dataclass(kw_only=True, slots=True)\n    class Config(FullAC.Config):\n        pass\n\n")
	w.WriteString("    def _wrap_block(self, module, *, base_fqn=None):\n")
	w.WriteString("        if base_fqn in self.RECOMPUTED:\n")
	w.WriteString("            return FullAC._wrap_block(self, module, base_fqn=base_fqn)\n")
	w.WriteString("        return module")
}
