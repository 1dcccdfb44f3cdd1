// Package smt encodes scheduling problems for the Z3 solver and solves
// them: tasks with times, devices and memory, precedences (with a period
// term for periodic problems), exclusive devices, a per-device memory
// budget, transfers on links that carry one at a time, deadlines; the
// least makespan of such a problem by binary search (MinimizeMakespan),
// list schedules (Greedy) and lower bounds. It reaches Z3 through package
// z3, the cgo binding.
//
// It knows nothing of placements, micro-batches or schedules: package
// encode turns placements into Problems (and packages repetend, refine
// and partition build their own on the same Encoder). Nothing it returns
// is trusted; the verifier (verify.Schedule) checks every schedule
// independently.
package smt
