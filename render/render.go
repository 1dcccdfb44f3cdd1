// Package render draws schedules: as text in the style of the Tessel
// paper's figures (Text), as an SVG Gantt chart (SVG), as a self-contained
// HTML page (HTML) and as a Chrome/Perfetto trace (Trace). It reads a
// schedule and its placement only; it draws an invalid schedule as it is
// (overlaps show), and refuses only what cannot be drawn: no schedule, no
// placement or an invalid placement. Same schedule, same bytes.
package render

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// check rejects what no rendering can draw: no schedule, no placement or
// an invalid one. Anything else (even an invalid schedule) is drawn as it
// is.
func check(s *schedule.Schedule) error {
	if s == nil || s.Placement == nil {
		return fmt.Errorf("render: no placement")
	}
	if err := s.Placement.Validate(); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	return nil
}

// sorted is s's instances in file order (Schedule.Sort), s untouched.
func sorted(s *schedule.Schedule) []schedule.Instance {
	c := *s
	c.Instances = slices.Clone(s.Instances)
	c.Sort()
	return c.Instances
}

// linkRows is the links the renderings draw a row for, in order (from
// device, then to device), and each transfer's row: only for a placement
// whose blocks chose their devices (placement's HasCandidates), where
// transfers take time; none otherwise, so that the renderings of pinned
// placements stay as they were.
func linkRows(s *schedule.Schedule) (links []placement.Link, spans []schedule.TransferSpan) {
	if !s.Placement.HasCandidates() {
		return nil, nil
	}
	spans = schedule.Transfers(s)
	for _, t := range spans {
		if !slices.Contains(links, t.Link) {
			links = append(links, t.Link)
		}
	}
	slices.SortFunc(links, func(a, b placement.Link) int { return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To)) })
	return links, spans
}

// transferName is how the renderings name a transfer: "op3→op7^0".
func transferName(p *placement.Placement, t schedule.TransferSpan) string {
	return fmt.Sprintf("%s→%s^%d", p.Blocks[t.Dep.From].ID, p.Blocks[t.Dep.To].ID, t.Micro)
}

// deviceList formats a device group: "device 2" or "devices [0, 1]".
func deviceList(devs []int) string {
	if len(devs) == 1 {
		return fmt.Sprintf("device %d", devs[0])
	}
	return "devices " + intList(devs)
}

// intList formats [1 2 3] as "[1, 2, 3]".
func intList(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
