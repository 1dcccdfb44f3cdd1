package report

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/internal/placementtest"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/repetend"
	"github.com/tessel-pp/tessel/search"
	"github.com/tessel-pp/tessel/spec"
)

// SearchText is tessel search's report: the question, the repetend, the
// picture and the figures (its bytes are pinned by cmd/tessel's golden
// files; here its parts and what the options change).
func TestWriteText(t *testing.T) {
	p := placementtest.Builtin(t, "v-shape", placement.Options{Devices: 4})
	res, err := search.Run(context.Background(), spec.Spec{Placement: p, MicroBatches: 8, Memory: 4}, search.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		o       TextOptions
		want    []string
		without []string
	}{
		{"plain", TextOptions{Placement: p, Memory: 4, MicroBatches: 8, Strategy: repetend.StrategyJoint, Units: 48},
			[]string{"tessel search: v-shape, 4 devices, memory 4, ", ", 8 micro-batches, method joint\n\n", "\nschedule     8 micro-batches: makespan ", "\nsteady state ", "\nbuilt by     ", "\npeak memory  ", " (budget 4)\n", "\nsearch time  ", "\nproven       ", "\nverified     yes\n"},
			[]string{"decisions", "links:"}},
		{"nr and decisions", TextOptions{Placement: p, Memory: 4, NR: 3, MicroBatches: 8, Strategy: repetend.StrategyJoint, Decisions: true, Units: 48},
			[]string{", N_R ≤ 3, ", "\ndecisions    0 activations offloaded, 0 recomputed\n"}, nil},
	} {
		var b bytes.Buffer
		if err := SearchText(&b, res, SearchSummary(res, c.o.Strategy), c.o); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: no %q in\n%s", c.name, w, b.String())
			}
		}
		for _, w := range c.without {
			if strings.Contains(b.String(), w) {
				t.Errorf("%s: %q in\n%s", c.name, w, b.String())
			}
		}
	}
}
