// Package encode turns placements into the solver's problems (package
// smt) and reads the answers back as schedules: the instances of n
// micro-batches (InstanceProblem, AllInstances), their transfers on links
// that carry one at a time (DepTransfers, LinkOrders), the latency rule
// (LatencyDeadlines), per-device budgets (BudgetShift), the time-optimal
// schedule that decides offload and recompute (OptimalDecisions,
// WindowDecisions) and the one that chooses devices (MinimizeAssigned).
//
// The schedules it returns are not yet trusted: every caller verifies
// them (verify.Schedule).
package encode
