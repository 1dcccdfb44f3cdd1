package schedule

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tessel-pp/tessel/placement"
)

// WriteDecisionsText names the instances s offloads and recomputes, one
// line per forward block: its micro-batches as ranges ("0-3 5"). The first
// line of each action carries its label (offloaded, recomputed); nothing
// is written for a schedule without decisions.
func WriteDecisionsText(w io.Writer, s *Schedule) {
	for _, a := range []placement.Action{placement.Offload, placement.Recompute} {
		micros := map[int][]int{}
		var blocks []int
		for _, d := range s.Decisions {
			if d.Action != a {
				continue
			}
			if _, ok := micros[d.Block]; !ok {
				blocks = append(blocks, d.Block)
			}
			micros[d.Block] = append(micros[d.Block], d.Micro)
		}
		slices.Sort(blocks)
		label := map[placement.Action]string{placement.Offload: "offloaded", placement.Recompute: "recomputed"}[a]
		for k, b := range blocks {
			ms := micros[b]
			slices.Sort(ms)
			if k > 0 {
				label = ""
			}
			fmt.Fprintf(w, "%-12s %s × %d: micro-batches %s\n", label, s.Placement.Blocks[b].ID, len(ms), ranges(ms))
		}
	}
}

// ranges writes sorted integers as ranges: "0-3 5 7-9".
func ranges(xs []int) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		} else {
			parts = append(parts, fmt.Sprint(xs[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, " ")
}

// DecisionsText counts the instances s offloads and recomputes, in words:
// "3 activations offloaded, 1 recomputed".
func (s *Schedule) DecisionsText() string {
	off, rec := s.Count()
	return fmt.Sprintf("%d activations offloaded, %d recomputed", off, rec)
}
