#!/bin/sh
# Prints the table of docs/never-lose.md ("Against the zero-bubble
# auto-scheduler"): BenchmarkAuto of package realcost, one run of each case,
# written as a Markdown table by its -realcost.auto-table flag. Without a
# second argument every search is effort-based (deterministic; the times are
# the machine's); with one (a duration such as 10s) each search uses that
# time (search.Options.UseTime). Run from the repository root.
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
limit=${2:-0}
go test ./realcost -run '^$' -bench "${1:-Auto}" -benchtime 1x -timeout 0 -realcost.time-limit "$limit" -realcost.auto-table "$dir/table.md" > "$dir/bench.txt" || { cat "$dir/bench.txt" >&2; exit 1; }
cat "$dir/table.md"
