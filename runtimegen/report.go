package runtimegen

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/quantity"
	"github.com/tessel-pp/tessel/rule/links"
	"github.com/tessel-pp/tessel/schedule"
)

// Report is the simulation of one or more program sets of one schedule —
// non-blocking and blocking, say — as tessel simulate prints it (its
// JSON form too).
type Report struct {
	Placement        string `json:"placement"`
	Devices          int    `json:"devices"`
	MicroBatches     int    `json:"micro_batches"`
	ScheduleMakespan *int   `json:"schedule_makespan,omitempty"` // the schedule's, where there is one
	CommTime         int    `json:"comm_time"`
	// Cluster: blocks and transfers were timed on a placement (a
	// cluster's; comm_time does not apply); QueuedLinks: links carried
	// one transfer at a time (the key "channels").
	Cluster     bool        `json:"cluster,omitempty"`
	QueuedLinks bool        `json:"channels,omitempty"`
	Transfers   int         `json:"transfers"`
	Runs        []RunReport `json:"runs"`
	Speedup     *float64    `json:"speedup,omitempty"` // blocking makespan / non-blocking makespan
	// Units, where the schedule's placement says what its steps are
	// (placement's Units), is every time above in its time unit (the
	// caller sets it: SetUnits); the text writes times in it.
	Units *ReportUnits `json:"units,omitempty"`
	scale *quantity.Scale
}

// ReportUnits is a simulation's times in the model's time unit Time ("":
// its own), one step being Step of it.
type ReportUnits struct {
	Time             string    `json:"time,omitempty"`
	Step             float64   `json:"step"`
	ScheduleMakespan *float64  `json:"schedule_makespan,omitempty"`
	Makespans        []float64 `json:"makespans"` // per run
}

// SetUnits gives the report the times of u (a placement's Units; nil or
// one without a time leaves the report in steps).
func (out *Report) SetUnits(u *quantity.Scale) {
	if !u.HasTime() {
		return
	}
	out.scale = u
	r := &ReportUnits{Time: u.Time, Step: u.Step}
	if out.ScheduleMakespan != nil {
		r.ScheduleMakespan = textfmt.Ptr(textfmt.Round6(u.InUnit(float64(*out.ScheduleMakespan))))
	}
	for _, run := range out.Runs {
		r.Makespans = append(r.Makespans, textfmt.Round6(u.InUnit(float64(run.Makespan))))
	}
	out.Units = r
}

// RunReport is one program set's run.
type RunReport struct {
	Mode       Mode    `json:"mode"`
	Makespan   int     `json:"makespan"`
	BubbleRate float64 `json:"bubble_rate"`
	Idle       []int   `json:"idle"`
	// With channels: the time transfers waited for their link, the
	// makespan without contention and how much later the run ends.
	LinkWait     *int `json:"channel_wait,omitempty"`
	FreeMakespan *int `json:"contention_free_makespan,omitempty"`
	Late         *int `json:"late,omitempty"`
	// With offloads timed (SimOptions.Offloads): the time gradient
	// blocks waited for their reloads.
	ReloadWait *int `json:"reload_wait,omitempty"`
}

// SimulateAll runs every program set of one schedule with opt — with
// opt.QueuedLinks, beside the same run without contention
// (SimulateContention) — and, for a non-blocking and a blocking set in
// that order, the gain of non-blocking.
func SimulateAll(sets [][]*Program, opt SimOptions) (*Report, error) {
	p0 := sets[0][0]
	out := &Report{Placement: p0.Placement, Devices: p0.Devices, MicroBatches: p0.MicroBatches, CommTime: opt.CommTime,
		Cluster: opt.Placement != nil, QueuedLinks: opt.QueuedLinks}
	if out.Cluster {
		out.CommTime = 0
	}
	for _, progs := range sets {
		var r *Result
		var c *Contention
		var err error
		if opt.QueuedLinks {
			if c, err = SimulateContention(progs, opt); c != nil {
				r = c.Result
			}
		} else {
			r, err = SimulateWith(progs, opt)
		}
		if err != nil {
			return nil, fmt.Errorf("%s programs: %w", progs[0].Mode, err)
		}
		run := RunReport{Mode: r.Mode, Makespan: r.Makespan, BubbleRate: roundTo(r.BubbleRate, 6), Idle: r.Idle}
		if c != nil {
			run.LinkWait, run.FreeMakespan, run.Late = textfmt.Ptr(r.LinkWait), textfmt.Ptr(c.Free), textfmt.Ptr(c.Late)
		}
		if opt.Offloads != nil {
			run.ReloadWait = textfmt.Ptr(r.ReloadWait)
		}
		out.Transfers = r.Transfers
		out.Runs = append(out.Runs, run)
	}
	if len(out.Runs) == 2 && out.Runs[0].Makespan > 0 {
		x := roundTo(float64(out.Runs[1].Makespan)/float64(out.Runs[0].Makespan), 4)
		out.Speedup = &x
	}
	return out, nil
}

