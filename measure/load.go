package measure

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tessel-pp/tessel/limits"
	"github.com/tessel-pp/tessel/partition"
	"github.com/tessel-pp/tessel/runtimegen"
)

// Load reads one run: the programs (and stages.json) that tessel gen
// --model wrote into programs, the traces in traces, and the costs of
// the model file g (ModelCosts).
func Load(programs, traces string, g *partition.Graph) (*Run, error) {
	progs, err := runtimegen.LoadPrograms(programs)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(programs, runtimegen.StagesFile)
	data, err := limits.ReadFile(path, limits.FileBytes)
	if err != nil {
		return nil, fmt.Errorf("%w (the programs of tessel gen --model have it)", err)
	}
	dec, err := runtimegen.ReadStages(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if g.Profile != nil && g.Profile.Config != nil {
		// Layer names alone do not tell two decoders apart: the times
		// of another config would be charged without a word.
		if diff := dec.Config.Differences(*g.Profile.Config); diff != nil {
			return nil, fmt.Errorf("%s: the programs run another decoder than the model file profiled (%s)", programs, strings.Join(diff, "; "))
		}
	}
	costs, err := ModelCosts(g, dec, progs[0].Blocks)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", programs, err)
	}
	ts, err := LoadTraces(traces, progs)
	if err != nil {
		return nil, err
	}
	return &Run{Name: filepath.Base(filepath.Clean(programs)), Progs: progs, Traces: ts, Costs: costs, Decoder: dec}, nil
}
