#!/bin/sh
# Prints the table of docs/benchmarks.md ("The search, against the public
# Python Tessel"): BenchmarkSearch of package search, one run of each case
# (the whole search of 128 micro-batches: default, and each method of the
# paper's search alone), each cell the time and the makespan. The makespans
# are deterministic (effort-based); the times are the machine's. The last
# column is the public Python Tessel's time on this kind of machine
# (docs/reference-timings.md), not something this script measures. Run from
# the repository root.
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go test ./search -run '^$' -bench "${1:-BenchmarkSearch\$}" -benchtime 1x -timeout 0 > "$dir/bench.txt" || { cat "$dir/bench.txt" >&2; exit 1; }
echo "| case | N_R | memory | default | joint (solver only) | enumerate (solver only) | race (solver only) | reference |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
awk '
function secs(ns) { s = ns / 1e9; return s < 0.1 ? sprintf("%.3f s", s) : s < 10 ? sprintf("%.2f s", s) : sprintf("%.0f s", s) }
/^BenchmarkSearch\// {
	name = $1
	sub(/^BenchmarkSearch\//, "", name)
	sub(/-[0-9]+$/, "", name) # GOMAXPROCS
	split(name, part, "/")
	c = part[1]
	for (i = 3; i < NF; i += 2) if ($(i + 1) == "makespan") ms = $i
	cell[c, part[2]] = secs($3) ", " sprintf("%d", ms)
	if (!(c in seen)) { seen[c] = 1; order[++n] = c }
}
END {
	ref["v-shape-4d-m4"] = "7.4 s"; ref["x-shape-4d-m4"] = "29.9 s"; ref["k-shape-4d-m6"] = "5.6 s"
	ref["m-shape-4d-m6"] = "134.5 s"; ref["nn-shape-4d-m6"] = "831.5 s"; ref["v-shape-8d-m8"] = "> 1800 s (stopped)"
	nr["v-shape-4d-m4"] = 4; nr["x-shape-4d-m4"] = 3; nr["k-shape-4d-m6"] = 3; nr["m-shape-4d-m6"] = 6; nr["nn-shape-4d-m6"] = 6
	for (k = 1; k <= n; k++) {
		c = order[k]
		p = c; sub(/-[0-9]+d-m[0-9]+$/, "", p)
		d = c; sub(/^.*-shape-/, "", d); sub(/d-m.*$/, "", d)
		m = c; sub(/^.*-m/, "", m)
		r = (c in nr) ? nr[c] : (m == 0 ? "≤ " 2 * d : d)
		mem = m == 0 ? "unlimited" : m
		out = sprintf("| %s, %d devices | %s | %s", p, d, r, mem)
		split("default joint enumerate race", meth, " ")
		for (j = 1; j <= 4; j++) out = out " | " (((c, meth[j]) in cell) ? cell[c, meth[j]] : "—")
		print out " | " ((c in ref) ? ref[c] : "—") " |"
	}
}' "$dir/bench.txt"
