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
// new cluster one link ten or two times slower (four-slow-link,
// four-slow-link-2) or devices changed (hetero-4: two at half speed,
// smaller memories, other links; four-half-speed: device 2 at half
// speed). Each reports the makespan.
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
	cases := []struct {
		placement, memory string
		clusters          []string
	}{
		{"v-shape", "4", []string{"four-slow-link", "hetero-4", "four-half-speed"}},
		{"m-shape", "6", []string{"four-slow-link", "hetero-4", "four-half-speed"}},
		{"x-shape", "4", []string{"four-slow-link-2", "four-slow-link"}},
	}
	for _, o := range cases {
		cli("search", "-p", o.placement, "--memory", o.memory, "-n", "32", "--transfer-time", "1", "--out", filepath.Join(dir, o.placement+".json"))
	}
	for _, o := range cases {
		for _, cl := range o.clusters {
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
