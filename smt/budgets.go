package smt

// A Problem has one memory budget, Memory, and an entry memory per device.
// Per-device budgets (placement's Budget: a search's budget and each
// device's capacity from a cluster) reduce to that form exactly, without
// touching the encoder: every memory constraint the encoder and the list
// schedules write is entry_d + (running sum on d) ≤ Memory, so a device of
// budget M_d < M behaves as one of budget M that starts with M − M_d more
// memory. A device without a budget among limited ones starts far below
// zero (unbounded), so that no sum of its tasks' memory reaches M.

// ShiftEntry adds shift (nil: none) to entry (nil: zero) per device.
func ShiftEntry(entry, shift []int) []int {
	if shift == nil {
		return entry
	}
	out := make([]int, len(shift))
	for d := range out {
		out[d] = shift[d]
		if entry != nil {
			out[d] += entry[d]
		}
	}
	return out
}
