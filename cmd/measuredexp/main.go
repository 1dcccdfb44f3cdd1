// Command measuredexp runs the end-to-end experiment of docs/measured.md
// on this machine's CPU (package measure, Experiment): profile the
// decoder, plan it onto 2 ranks, run 1F1B, GPipe, ZB-H1 and tessel's
// schedule for every N with the generated workers, measure, calibrate,
// plan again. It prints the table, and writes it, the chart and the
// results' JSON where asked:
//
//	go run ./cmd/measuredexp -dir /tmp/exp -md table.md -svg chart.svg
//
// The defaults are the page's full experiment; -n, -iterations and the
// decoder's sizes make it smaller.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/tessel-pp/tessel/measure"
)

func main() {
	cfg := measure.ExperimentConfig()
	var (
		dir        = flag.String("dir", "", "work directory (new; default: a temporary one, kept)")
		ns         = flag.String("n", "4,8,16,32", "micro-batches N, comma-separated")
		devices    = flag.Int("devices", 2, "ranks (one CPU thread each, gloo)")
		warmup     = flag.Int("warmup", 1, "iterations dropped")
		iterations = flag.Int("iterations", 5, "iterations measured")
		calN       = flag.Int("calibrate-n", 0, "fit the calibration to the runs of this N only (default: to every run)")
		pwarm      = flag.Int("profile-warmup", 2, "tessel profile's warm-up rounds")
		preps      = flag.Int("profile-repeats", 10, "tessel profile's measured rounds")
		md         = flag.String("md", "", "write the table (Markdown) to this file")
		svg        = flag.String("svg", "", "write the chart to this file")
		out        = flag.String("json", "", "write the rows and the calibration (JSON) to this file")
		page       = flag.String("page", "", "replace the table between <!-- experiment: measured --> and <!-- experiment: end --> in this Markdown file")
		from       = flag.String("from", "", "run nothing: write the table and chart of an earlier run's -json FILE (the same -n, -devices, -iterations, -warmup, -calibrate-n and decoder flags as that run)")
	)
	flag.IntVar(&cfg.Layers, "layers", cfg.Layers, "decoder layers")
	flag.IntVar(&cfg.Hidden, "hidden", cfg.Hidden, "hidden size")
	flag.IntVar(&cfg.Heads, "heads", cfg.Heads, "attention heads")
	flag.IntVar(&cfg.FFN, "ffn", cfg.FFN, "MLP width")
	flag.IntVar(&cfg.Seq, "seq", cfg.Seq, "sequence length")
	flag.IntVar(&cfg.Batch, "batch", cfg.Batch, "samples per micro-batch")
	flag.IntVar(&cfg.Vocab, "vocab", cfg.Vocab, "vocabulary")
	flag.Parse()
	var n []int
	for _, f := range strings.Split(*ns, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || x < 1 {
			fmt.Fprintf(os.Stderr, "measuredexp: -n %q: want positive integers\n", *ns)
			os.Exit(2)
		}
		n = append(n, x)
	}
	if *dir == "" && *from == "" {
		d, err := os.MkdirTemp("", "tessel-measured-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		*dir = d
	}
	opts := measure.ExperimentOptions{Config: cfg, Devices: *devices, N: n, Warmup: *warmup,
		Iterations: *iterations, ProfileWarmup: *pwarm, ProfileRepeats: *preps, CalibrateN: *calN, Dir: *dir, Progress: os.Stderr}
	var res *measure.ExperimentResult
	if *from != "" {
		// Rendering again what was measured, with the report's code of
		// today: nothing runs, the rows are the file's.
		data, err := os.ReadFile(*from)
		if err == nil {
			res = &measure.ExperimentResult{}
			err = json.Unmarshal(data, res)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "measuredexp: -from:", err)
			os.Exit(2)
		}
		res.Options = opts
	} else {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		var err error
		if res, err = measure.Experiment(ctx, opts); err != nil {
			fmt.Fprintln(os.Stderr, "measuredexp:", err)
			os.Exit(1)
		}
	}
	var table bytes.Buffer
	fmt.Fprintf(&table, "Decoder `%s`, %d ranks (gloo, one thread each), %d iterations after %d warm-up; "+
		"load average %s at the start, %s at the end; %.0f s in all. Calibration fitted to %s: %s.\n\n",
		cfg.JSON(), *devices, *iterations, *warmup, res.Load[0], res.Load[1], res.Seconds, res.CalibratedAt(), measure.Text(res.Calibration))
	if err := res.Markdown(&table); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *from == "" {
		fmt.Printf("work directory %s\n\n", *dir)
	}
	os.Stdout.Write(table.Bytes())
	write := func(path string, data []byte) {
		if path == "" {
			return
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	write(*md, table.Bytes())
	if *svg != "" {
		var b bytes.Buffer
		if err := res.Chart(&b); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		write(*svg, b.Bytes())
	}
	if *page != "" {
		if err := replaceBlock(*page, table.Bytes()); err != nil {
			fmt.Fprintln(os.Stderr, "measuredexp:", err)
			os.Exit(1)
		}
	}
	if *out != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		write(*out, append(b, '\n'))
	}
}

// replaceBlock puts text between the page's experiment markers.
func replaceBlock(path string, text []byte) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	const begin, end = "<!-- experiment: measured -->\n", "<!-- experiment: end -->"
	i, j := bytes.Index(data, []byte(begin)), bytes.Index(data, []byte(end))
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %q … %q block", path, strings.TrimSpace(begin), end)
	}
	out := append(append(append([]byte{}, data[:i+len(begin)]...), text...), data[j:]...)
	return os.WriteFile(path, out, 0o644)
}
