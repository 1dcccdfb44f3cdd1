#!/bin/sh
# Prints the table of docs/clusters.md ("what the queues cost"): v-shape,
# 4 devices, memory 8, N = 32, every transfer taking T, searched without
# channels (and that schedule run with link queues), searched with channels,
# 1F1B with queues and the lower bound with queues. Run from the repository
# root with tessel on PATH; writes its files in a temporary folder.
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
field() { # prints the number after "$2" on the line of $1 starting with $3
	sed -n "s/^$3.*$2 \([0-9]*\).*/\1/p" "$1"
}
echo "| T | searched without channels (its makespan) | that schedule run with queues | searched with channels | 1F1B with queues | lower bound with queues | search time with channels |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for t in 3 5 8; do
	tessel search --placement v-shape -n 32 --memory 8 --transfer-time $t --out "$dir/free$t.json" > "$dir/free.txt"
	tessel simulate --schedule "$dir/free$t.json" --channels > "$dir/sim.txt"
	tessel search --placement v-shape -n 32 --memory 8 --transfer-time $t --channels > "$dir/ch.txt"
	tessel compare --placement v-shape -n 32 --memory 8 --transfer-time $t --channels --format markdown > "$dir/cmp.txt"
	free=$(field "$dir/free.txt" makespan schedule)
	queued=$(sed -n 's/^non-blocking  *\([0-9]*\) .*/\1/p' "$dir/sim.txt")
	ch=$(field "$dir/ch.txt" makespan schedule)
	proven=""
	if grep -q "^proven *yes" "$dir/ch.txt"; then proven=" (proven)"; fi
	bound=$(field "$dir/ch.txt" "lower bound" schedule)
	onef=$(awk -F'|' '$2 ~ /^ 1F1B +$/ { gsub(/ /, "", $6); print $6 }' "$dir/cmp.txt")
	secs=$(sed -n 's/^search time  *\([^ ]*\) .*/\1/p' "$dir/ch.txt")
	echo "| $t | $free | $queued | **$ch**$proven | $onef | $bound | $secs |"
done
