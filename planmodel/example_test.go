package planmodel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tessel-pp/tessel/planmodel"
)

// tessel partition as a library call: the GPT-like layer profile cut into
// stages of least time per sample, read here from its JSON report.
func ExamplePartition() {
	var out strings.Builder
	err := planmodel.Partition(context.Background(), planmodel.PartitionOptions{
		Model: "../testdata/models/gpt-like.json", CPUs: -1, Order: "loop", Chunks: 1, IPTimeLimit: time.Minute, JSON: true,
	}, &out)
	if err != nil {
		panic(err)
	}
	var rep struct {
		MaxLoad float64           `json:"max_load"`
		Stages  []json.RawMessage `json:"stages"`
	}
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		panic(err)
	}
	fmt.Printf("max load %.2f per sample, %d stages\n", rep.MaxLoad, len(rep.Stages))
	// Output:
	// max load 12.00 per sample, 4 stages
}
