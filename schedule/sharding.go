package schedule

// ShardOp is one FSDP action of a rank (the spec's Sharding; package
// rule/fsdp): Kind "UNSHARD", "RESHARD" or "REDUCE_GRAD" of Stage (an
// index of the Sharding's stages), in gap Gap — just before the rank's
// Gap-th compute in start order (its number of computes: after the
// last) — from Start to End (on the rank's collective stream; RESHARD:
// when it frees the memory, End = Start).
type ShardOp struct {
	Kind       string
	Stage, Gap int
	Start, End int
}

// Sharded is the kind of the violations of the rule of sharded stages.
const Sharded ViolationKind = "fsdp"
