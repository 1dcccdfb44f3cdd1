package partition_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tessel-pp/tessel/partition"
)

// TestRequestInputErrors checks that what the caller asked wrong comes
// back as an *InputError with the line the command prints.
func TestRequestInputErrors(t *testing.T) {
	ctx := context.Background()
	gpt := partition.Model{Path: "../testdata/models/gpt-like.json", Overrides: partition.Overrides{CPUs: -1}}
	bert := partition.Model{Path: "../testdata/dnn-partitioning/layer/bert24_training.json", Overrides: partition.Overrides{CPUs: -1}}
	bertCPUs := bert
	bertCPUs.Overrides.CPUs = 2
	ok := partition.Options{Chunks: 1, Order: "loop", IPTimeLimit: time.Minute}
	latency := partition.SampleLatencyRequest{CommScale: 1, Subgraphs: 2, TimeLimit: time.Second}
	for _, tc := range []struct {
		name string
		run  func() error
		want string
	}{
		{"no model", func() error { _, err := partition.RunModel(ctx, partition.Model{}, ok); return err },
			"no model: give --model FILE"},
		{"missing file", func() error {
			_, err := partition.RunModel(ctx, partition.Model{Path: "no-such-model.json"}, ok)
			return err
		}, "no-such-model.json"},
		{"bad options", func() error {
			_, err := partition.RunModel(ctx, gpt, partition.Options{Chunks: 0, Order: "loop", IPTimeLimit: time.Minute})
			return err
		},
			"--chunks must be at least 1, got 0"},
		{"chunks on CPUs", func() error {
			_, err := partition.RunModel(ctx, bertCPUs, partition.Options{Chunks: 2, Order: "loop", IPTimeLimit: time.Minute})
			return err
		},
			"--chunks places stages on accelerators only: give --cpus 0"},
		{"latency time limit", func() error {
			r := latency
			r.TimeLimit = 0
			_, err := partition.RunModelSampleLatency(ctx, gpt, r)
			return err
		}, "--time-limit must be positive, got 0s"},
		{"latency subgraphs", func() error {
			r := latency
			r.Subgraphs = 0
			_, err := partition.RunModelSampleLatency(ctx, gpt, r)
			return err
		}, "--subgraphs must be at least 1, got 0"},
		{"latency comm scale", func() error {
			r := latency
			r.CommScale = -1
			_, err := partition.RunModelSampleLatency(ctx, gpt, r)
			return err
		}, "--comm-scale must be a finite number > 0, got -1"},
		{"latency of a training graph", func() error { _, err := partition.RunModelSampleLatency(ctx, bert, latency); return err },
			"bert24_training.json: --objective latency is for inference graphs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.run()
			var in *partition.InputError
			if !errors.As(err, &in) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v (%T), want an *InputError with %q", err, err, tc.want)
			}
		})
	}
}

// TestRunModel checks that RunModel is Run on the loaded model, with the
// warnings handed to Warn.
func TestRunModel(t *testing.T) {
	m := partition.Model{Path: "../testdata/models/gpt-like.json", Overrides: partition.Overrides{CPUs: -1}}
	var warned []string
	m.Warn = func(w string) { warned = append(warned, w) }
	ok := partition.Options{Chunks: 1, Order: "loop", IPTimeLimit: time.Minute}
	got, err := partition.RunModel(context.Background(), m, ok)
	if err != nil {
		t.Fatal(err)
	}
	g, err := partition.LoadWith(m.Path, m.Overrides)
	if err != nil {
		t.Fatal(err)
	}
	want, err := partition.Run(context.Background(), g, ok)
	if err != nil {
		t.Fatal(err)
	}
	if got.Model != want.Model || got.Accelerators != want.Accelerators || got.Split.MaxLoad != want.Split.MaxLoad {
		t.Errorf("RunModel: %s on %d, max load %v; Run: %s on %d, max load %v", got.Model, got.Accelerators, got.Split.MaxLoad, want.Model, want.Accelerators, want.Split.MaxLoad)
	}
	if len(warned) != len(partition.UnitWarnings(g)) {
		t.Errorf("%d warnings handed to Warn, the model has %d", len(warned), len(partition.UnitWarnings(g)))
	}
}
