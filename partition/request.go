package partition

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
)

// InputError is a split refused for what was asked rather than for the
// work: a model file that does not load, settings that do not go
// together, a model the objective does not apply to. Its message is one
// line (naming tessel partition's flags, as the package's other errors
// do); tessel partition exits 2 on it.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, args ...any) error {
	return &InputError{fmt.Errorf(format, args...)}
}

// Model is a model file as the commands name it: its path, the settings
// that override its own (Overrides) and a file of a given split to
// evaluate beside the others (Tarnawski et al.'s expert format; "" for
// none).
type Model struct {
	Path      string
	Overrides Overrides
	Expert    string
	// Warn, when set, takes each warning about the model's values
	// (UnitWarnings).
	Warn func(string)
}

// Load reads the model with its overrides (LoadWith). Every failure is
// an *InputError.
func (m Model) Load() (*Graph, error) {
	if m.Path == "" {
		return nil, inputErrorf("no model: give --model FILE (a layer profile or a graph in Tarnawski et al.'s format)")
	}
	g, err := LoadWith(m.Path, m.Overrides)
	if err != nil {
		return nil, &InputError{err}
	}
	if m.Warn != nil {
		for _, w := range UnitWarnings(g) {
			m.Warn(w)
		}
	}
	return g, nil
}

// expert reads the given split for g, nil without one.
func (m Model) expert(g *Graph) (*Split, error) {
	if m.Expert == "" {
		return nil, nil
	}
	s, err := LoadAssignment(m.Expert, g)
	if err != nil {
		return nil, &InputError{err}
	}
	return s, nil
}

// RunModel is Run on the model file m with its expert split: a model's
// own CPU cores are left out where opt asks for chunks and m does not set
// them. Errors of what was asked are *InputError (among them Run's
// ErrUnsplittable and *ChunkMemoryError); a *NoFitError comes back
// naming the model.
func RunModel(ctx context.Context, m Model, opt Options) (*Report, error) {
	if err := opt.Check(); err != nil {
		return nil, &InputError{err}
	}
	g, err := m.Load()
	if err != nil {
		return nil, err
	}
	if m.Overrides.CPUs < 0 && opt.Chunks > 1 {
		g.CPUs = 0
	}
	if opt.Chunks > 1 && g.CPUs > 0 {
		return nil, inputErrorf("--chunks places stages on accelerators only: give --cpus 0")
	}
	if opt.Expert, err = m.expert(g); err != nil {
		return nil, err
	}
	res, err := Run(ctx, g, opt)
	var cm *ChunkMemoryError
	var nf *NoFitError
	switch {
	case errors.As(err, &nf):
		return nil, fmt.Errorf("%s: %w", m.Path, err)
	case errors.As(err, &cm):
		return nil, inputErrorf("%s: %v (fewer --chunks or a larger --memory)", m.Path, err)
	case errors.Is(err, ErrUnsplittable):
		return nil, inputErrorf("%s: %v", m.Path, err)
	}
	return res, err
}

// SampleLatencyRequest is tessel partition --objective latency's setting
// beside the model: Tarnawski et al.'s memory-bound setting (§7), a factor
// on every transfer cost, and q (Subgraphs) where the split need not be
// contiguous.
type SampleLatencyRequest struct {
	PaperMemory   bool
	CommScale     float64
	NonContiguous bool
	Subgraphs     int
	TimeLimit     time.Duration
	Progress      func(best, lowerBound float64)
}

// RunModelSampleLatency is RunSampleLatency on the model file m (an
// inference graph) in the setting r asks for. Errors of what was asked
// are *InputError.
func RunModelSampleLatency(ctx context.Context, m Model, r SampleLatencyRequest) (*SampleLatencyReport, error) {
	switch {
	case r.TimeLimit <= 0:
		return nil, inputErrorf("--time-limit must be positive, got %v", r.TimeLimit)
	case r.Subgraphs < 1:
		return nil, inputErrorf("--subgraphs must be at least 1, got %d", r.Subgraphs)
	case !(r.CommScale > 0) || math.IsInf(r.CommScale, 0):
		return nil, inputErrorf("--comm-scale must be a finite number > 0, got %v", r.CommScale)
	}
	g, err := m.Load()
	if err != nil {
		return nil, err
	}
	if g.Training() {
		return nil, inputErrorf("%s: --objective latency is for inference graphs: this one has backward nodes", m.Path)
	}
	if r.PaperMemory {
		if err := g.UsePaperSampleLatencySetting(); err != nil {
			return nil, inputErrorf("%s: %v", m.Path, err)
		}
	}
	g.ScaleComm(r.CommScale)
	expert, err := m.expert(g)
	if err != nil {
		return nil, err
	}
	q := 1
	if r.NonContiguous {
		q = r.Subgraphs
	}
	res, err := RunSampleLatency(ctx, g, SampleLatencyOptions{Subgraphs: q, TimeLimit: r.TimeLimit, Expert: expert, Progress: r.Progress})
	if errors.Is(err, ErrUnsplittable) {
		return nil, inputErrorf("%s: %v", m.Path, err)
	}
	return res, err
}
