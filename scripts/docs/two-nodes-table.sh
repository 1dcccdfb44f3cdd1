#!/bin/sh
# Prints the table of docs/clusters.md ("Wu et al.'s question"): 8 devices
# over 2 nodes (testdata/clusters/two-nodes-8.json; two-nodes-8-slow5.json
# with device 5 at half speed; two-nodes-8-channels.json with links that
# carry one transfer at a time), memory 8, N = 32 and 128. Per row: 1F1B
# (× where it has no adaptation) and 1F1B+ on the placement (tessel compare
# on the cluster), Tessel
# searched without transfers and run on the cluster (tessel search, then
# tessel simulate --cluster, non-blocking programs), Tessel searched with the
# transfers in its model (tessel compare's row), the lower bound and the
# search's time. Every search is effort-based (deterministic); the times are
# the machine's. Run from the repository root with tessel on PATH; writes its
# files in a temporary folder.
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
c=testdata/clusters
col() { # method column (1-based, after the leading |) of a markdown compare table
	awk -F'|' -v m="$1" -v k="$2" '{ x = $2; gsub(/ /, "", x) } x == m { v = $(k + 1); sub(/^ +/, "", v); sub(/ +$/, "", v); print v }' "$3"
}
echo "| placement | cluster | N | 1F1B | 1F1B+ | Tessel searched without transfers, run on the cluster | Tessel, transfers in the model | lower bound | Tessel's search |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for cl in "two-nodes-8:2 nodes" "two-nodes-8-slow5:2 nodes, device 5 at ½" "two-nodes-8-channels:2 nodes, links one transfer at a time"; do
	file=$c/${cl%%:*}.json
	name=${cl#*:}
	for p in v-shape m-shape nn-shape; do
		for n in 32 128; do
			if [ ! -f "$dir/free-$p-$n.json" ]; then
				tessel search --placement $p --devices 8 -n $n --memory 8 --out "$dir/free-$p-$n.json" > /dev/null
			fi
			tessel compare --placement $p --devices 8 --memory 8 -n $n --cluster "$file" --format markdown > "$dir/cmp.txt"
			onef=$(col 1F1B 5 "$dir/cmp.txt")
			plus=$(col 1F1B+ 5 "$dir/cmp.txt")
			ms=$(col Tessel 5 "$dir/cmp.txt")
			secs=$(col Tessel 9 "$dir/cmp.txt" | sed 's/ .*//')
			note=$(col Tessel 10 "$dir/cmp.txt")
			gap=$(echo "$note" | sed -n 's/.*gap \([0-9]*\).*/\1/p')
			proven=""
			case "$note" in *"not proven"*) ;; *) proven=" (proven)" gap=0 ;; esac
			free=$(tessel simulate --schedule "$dir/free-$p-$n.json" --cluster "$file" | sed -n 's/^non-blocking  *\([0-9]*\) .*/\1/p')
			echo "| $p | $name | $n | $onef | $plus | $free | **$ms**$proven | $((ms - gap)) | $secs |"
		done
	done
done
