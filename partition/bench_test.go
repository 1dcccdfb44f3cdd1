package partition

import (
	"context"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var moreGraphs = flag.String("graphs", "", "a folder of more graphs in Tarnawski et al.'s JSON format (for instance throughput-inputs of github.com/msr-fiddle/dnn-partitioning) for BenchmarkContiguous to time besides the shipped ones")

// BenchmarkContiguous times the DP (preprocessing, ideals and the table)
// on every shipped graph of Tarnawski et al.'s Table 1, and on every
// *.json under -graphs. Their single-threaded C++ took about 1 s on BERT-3
// operator inference and 8 s on training (Table 1, "Runtime").
func BenchmarkContiguous(b *testing.B) {
	files := []string{
		"layer/bert24_inference.json", "layer/bert24_training.json",
		"layer/resnet50_inference.json", "layer/resnet50_training.json",
		"operator/bert_l-3_inference.json", "operator/bert_l-3_training.json",
		"operator/resnet50_inference.json", "operator/resnet50_training.json",
	}
	graphs := make([]*Graph, len(files))
	for i, f := range files {
		graphs[i] = loadPaper(b, f)
	}
	if *moreGraphs != "" {
		var more []string
		err := filepath.WalkDir(*moreGraphs, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
				more = append(more, p)
			}
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		sort.Strings(more)
		for _, p := range more {
			data, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			g, err := ParseGraph(data)
			if err != nil {
				b.Fatalf("%s: %v", p, err)
			}
			rel, _ := filepath.Rel(*moreGraphs, p)
			files, graphs = append(files, rel), append(graphs, g)
		}
	}
	for i, f := range files {
		g := graphs[i]
		name := strings.TrimSuffix(strings.ReplaceAll(f, "/", "-"), filepath.Ext(f))
		b.Run(name, func(b *testing.B) {
			var r *DPResult
			for b.Loop() {
				var err error
				if r, err = Contiguous(context.Background(), g, DPOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(r.Ideals), "ideals")
			b.ReportMetric(float64(r.Pairs), "pairs")
			b.ReportMetric(float64(r.Visited), "visited")
			b.ReportMetric(r.Split.MaxLoad, "maxload")
		})
	}
}
