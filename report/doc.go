// Package report holds what tessel prints: the text and the --json of
// every command, for the command line and library users alike. It reads
// the results of the packages that compute them (search, coarsen,
// compare, plan, …) and decides nothing: every schedule it reports has
// been verified by the package that made it, and every figure it prints
// is measured from that schedule and its placement.
//
// Search: SearchSummary (the JSON of tessel search --json), SearchText,
// Provenance and ProofStatus (the words of "built by" and "proven").
// Optimal: OptimalSummary, OptimalText. Replan: NewReplanReport. Plan:
// NewPlan. Compare: WriteComparison, ComparisonCharts, ComparisonHTML,
// StackedSVG, WriteTableII. Sweeps: WriteSweep, WriteFigure,
// WriteLatencySweep, SweepFiles, LatencyFiles. Verify: Verify. The
// built-ins: Builtins. A coarsened search: NewCoarsenSummary. Partition:
// Partition, Hetero (--cluster), SampleLatency (--objective latency),
// MegatronArgs (--format megatron-layout). Plan's other lines: Recompute,
// Hybrid (--parallel auto). Replan --timeline: Timeline. Simulate:
// Simulate, TorchRecv (--torch-recv). Import --megatron-layout: MegatronImport.
// Profile: Profile, ProfileAgreement. Measure: Measure, MeasureRun.
// Pictures of a schedule are package render's.
package report

// TerminalUnits is the most time units a command's text report draws of
// a schedule in the terminal (tessel render draws more).
const TerminalUnits = 48