// Text is the report for people: a header, a table, the gain.
func (out *Report) Text() (string, error) {
	var b strings.Builder
	t := func(x int) string { return fmt.Sprint(x) }
	if u := out.scale; u != nil {
		t = func(x int) string { return u.Duration(float64(x)) }
	}
	ts := func(xs []int) string {
		if out.scale == nil {
			return commaInts(xs)
		}
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = t(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	fmt.Fprintf(&b, "%s: %d devices, %d micro-batches", out.Placement, out.Devices, out.MicroBatches)
	if out.ScheduleMakespan != nil {
		fmt.Fprintf(&b, ", schedule makespan %s", t(*out.ScheduleMakespan))
	}
	switch {
	case out.Cluster:
		fmt.Fprintf(&b, "\n%d transfers between devices, each its time on the cluster", out.Transfers)
	case out.scale != nil:
		fmt.Fprintf(&b, "\n%d transfers between devices, %s each", out.Transfers, t(out.CommTime))
	default:
		fmt.Fprintf(&b, "\n%d transfers between devices, %d time each", out.Transfers, out.CommTime)
	}
	if out.QueuedLinks {
		b.WriteString(", one at a time between two devices")
	}
	b.WriteString("\n\n")
	var rows [][]string
	for _, r := range out.Runs {
		rows = append(rows, []string{r.Mode.Name(), t(r.Makespan), fmt.Sprintf("%.2f%%", 100*r.BubbleRate), ts(r.Idle)})
	}
	table, err := textfmt.Plain([]string{"mode", "makespan", "bubble rate", "idle per device"}, rows)
	if err != nil {
		return "", err
	}
	b.WriteString(table)
	for _, r := range out.Runs {
		if r.Late != nil {
			fmt.Fprintf(&b, "%s: transfers waited %s for their links in total; the run ends %s later than without contention (%s)\n",
				r.Mode.Name(), t(*r.LinkWait), t(*r.Late), t(*r.FreeMakespan))
		}
		if r.ReloadWait != nil {
			fmt.Fprintf(&b, "%s: offloads and reloads take their time on the host channels; gradient blocks waited %s for reloads in total\n",
				r.Mode.Name(), t(*r.ReloadWait))
		}
	}
	if out.Speedup != nil {
		fmt.Fprintf(&b, "\nnon-blocking is %.2f× as fast as blocking (makespan %s instead of %s)\n",
			*out.Speedup, t(out.Runs[0].Makespan), t(out.Runs[1].Makespan))
	}
	return b.String(), nil
}

// Name is the mode in words: "non-blocking" or "blocking".
func (m Mode) Name() string {
	if m == NonBlocking {
		return "non-blocking"
	}
	return string(m)
}

// commaInts formats [4 3 2] as "[4, 3, 2]".
func commaInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func roundTo(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// GenerateModes is Generate in each mode a simulation of s compares:
// non-blocking and blocking, or blocking alone (blockingOnly).
func GenerateModes(s *schedule.Schedule, blockingOnly bool) ([][]*Program, error) {
	modes := []Mode{NonBlocking, Blocking}
	if blockingOnly {
		modes = modes[1:]
	}
	var sets [][]*Program
	for _, mode := range modes {
		progs, err := Generate(s, mode)
		if err != nil {
			return nil, err
		}
		sets = append(sets, progs)
	}
	return sets, nil
}

// ScheduleSimOptions are the SimOptions of a run of s's programs timed by
// timing (nil: CommTime for every transfer): a schedule made with
// queued links runs with them (its makespan counts the queues on its
// links), as does any with queued set; a schedule that offloads times its moves
// by its own placement's rules.
func ScheduleSimOptions(s *schedule.Schedule, timing *placement.Placement, queued bool, commTime int) SimOptions {
	opt := SimOptions{CommTime: commTime, Placement: timing, QueuedLinks: queued || links.Queued(timing)}
	for _, d := range s.Decisions {
		if d.Action == placement.Offload {
			opt.Offloads = s.Placement
			break
		}
	}
	return opt
}
