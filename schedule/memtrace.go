package schedule

// MemoryChange is one change of a device's memory at Time, in Phase
// (placement's memory phases): a block instance's start or a decision's
// free or return.
type MemoryChange struct {
	Time, Phase int
	Delta       int
}

// MemoryTrace is every device's memory changes in the order the verifier
// sums them (Measure's peak is the highest running sum, from 0): for a
// rule that adds memory of its own over time (FSDP's gathered
// parameters) to count it with the schedule's.
func MemoryTrace(s *Schedule) [][]MemoryChange {
	if s == nil || s.Placement == nil {
		return nil
	}
	evs := memoryEvents(s, deviceInstances(s, nil), nil)
	out := make([][]MemoryChange, len(evs))
	for d, list := range evs {
		out[d] = make([]MemoryChange, len(list))
		for i, e := range list {
			out[d][i] = MemoryChange{Time: e.time, Phase: e.phase, Delta: e.delta}
		}
	}
	return out
}
