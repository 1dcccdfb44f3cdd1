package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/urfave/cli/v2"

	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/runtimegen"
	"github.com/tessel-pp/tessel/schedule"
)

// simulateOptions are the flags of tessel simulate.
type simulateOptions struct {
	Schedule string // schedule file, or
	Programs string // directory of rank<R>.json written by tessel gen
	CommTime int
	// commSet says --comm-time was given (it does not go with a cluster).
	commSet  bool
	Cluster  clusterSpec
	Channels bool
	Blocking bool // only the blocking programs
	JSON     bool
}

func simulateCommand() *cli.Command {
	return &cli.Command{
		Name:      "simulate",
		Usage:     "run a schedule's per-device programs in a simulator: makespan, idle time, deadlocks",
		UsageText: "tessel simulate --schedule FILE [--comm-time 1 | --cluster FILE | --transfer-time T --device-speed D=S] [--channels] [--blocking] [--json]\ntessel simulate --programs DIR [--comm-time 1] [--json]",
		Description: "Turns a schedule into one program per device (every tensor that crosses devices\n" +
			"sent right after its producer, in one global order) and runs the programs event by\n" +
			"event: blocks take their time, every transfer takes --comm-time. Reports the\n" +
			"makespan, the idle time of every device and the bubble rate, for non-blocking\n" +
			"programs (receives posted early, waits right before the consumer) and blocking\n" +
			"ones (send and receive inline), and the gain of non-blocking (the paper's Fig. 17).\n" +
			"With --programs, runs the programs tessel gen wrote (possibly edited) instead,\n" +
			"and reports a deadlock as the cycle of devices waiting for each other.\n" +
			"On a cluster (--cluster, --device-speed, --transfer-time, or the one the schedule\n" +
			"file records) blocks take their time on their devices and every transfer its own\n" +
			"time c_ij, the rule the search uses: the non-blocking programs of a searched schedule\n" +
			"then end exactly at its makespan. With --channels each ordered pair of devices carries\n" +
			"one transfer at a time, and the report says how much later the run ends for it; a\n" +
			"schedule searched with channels is simulated with them, and ends at its makespan too.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "schedule", Aliases: []string{"s"}, Usage: "schedule `FILE` (JSON, see docs/formats.md)"},
			&cli.StringFlag{Name: "programs", Usage: "simulate the programs rank0.json, rank1.json, … in `DIR` instead"},
			&cli.IntFlag{Name: "comm-time", Usage: "time of one transfer between two devices", Value: 1},
			&cli.BoolFlag{Name: "blocking", Usage: "simulate blocking programs only (default: both modes and the gain)"},
			clusterFlags()[0], clusterFlags()[1], clusterFlags()[2],
			&cli.BoolFlag{Name: "channels", Usage: "transfers between two devices run one at a time, in the order the programs issue them (the default for a schedule searched with channels)"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON object instead of text"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("simulate: unexpected argument %q", c.Args().First())
			}
			return runSimulate(c.Context, simulateOptions{
				Schedule: c.String("schedule"), Programs: c.String("programs"), CommTime: c.Int("comm-time"), commSet: c.IsSet("comm-time"),
				Cluster: clusterSpec{File: c.String("cluster"), DeviceSpeed: c.String("device-speed"), TransferTime: c.Int("transfer-time")}, Channels: c.Bool("channels"),
				Blocking: c.Bool("blocking"), JSON: c.Bool("json"),
			}, c.App.Writer)
		},
	}
}

// simulation is what tessel simulate reports (its --json object).
type simulation struct {
	Placement        string `json:"placement"`
	Devices          int    `json:"devices"`
	MicroBatches     int    `json:"micro_batches"`
	ScheduleMakespan *int   `json:"schedule_makespan,omitempty"` // with --schedule
	CommTime         int    `json:"comm_time"`
	// Cluster: blocks and transfers were timed on a cluster (comm_time
	// does not apply); Channels: links carried one transfer at a time.
	Cluster   bool        `json:"cluster,omitempty"`
	Channels  bool        `json:"channels,omitempty"`
	Transfers int         `json:"transfers"`
	Runs      []simRunOut `json:"runs"`
	Speedup   *float64    `json:"speedup,omitempty"` // blocking makespan / non-blocking makespan
}

