#!/bin/sh
# Prints the table of docs/never-lose.md ("The real-costs benchmark"):
# BenchmarkRealCosts of package realcost, one run of each case, written as a
# Markdown table by its -realcost.table flag. Every search is effort-based
# (deterministic); the times are the machine's. Run from the repository root.
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go test ./realcost -run '^$' -bench "${1:-RealCosts}" -benchtime 1x -timeout 0 -realcost.table "$dir/table.md" > "$dir/bench.txt" || { cat "$dir/bench.txt" >&2; exit 1; }
cat "$dir/table.md"
