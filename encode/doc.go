// Package encode turns placements into the solver's problems (package
// smt) and reads the answers back as schedules: the instances of n
// micro-batches (InstanceProblem, AllInstances), their transfers on links
// that carry one at a time (DepTransfers, LinkOrders), the latency rule
// (LatencyDeadlines), per-device budgets (BudgetShift), the time-optimal
// schedule that decides offload and recompute (OptimalDecisions,
// WindowDecisions) and the one that chooses devices (MinimizeAssigned).
//
// It holds the repetend's encodings too (the Tessel paper's §IV; package
// repetend searches over them): with the offsets given and the period a
// variable (Periodic), with the offsets as variables at a fixed period
// (Joint), with the devices as decisions (AssignedAt) and with each
// activation's keep, offload or recompute as decisions (DecidedAt), all
// in the steady state's link rule (SteadyLinks), their answers plain
// values (Iteration); and the refinement's windows (EndWindow,
// SpanWindow; package refine solves them).
//
// The schedules it returns are not yet trusted: every caller verifies
// them (verify.Schedule).
package encode