type simRunOut struct {
	Mode       runtimegen.Mode `json:"mode"`
	Makespan   int             `json:"makespan"`
	BubbleRate float64         `json:"bubble_rate"`
	Idle       []int           `json:"idle"`
	// With channels: the time transfers waited for their link, the
	// makespan without contention and how much later the run ends.
	ChannelWait  *int `json:"channel_wait,omitempty"`
	FreeMakespan *int `json:"contention_free_makespan,omitempty"`
	Late         *int `json:"late,omitempty"`
}

// runSimulate simulates the programs of a schedule file (both modes unless
// Blocking) or of a program directory. Unreadable or invalid input is a
// usage error; a deadlock is an error naming the cycle.
func runSimulate(_ context.Context, opts simulateOptions, stdout io.Writer) error {
	if (opts.Schedule == "") == (opts.Programs == "") {
		return usageErrorf("simulate: give one of --schedule FILE and --programs DIR")
	}
	if opts.CommTime < 0 {
		return usageErrorf("--comm-time must be at least 0, got %d", opts.CommTime)
	}
	var sets [][]*runtimegen.Program
	var out simulation
	var timing *placement.Placement // times of blocks and transfers; nil: the programs' and CommTime
	if opts.Schedule != "" {
		s, err := loadVerified(opts.Schedule)
		if err != nil {
			return err
		}
		given := s.Placement
		if s.Cluster != nil {
			given, timing = s.Source, s.Placement
		}
		on, c, err := opts.Cluster.on(given)
		if err != nil {
			return err
		}
		if c != nil {
			timing = on
		}
		if timing != nil && opts.commSet {
			return usageErrorf("simulate: --comm-time does not go with a cluster: transfers take the cluster's times")
		}
		modes := []runtimegen.Mode{runtimegen.NonBlocking, runtimegen.Blocking}
		if opts.Blocking {
			modes = modes[1:]
		}
		for _, mode := range modes {
			progs, err := runtimegen.Generate(s, mode)
			if err != nil {
				return err
			}
			sets = append(sets, progs)
		}
		ms := schedule.Makespan(s)
		out.ScheduleMakespan = &ms
	} else {
		if opts.Blocking {
			return usageErrorf("simulate: --blocking applies to --schedule (programs have their own mode)")
		}
		if opts.Cluster != (clusterSpec{}) {
			return usageErrorf("simulate: --cluster, --device-speed and --transfer-time apply to --schedule")
		}
		progs, err := loadPrograms(opts.Programs)
		if err != nil {
			return err
		}
		if err := runtimegen.Check(progs); err != nil {
			return usageErrorf("%s: %v", opts.Programs, err)
		}
		sets = append(sets, progs)
	}
	p0 := sets[0][0]
	// A schedule made with channels runs with them: its makespan counts
	// the queues on its links.
	channels := opts.Channels || (timing != nil && timing.Channels)
	out.Placement, out.Devices, out.MicroBatches, out.CommTime = p0.Placement, p0.Devices, p0.MicroBatches, opts.CommTime
	out.Cluster, out.Channels = timing != nil, channels
	if out.Cluster {
		out.CommTime = 0
	}
	for _, progs := range sets {
		sim := runtimegen.SimOptions{CommTime: opts.CommTime, Placement: timing}
		r, err := runtimegen.SimulateWith(progs, sim)
		if err != nil {
			return fmt.Errorf("%s programs: %w", progs[0].Mode, err)
		}
		run := simRunOut{Mode: r.Mode, Makespan: r.Makespan, BubbleRate: roundTo(r.BubbleRate, 6), Idle: r.Idle}
		if channels {
			sim.Channels = true
			rc, err := runtimegen.SimulateWith(progs, sim)
			if err != nil {
				return fmt.Errorf("%s programs: %w", progs[0].Mode, err)
			}
			free := r.Makespan
			run = simRunOut{Mode: rc.Mode, Makespan: rc.Makespan, BubbleRate: roundTo(rc.BubbleRate, 6), Idle: rc.Idle,
				ChannelWait: ptr(rc.ChannelWait), FreeMakespan: ptr(free), Late: ptr(rc.Makespan - free)}
		}
		out.Transfers = r.Transfers
		out.Runs = append(out.Runs, run)
	}
	if len(out.Runs) == 2 && out.Runs[0].Makespan > 0 {
		x := roundTo(float64(out.Runs[1].Makespan)/float64(out.Runs[0].Makespan), 4)
		out.Speedup = &x
	}
	if opts.JSON {
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	text, err := simulationText(out)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, text)
	return err
}

