package report

import (
	"strings"
	"testing"

	"github.com/tessel-pp/tessel/torchcsv"
)

// The lines of tessel simulate --torch-recv, as docs/torch.md shows them
// for PyTorch's Interleaved1F1B on 4 ranks.
func TestTorchRecv(t *testing.T) {
	c := &torchcsv.RecvComparison{StageRank: []int{0, 1, 2, 3, 0, 1, 2, 3},
		Early:     &torchcsv.CommsRun{Makespan: 173, FirstCompute: []int{0, 3, 6, 9, 12, 47, 50, 53}},
		Deferred:  &torchcsv.CommsRun{Makespan: 115, FirstCompute: []int{0, 3, 6, 9, 12, 15, 18, 21}},
		FreeLinks: &torchcsv.CommsRun{Makespan: 92},
		Delay:     []int{0, 0, 0, 0, 0, 32, 32, 32}, Shorter: torchcsv.RecvDeferred}
	var b strings.Builder
	TorchRecv(&b, c)
	want := `PyTorch's runtime, every rank's sends and receives one at a time in the order posted (stages on ranks [0 1 2 3 0 1 2 3]):
  receives early     makespan 173, first compute of each stage [0 3 6 9 12 47 50 53]
  receives deferred  makespan 115, first compute of each stage [0 3 6 9 12 15 18 21]
  a front-loaded receive delays the first compute of each stage by [0 0 0 0 0 32 32 32]; shorter: deferred (transfers overlapping freely: makespan 92)
`
	if b.String() != want {
		t.Errorf("text\n%s\nwant\n%s", b.String(), want)
	}
}
