#!/bin/sh
# Prints the first table of docs/never-lose.md: BenchmarkNeverLose of
# package search (the whole search with its default options, one run of each
# case) as a Markdown table. Every search is effort-based (deterministic);
# the times are the machine's. Run from the repository root; an argument
# narrows the cases (a -bench pattern, default every case).
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go test ./search -run '^$' -bench "${1:-NeverLose}" -benchtime 1x -timeout 0 > "$dir/bench.txt" || { cat "$dir/bench.txt" >&2; exit 1; }
echo "| case | lower bound | best baseline (fits the budget) | tessel makespan | gap | repetend bubbles | best baseline's steady bubbles | time |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
awk '
/^BenchmarkNeverLose\// {
	name = $1
	sub(/^BenchmarkNeverLose\//, "", name)
	sub(/-[0-9]+$/, "", name) # GOMAXPROCS
	delete v
	for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
	best = v["best-baseline"] > 0 ? sprintf("%d", v["best-baseline"]) : "—"
	rep = ("repetend-bubbles" in v) ? sprintf("%.1f%%", 100 * v["repetend-bubbles"]) : "—"
	steady = v["baseline-bubbles"] >= 0 ? sprintf("%.1f%%", 100 * v["baseline-bubbles"]) : "—"
	gap = 100 * (v["makespan"] - v["lower-bound"]) / v["lower-bound"]
	printf "| %s | %d | %s | %d | %.1f%% | %s | %s | %.2f s |\n", name, v["lower-bound"], best, v["makespan"], gap, rep, steady, v["ns/op"] / 1e9
}' "$dir/bench.txt"
