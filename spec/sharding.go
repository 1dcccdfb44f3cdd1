package spec

// Sharding is the rule of pipeline stages sharded over their
// data-parallel group (FSDP inside the pipeline; package rule/fsdp checks
// it): which stages gather their parameters before they compute, what
// that costs, and how many may be gathered at once on a rank.
type Sharding struct {
	Stages []ShardedStage
	// MaxActive is max_active_stages: at most this many stages hold
	// gathered parameters at once on a rank (≥ 1).
	MaxActive int
	// PerMicroBatch: a gather serves one compute, the next compute of
	// the stage gathers again; otherwise a gather serves every
	// micro-batch until released.
	PerMicroBatch bool
}

// ShardedStage is one sharded stage: the ID of its forward block (the
// blocks that train it belong to it), the memory of its gathered
// parameters while held (beyond what the blocks count), and the times of
// its all-gather and of its gradients' reduction.
type ShardedStage struct {
	Forward        string
	Params         int
	Gather, Reduce int
}
