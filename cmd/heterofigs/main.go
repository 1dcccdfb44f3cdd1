// Command heterofigs reproduces docs/heterogeneous.md's scenarios after
// Wu et al., "Rethinking Dynamic Networks and Heterogeneous Computing with
// Automatic Parallelization" (§4.1 and §4.2): it prints their tables in
// Markdown and writes their charts (package chart) into -svg DIR, or, with
// -check DIR, fails where the charts in DIR differ from what it draws.
// Every search is effort-based, so the output is the same on every run.
//
//	go run ./cmd/heterofigs -check docs/img
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tessel-pp/tessel/chart"
	"github.com/tessel-pp/tessel/cluster"
	"github.com/tessel-pp/tessel/hetero"
	"github.com/tessel-pp/tessel/hybrid"
	"github.com/tessel-pp/tessel/partition"
)

const (
	model        = "testdata/hetero/gpt-34.json"
	microBatches = 64
)

func main() {
	svg := flag.String("svg", "", "write the charts into this folder")
	check := flag.String("check", "", "compare the charts with those in this folder")
	which := flag.String("scenario", "s1,s2", "scenarios to run")
	flag.Parse()
	charts, err := run(os.Stdout, *which)
	if err != nil {
		fmt.Fprintln(os.Stderr, "heterofigs:", err)
		os.Exit(1)
	}
	status := 0
	for name, data := range charts {
		switch {
		case *svg != "":
			if err := os.WriteFile(filepath.Join(*svg, name), data, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "heterofigs:", err)
				status = 1
			}
		case *check != "":
			old, err := os.ReadFile(filepath.Join(*check, name))
			if err != nil || !bytes.Equal(old, data) {
				fmt.Fprintf(os.Stderr, "heterofigs: %s differs from what the scenarios draw (rewrite it with -svg)\n", filepath.Join(*check, name))
				status = 1
			}
		}
	}
	os.Exit(status)
}

func run(w io.Writer, which string) (map[string][]byte, error) {
	ctx := context.Background()
	g, err := partition.Load(model)
	if err != nil {
		return nil, err
	}
	charts := map[string][]byte{}
	if strings.Contains(which, "s1") {
		c, err := s1(ctx, w, g)
		if err != nil {
			return nil, err
		}
		charts["hetero-s1.svg"] = c
	}
	if strings.Contains(which, "s2") {
		c, err := s2(ctx, w, g)
		if err != nil {
			return nil, err
		}
		charts["hetero-s2.svg"] = c
	}
	return charts, nil
}

func layout(l *hybrid.Layout) string {
	return fmt.Sprintf("%d×%d×%d", l.DP, l.TP, l.PP)
}

// s1: two GPU types in equal numbers, close (1.1×) and far apart (3×).
func s1(ctx context.Context, w io.Writer, g *partition.Graph) ([]byte, error) {
	fmt.Fprintln(w, "| devices | types | pipeline over all devices: split on the cluster / even split (time per sample) | tessel plan (dp×tp×pp) | Megatron's layout (dp×tp×pp) | speed-up |")
	fmt.Fprintln(w, "| ---: | --- | --- | --- | --- | ---: |")
	series := map[string]*chart.Series{"1.1×": {Name: "types 1.1× apart"}, "3×": {Name: "types 3× apart"}}
	for _, n := range []int{8, 16, 32} {
		for _, gap := range []struct{ label, file string }{{"1.1×", "close"}, {"3×", "far"}} {
			c, err := cluster.Load(fmt.Sprintf("testdata/hetero/s1-%s-%d.json", gap.file, n))
			if err != nil {
				return nil, err
			}
			pr, err := hetero.Run(ctx, g, c, hetero.Options{})
			if err != nil {
				return nil, err
			}
			res, err := hybrid.Plan(ctx, g, c, hybrid.Options{MicroBatches: microBatches, Jobs: 1})
			if err != nil {
				return nil, err
			}
			if res.Baseline == nil {
				return nil, errors.New("no Megatron layout fits")
			}
			speedup := res.Baseline.Time / res.Best.Time
			fmt.Fprintf(w, "| %d | %s | %.2f / %.2f (%.2f×) | %.2f (%s) | %.2f (%s) | %.2f× |\n", n, gap.label,
				pr.Split.MaxLoad, pr.Even.MaxLoad, pr.Even.MaxLoad/pr.Split.MaxLoad,
				res.Best.Time, layout(res.Best), res.Baseline.Time, layout(res.Baseline), speedup)
			s := series[gap.label]
			s.Points = append(s.Points, chart.Point{X: float64(n), Y: speedup})
		}
	}
	ch := chart.Line{Title: "S1: tessel's plan against Megatron's layout, two GPU types", XLabel: "devices (half of each type)",
		YLabel: "speed-up over Megatron's layout", YSuffix: "×", IntegerX: true,
		Series: []chart.Series{*series["1.1×"], *series["3×"]}}
	var buf bytes.Buffer
	if err := ch.WriteSVG(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// s2: one model at several inter-node bandwidths; the best layout of each
// tensor-parallel degree and the one chosen.
func s2(ctx context.Context, w io.Writer, g *partition.Graph) ([]byte, error) {
	tps := []int{1, 2, 4, 8, 16}
	fmt.Fprint(w, "\n| inter-node time per unit |")
	for _, tp := range tps {
		fmt.Fprintf(w, " tp %d |", tp)
	}
	fmt.Fprintln(w, " chosen | Megatron's layout |")
	fmt.Fprintln(w, "| ---: |"+strings.Repeat(" ---: |", len(tps))+" --- | --- |")
	var series []chart.Series
	for _, tp := range tps[:3] {
		series = append(series, chart.Series{Name: fmt.Sprintf("tp %d", tp)})
	}
	for _, bw := range []struct {
		file    string
		perUnit float64
	}{{"bw-high", 0.05}, {"bw-mid", 0.5}, {"bw-low", 2}, {"bw-vlow", 8}} {
		c, err := cluster.Load(fmt.Sprintf("testdata/hetero/s2-%s.json", bw.file))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "| %g |", bw.perUnit)
		for i, tp := range tps {
			res, err := hybrid.Plan(ctx, g, c, hybrid.Options{MicroBatches: microBatches, Jobs: 1,
				Degrees: func(_, t, _ int) bool { return t == tp }})
			switch {
			case errors.Is(err, hybrid.ErrNoLayout):
				fmt.Fprint(w, " – |")
				continue
			case err != nil:
				return nil, err
			}
			fmt.Fprintf(w, " %.2f (%s) |", res.Best.Time, layout(res.Best))
			if i < len(series) {
				series[i].Points = append(series[i].Points, chart.Point{X: bw.perUnit, Y: res.Best.Time})
			}
		}
		res, err := hybrid.Plan(ctx, g, c, hybrid.Options{MicroBatches: microBatches, Jobs: 1})
		if err != nil {
			return nil, err
		}
		base := "–"
		if res.Baseline != nil {
			base = fmt.Sprintf("%.2f (%s)", res.Baseline.Time, layout(res.Baseline))
		}
		fmt.Fprintf(w, " tp %d: %.2f (%s) | %s |\n", res.Best.TP, res.Best.Time, layout(res.Best), base)
	}
	ch := chart.Line{Title: "S2: iteration time of the best layout per TP degree, 16 devices", XLabel: "inter-node time per unit of size (1 / bandwidth)",
		YLabel: "iteration time", Series: series}
	var buf bytes.Buffer
	if err := ch.WriteSVG(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
