package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
)

// TraceUnit is the length of one time unit in a trace, in microseconds:
// one unit shows as one millisecond.
const TraceUnit = 1000

// traceEvent is one event of the Chrome trace event format.
type traceEvent struct {
	Name string    `json:"name"`
	Cat  string    `json:"cat,omitempty"`
	Ph   string    `json:"ph"`
	Ts   int64     `json:"ts"`
	Dur  int64     `json:"dur,omitempty"`
	Pid  int       `json:"pid"`
	Tid  int       `json:"tid"`
	Args traceArgs `json:"args"`
}

type traceArgs struct {
	Name    string `json:"name,omitempty"`    // metadata events
	Block   string `json:"block,omitempty"`   // instances
	Micro   *int   `json:"micro,omitempty"`   // instances
	Devices []int  `json:"devices,omitempty"` // instances: the whole group
}

// Trace writes s as Chrome trace event JSON ({"traceEvents": [...]},
// for chrome://tracing or Perfetto): process 0 named after the placement,
// one thread per device (tid = device, with a thread_name event), and one
// complete ("X") event per instance, named like f3^2, on the first device
// of its block; args list the block, micro-batch and the whole device
// group, since a group block occupies all of them. Times are in TraceUnit
// microseconds per unit. One event a line, in file order. A schedule
// that offloads gets one more thread per host channel (tid = number of
// devices + the channel, named "host channel c") with an event per
// offload and reload ("offload f3^2", "reload f3^2"); a recompute is an
// event "recompute f3^2" on its device. A schedule of a placement whose
// blocks chose their devices (candidates) gets one more thread per link
// a transfer that takes time crosses (tid = twice the number of devices +
// the link's rank, named "link 0→1") with an event per transfer
// ("op3→op7^0", category "transfer"; Transfers).
func Trace(s *schedule.Schedule, w io.Writer) error {
	if err := check(s); err != nil {
		return err
	}
	p := s.Placement
	name := p.Name
	if name == "" {
		name = "(unnamed)"
	}
	events := []traceEvent{{Name: "process_name", Ph: "M", Args: traceArgs{Name: fmt.Sprintf("%s, N=%d", name, s.MicroBatches)}}}
	for d := range p.Devices {
		events = append(events, traceEvent{Name: "thread_name", Ph: "M", Tid: d, Args: traceArgs{Name: fmt.Sprintf("device %d", d)}})
	}
	ins := sorted(s)
	occ := schedule.OccupancyOf(s)
	for _, in := range ins {
		if in.Block < 0 || in.Block >= len(p.Blocks) || occ.Follower(in.Ref()) {
			continue
		}
		blk := p.Blocks[in.Block]
		micro := in.Micro
		name, cat := fmt.Sprintf("%s^%d", blk.ID, in.Micro), string(blk.Kind)
		if g, ok := occ.Partner(in.Ref()); ok {
			name, cat = schedule.PairText(s, schedule.Pair{Forward: in.Ref(), Backward: g}), "overlapped"
		}
		events = append(events, traceEvent{
			Name: name, Cat: cat, Ph: "X",
			Ts: int64(in.Start) * TraceUnit, Dur: int64(occ.Duration(p, in.Ref())) * TraceUnit, Tid: blk.Devices[0],
			Args: traceArgs{Block: blk.ID, Micro: &micro, Devices: blk.Devices},
		})
	}
	events = append(events, decisionEvents(s)...)
	events = append(events, linkEvents(s)...)
	var b bytes.Buffer
	b.WriteString("{\"traceEvents\": [\n")
	for i, e := range events {
		data, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("render trace: %w", err)
		}
		b.Write(data)
		if i < len(events)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("], \"displayTimeUnit\": \"ms\"}\n")
	_, err := w.Write(b.Bytes())
	return err
}

// decisionEvents are the trace events of s's decisions: host channel
// threads, offloads and reloads on them, recomputes on their devices.
func decisionEvents(s *schedule.Schedule) []traceEvent {
	if len(s.Decisions) == 0 {
		return nil
	}
	p := s.Placement
	var out []traceEvent
	moves := schedule.Moves(s)
	seen := map[int]bool{}
	for _, mv := range moves {
		if !seen[mv.Channel] {
			seen[mv.Channel] = true
			out = append(out, traceEvent{Name: "thread_name", Ph: "M", Tid: p.Devices + mv.Channel, Args: traceArgs{Name: fmt.Sprintf("host channel %d", mv.Channel)}})
		}
	}
	for _, mv := range moves {
		blk := p.Blocks[mv.Ref.Block]
		micro := mv.Ref.Micro
		what := "offload"
		if mv.Reload {
			what = "reload"
		}
		out = append(out, traceEvent{Name: fmt.Sprintf("%s %s^%d", what, blk.ID, micro), Cat: what, Ph: "X",
			Ts: int64(mv.Start) * TraceUnit, Dur: int64(mv.End-mv.Start) * TraceUnit, Tid: p.Devices + mv.Channel,
			Args: traceArgs{Block: blk.ID, Micro: &micro, Devices: blk.Devices}})
	}
	for _, rr := range schedule.Reruns(s) {
		blk := p.Blocks[rr.Ref.Block]
		micro := rr.Ref.Micro
		out = append(out, traceEvent{Name: fmt.Sprintf("recompute %s^%d", blk.ID, micro), Cat: "recompute", Ph: "X",
			Ts: int64(rr.Start) * TraceUnit, Dur: int64(blk.Time) * TraceUnit, Tid: blk.Devices[0],
			Args: traceArgs{Block: blk.ID, Micro: &micro, Devices: blk.Devices}})
	}
	return out
}

// linkEvents are the trace events of the link rows (linkRows).
func linkEvents(s *schedule.Schedule) []traceEvent {
	links, spans := linkRows(s)
	if len(links) == 0 {
		return nil
	}
	p := s.Placement
	tid := func(l placement.Link) int { return 2*p.Devices + slices.Index(links, l) }
	var out []traceEvent
	for _, l := range links {
		out = append(out, traceEvent{Name: "thread_name", Ph: "M", Tid: tid(l), Args: traceArgs{Name: fmt.Sprintf("link %d→%d", l.From, l.To)}})
	}
	for _, t := range spans {
		micro := t.Micro
		out = append(out, traceEvent{Name: transferName(p, t), Cat: "transfer", Ph: "X",
			Ts: int64(t.Start) * TraceUnit, Dur: int64(t.End-t.Start) * TraceUnit, Tid: tid(t.Link),
			Args: traceArgs{Block: p.Blocks[t.Dep.From].ID, Micro: &micro, Devices: []int{t.Link.From, t.Link.To}}})
	}
	return out
}