// simulationText is the text report: a header, a table, the gain.
func simulationText(out simulation) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d devices, %d micro-batches", out.Placement, out.Devices, out.MicroBatches)
	if out.ScheduleMakespan != nil {
		fmt.Fprintf(&b, ", schedule makespan %d", *out.ScheduleMakespan)
	}
	switch {
	case out.Cluster:
		fmt.Fprintf(&b, "\n%d transfers between devices, each its time on the cluster", out.Transfers)
	default:
		fmt.Fprintf(&b, "\n%d transfers between devices, %d time each", out.Transfers, out.CommTime)
	}
	if out.Channels {
		b.WriteString(", one at a time between two devices")
	}
	b.WriteString("\n\n")
	var rows [][]string
	for _, r := range out.Runs {
		rows = append(rows, []string{modeName(r.Mode), fmt.Sprint(r.Makespan), fmt.Sprintf("%.2f%%", 100*r.BubbleRate), formatInts(r.Idle)})
	}
	table, err := simTable([]string{"mode", "makespan", "bubble rate", "idle per device"}, rows)
	if err != nil {
		return "", err
	}
	b.WriteString(table)
	for _, r := range out.Runs {
		if r.Late != nil {
			fmt.Fprintf(&b, "%s: transfers waited %d for their links in total; the run ends %d later than without contention (%d)\n",
				modeName(r.Mode), *r.ChannelWait, *r.Late, *r.FreeMakespan)
		}
	}
	if out.Speedup != nil {
		fmt.Fprintf(&b, "\nnon-blocking is %.2f× as fast as blocking (makespan %d instead of %d)\n",
			*out.Speedup, out.Runs[0].Makespan, out.Runs[1].Makespan)
	}
	return b.String(), nil
}

func modeName(m runtimegen.Mode) string {
	if m == runtimegen.NonBlocking {
		return "non-blocking"
	}
	return string(m)
}

// simTable renders rows under a header as plain left-aligned columns.
func simTable(header []string, rows [][]string) (string, error) {
	var buf strings.Builder
	t := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleASCII),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
	)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return "", err
	}
	if err := t.Render(); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		b.WriteString(strings.TrimSpace(line) + "\n")
	}
	return b.String(), nil
}

func roundTo(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

// loadVerified reads a schedule file and verifies it: both failures are
// usage errors (bad input).
func loadVerified(path string) (*schedule.Schedule, error) {
	s, err := schedule.Load(path)
	if err != nil {
		return nil, &usageError{err}
	}
	if err := schedule.Verify(s); err != nil {
		return nil, usageErrorf("%s: invalid schedule (see tessel verify): %v", path, err)
	}
	return s, nil
}

// loadPrograms reads rank0.json … rank<D-1>.json from dir.
func loadPrograms(dir string) ([]*runtimegen.Program, error) {
	read := func(d int) (*runtimegen.Program, error) {
		path := filepath.Join(dir, runtimegen.FileName(d))
		data, err := os.ReadFile(path)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, usageErrorf("%s: %v", path, err)
		}
		p, err := runtimegen.ParseProgram(data)
		if err != nil {
			return nil, usageErrorf("%s: %v", path, err)
		}
		return p, nil
	}
	p0, err := read(0)
	if err != nil {
		return nil, err
	}
	progs := []*runtimegen.Program{p0}
	for d := 1; d < p0.Devices; d++ {
		p, err := read(d)
		if err != nil {
			return nil, err
		}
		progs = append(progs, p)
	}
	return progs, nil
}
