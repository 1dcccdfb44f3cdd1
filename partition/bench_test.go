package partition

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkContiguous times the DP (preprocessing, ideals and the table)
// on every graph of Tarnawski et al.'s Table 1. The paper's single-threaded C++
// took about 1 s on BERT-3 operator inference and 8 s on training.
func BenchmarkContiguous(b *testing.B) {
	for _, f := range []string{
		"layer/bert24_inference.json", "layer/bert24_training.json",
		"layer/resnet50_inference.json", "layer/resnet50_training.json",
		"operator/bert_l-3_inference.json", "operator/bert_l-3_training.json",
		"operator/resnet50_inference.json", "operator/resnet50_training.json",
	} {
		g := loadSeed(b, f)
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
		})
	}
}
