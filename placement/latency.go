package placement

import "fmt"

// # Latency
//
// The latency of micro-batch n (one request of an inference service) is
// the time from the start of its first block to the end of its last:
// max_j end(B_j^n) − min_i start(B_i^n). A latency budget L (0: none)
// asks every micro-batch's latency to be at most L (the Tessel paper's
// §VI-D serves Flava under a 400 ms budget).
//
// The first block of a micro-batch to start is always a source (a block
// nothing precedes: every other block starts at least its predecessor's
// time later) and the last to end is always a sink, so the rule is one
// pair constraint per source i and sink j:
//
//	start(B_j^n) + t_j − start(B_i^n) ≤ L.
//
// LatencyPairs lists those pairs; the verifier, the constructions and
// every encoder ask it.
//
// The rule counts blocks only, and is the same whatever else the
// schedule holds. Where links carry one transfer at a time (QueuedLinks),
// a tensor that waits for its link (LinkQueue) delays its consumer, so
// the wait lies inside the micro-batch's span and counts. An offload, its
// reload and a recompute (Offload, Recompute) run between a forward's end
// and its consumer's start, inside the span too: they count only as far
// as they delay a block. No schedule meets a budget below CriticalPath, the
// latency of one micro-batch alone on unlimited devices: CheckLatency says
// so in one line.

// LatencyPair is one source-sink pair of the latency rule: the sink's end
// minus the source's start of one micro-batch is at most the budget.
type LatencyPair struct {
	Source, Sink int
}

// LatencyPairs is every pair (source, sink) of blocks, sources and sinks
// in block order: the pairs of the latency rule.
func (p *Placement) LatencyPairs() []LatencyPair {
	preds, succs := p.Preds(), p.Succs()
	var out []LatencyPair
	for i := range p.Blocks {
		if len(preds[i]) != 0 {
			continue
		}
		for j := range p.Blocks {
			if len(succs[j]) == 0 {
				out = append(out, LatencyPair{Source: i, Sink: j})
			}
		}
	}
	return out
}

// Latency is the latency of one micro-batch whose block i starts at
// starts[i]: the latest end minus the earliest start.
func (p *Placement) Latency(starts []int) int {
	first, last := 0, 0
	for i, s := range starts {
		e := s + p.Blocks[i].Time
		if i == 0 || s < first {
			first = s
		}
		if i == 0 || e > last {
			last = e
		}
	}
	return last - first
}

// CheckLatency rejects a latency budget no schedule of p can meet: a
// negative one, or one below the critical path. 0 means no budget.
func (p *Placement) CheckLatency(budget int) error {
	switch {
	case budget < 0:
		return fmt.Errorf("latency budget %d is negative (0 means none)", budget)
	case budget == 0:
		return nil
	}
	if cp := p.CriticalPath(); budget < cp {
		return fmt.Errorf("latency budget %d is below the critical path %d of placement %q: no schedule meets it", budget, cp, p.Name)
	}
	return nil
}

// Inference reports whether p is an inference placement: every block a
// forward (the built-in shapes' --infer, a forward-only file).
func (p *Placement) Inference() bool {
	for _, b := range p.Blocks {
		if b.Kind != Forward {
			return false
		}
	}
	return len(p.Blocks) > 0
}
