package report

import (
	"fmt"
	"io"

	"github.com/tessel-pp/tessel/internal/textfmt"
	"github.com/tessel-pp/tessel/torchcsv"
)

// TorchRecv writes the lines of tessel simulate --torch-recv about c:
// PyTorch's runtime with receives early and deferred.
func TorchRecv(w io.Writer, c *torchcsv.RecvComparison) {
	fmt.Fprintf(w, "PyTorch's runtime, every rank's sends and receives one at a time in the order posted (stages on ranks %s):\n", textfmt.Ints(c.StageRank))
	fmt.Fprintf(w, "  receives early     makespan %d, first compute of each stage %s\n", c.Early.Makespan, textfmt.Ints(c.Early.FirstCompute))
	fmt.Fprintf(w, "  receives deferred  makespan %d, first compute of each stage %s\n", c.Deferred.Makespan, textfmt.Ints(c.Deferred.FirstCompute))
	fmt.Fprintf(w, "  a front-loaded receive delays the first compute of each stage by %s; shorter: %s (transfers overlapping freely: makespan %d)\n",
		textfmt.Ints(c.Delay), c.Shorter, c.FreeLinks.Makespan)
}
