package torchcsv

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/internal/textfmt"
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
	return b, nil
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

// tomlComment is s for a TOML comment: as it is, or, where it holds a
// control character (a newline would end the comment), escaped as in a
// TOML string.
func tomlComment(s string) string {
	if q := textfmt.TOMLString(s); q[1:len(q)-1] != s && strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return q[1 : len(q)-1]
	}
	return s
}

// Config is the bundle's torchtitan settings as TOML (the [parallelism]
// table of a torchtitan job file), with csvPath the CSV's path as
// torchtitan will open it.
func (b *TitanBundle) Config(csvPath string) []byte {
	var w bytes.Buffer
	fmt.Fprintf(&w, "# torchtitan settings for the schedule in %s (written by tessel export --format torchtitan)\n", tomlComment(csvPath))
	fmt.Fprintf(&w, "# %d ranks, %d stages (%d per rank, %s style), %d micro-batches: set\n", b.Ranks, b.Stages, b.StagesPerRank, b.Style, b.MicroBatches)
	fmt.Fprintf(&w, "# training.local_batch_size / parallelism.pipeline_parallel_microbatch_size = %d.\n", b.MicroBatches)
	for r := range b.Ranks {
		ids, _ := TitanStageIDs(r, b.Ranks, b.Stages, b.Style)
		parts := make([]string, len(ids))
		for i, s := range ids {
			parts[i] = strconv.Itoa(s)
		}
		fmt.Fprintf(&w, "# rank %d: stages %s\n", r, strings.Join(parts, ", "))
	}
	w.WriteString("[parallelism]\n")
	fmt.Fprintf(&w, "pipeline_parallel_degree = %d\n", b.Ranks)
	fmt.Fprintf(&w, "pipeline_parallel_schedule = %q # sets the %s style of the stages; the order is the CSV's\n", b.Schedule, b.Style)
	fmt.Fprintf(&w, "pipeline_parallel_schedule_csv = %s\n", textfmt.TOMLString(csvPath))
	if b.Modules != nil {
		w.WriteString("module_fqns_per_model_part = [\n")
		for _, m := range b.Modules {
			q := make([]string, len(m))
			for i, n := range m {
				q[i] = textfmt.TOMLString(n)
			}
			fmt.Fprintf(&w, "  [%s],\n", strings.Join(q, ", "))
		}
		w.WriteString("]\n")
	}
	return w.Bytes()
}
