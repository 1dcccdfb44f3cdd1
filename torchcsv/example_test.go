package torchcsv_test

import (
	"fmt"
	"os"

	"github.com/tessel-pp/tessel/baseline"
	"github.com/tessel-pp/tessel/placement"
	"github.com/tessel-pp/tessel/schedule"
	"github.com/tessel-pp/tessel/spec"
	"github.com/tessel-pp/tessel/torchcsv"
	"github.com/tessel-pp/tessel/verify"
)

// A schedule exported as the compute-only CSV PyTorch's pipelining
// runtime loads: row r is rank r's actions in order, each
// <stage><type><micro-batch>.
func ExampleExport() {
	p, err := placement.Builtin("v-shape", placement.Options{Devices: 2})
	if err != nil {
		panic(err)
	}
	s, err := baseline.OneFOneB(spec.New(p, 4))
	if err != nil {
		panic(err)
	}
	tab, err := torchcsv.Export(s)
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(tab.Marshal())
	// Output:
	// 0F0,0F1,0B0,0F2,0B1,0F3,0B2,0B3
	// 1F0,1B0,1F1,1B1,1F2,1B2,1F3,1B3
}

// A CSV that PyTorch wrote (here 1F1B on two ranks) read back: PyTorch's
// own validator's rules first, then a placement and a schedule with the
// times given, checked by tessel's verifier.
func ExampleImport() {
	tab, err := torchcsv.Parse([]byte("0F0,0F1,0B0,0F2,0B1,0F3,0B2,0B3\n1F0,1B0,1F1,1B1,1F2,1B2,1F3,1B3\n"))
	if err != nil {
		panic(err)
	}
	sum, err := torchcsv.Validate(tab)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d ranks, %d stages, %d micro-batches\n", sum.Ranks, sum.Stages, sum.MicroBatches)
	opt := torchcsv.DefaultImportOptions()
	opt.Name = "two-ranks"
	s, err := torchcsv.Import(tab, opt)
	if err != nil {
		panic(err)
	}
	if err := verify.Schedule(s); err != nil {
		panic(err)
	}
	m := schedule.Measure(s)
	fmt.Printf("%s: makespan %d, bubble rate %.2f%%, peak memory %v\n", s.Placement.Name, m.Makespan, 100*m.BubbleRate, m.PeakMemory)
	// Output:
	// 2 ranks, 2 stages, 4 micro-batches
	// two-ranks: makespan 15, bubble rate 20.00%, peak memory [2 1]
}
