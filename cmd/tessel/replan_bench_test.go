package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
)

// BenchmarkReplan times tessel replan (--no-fresh) against tessel search
// on the new cluster, the README's replan table in-process: 4 devices,
// 32 micro-batches, the old schedule searched with every transfer 1, the
// new cluster one link ten times slower (four-slow-link) or devices
// changed (hetero-4: two at half speed, smaller memories, other links;
// four-half-speed: device 2 at half speed). Each reports the makespan.
func BenchmarkReplan(b *testing.B) {
	dir := b.TempDir()
	clusters := filepath.Join("..", "..", "testdata", "clusters")
	cli := func(args ...string) []byte {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), append([]string{"tessel"}, args...), &out, &errOut); code != 0 {
			b.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		return out.Bytes()
	}
	olds := []struct{ placement, memory string }{{"v-shape", "4"}, {"m-shape", "6"}}
	for _, o := range olds {
		cli("search", "-p", o.placement, "--memory", o.memory, "-n", "32", "--transfer-time", "1", "--out", filepath.Join(dir, o.placement+".json"))
	}
	for _, cl := range []string{"four-slow-link", "hetero-4", "four-half-speed"} {
		for _, o := range olds {
			file := filepath.Join(clusters, cl+".json")
			for _, how := range []struct {
				name string
				args []string
			}{
				{"replan", []string{"replan", "--schedule", filepath.Join(dir, o.placement+".json"), "--cluster", file, "--no-fresh", "--json"}},
				{"fresh", []string{"search", "-p", o.placement, "--memory", o.memory, "-n", "32", "--cluster", file, "--json"}},
			} {
				b.Run(o.placement+"-m"+o.memory+"/"+cl+"/"+how.name, func(b *testing.B) {
					for b.Loop() {
						var rep struct {
							Makespan int `json:"makespan"`
						}
						if err := json.Unmarshal(cli(how.args...), &rep); err != nil {
							b.Fatal(err)
						}
						b.ReportMetric(float64(rep.Makespan), "makespan")
					}
				})
			}
		}
	}
}
