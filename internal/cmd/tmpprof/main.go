package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"time"

	"github.com/tessel-pp/tessel/partition"
)

func main() {
	g, err := partition.Load(os.Args[1])
	if err != nil {
		panic(err)
	}
	g.Memory = 0
	f, _ := os.Create("/tmp/robust/cpu.prof")
	pprof.StartCPUProfile(f)
	t := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = partition.Run(ctx, g, partition.Options{})
	pprof.StopCPUProfile()
	fmt.Println(time.Since(t), err)
	m, _ := os.Create("/tmp/robust/mem.prof")
	pprof.Lookup("allocs").WriteTo(m, 0)
}
