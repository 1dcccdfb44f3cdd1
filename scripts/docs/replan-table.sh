#!/bin/sh
# Prints the table of docs/clusters.md ("Replan after the cluster changed"):
# for each placement and new cluster, the old schedule's makespan (searched
# with every transfer 1 on 4 devices, or on two-nodes-8.json on 8), its
# orders' and its re-timed repetend's makespans on the new cluster, then
# `tessel replan --no-fresh`, `--no-fresh --refine` and a fresh search there,
# N = 32. Every search is effort-based (deterministic); the times are the
# machine's. Run from the repository root with tessel on PATH; writes its
# files in a temporary folder.
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
c=testdata/clusters
made= # placement/memory/old cluster of the old schedule last searched
old() { # placement devices memory old-cluster-flags...
	p=$1 d=$2 m=$3
	shift 3
	if [ "$made" != "$p $d $m $*" ]; then
		tessel search --placement "$p" --devices "$d" -n 32 --memory "$m" "$@" --out "$dir/old.json" --force > "$dir/old.txt"
		made="$p $d $m $*"
	fi
}
row() { # label new-cluster-label new-cluster-flags...
	label=$1 name=$2
	shift 2
	tessel replan --schedule "$dir/old.json" "$@" > "$dir/r.txt"
	tessel replan --schedule "$dir/old.json" --no-fresh --refine "$@" > "$dir/rr.txt"
	oldms=$(sed -n 's/^old schedule *makespan \([0-9]*\) .*: \([0-9]*\)$/\1/p' "$dir/r.txt")
	orders=$(sed -n 's/^old schedule *makespan \([0-9]*\) .*: \([0-9]*\)$/\2/p' "$dir/r.txt")
	rep=$(sed -n 's/^ *its repetend re-timed on the new one: \([0-9]*\)$/\1/p' "$dir/r.txt")
	new() { sed -n 's/^replanned *makespan \([0-9]*\) (lower bound [0-9]*) in \([^,]*\),.*/\1 in \2/p' "$1"; }
	r=$(new "$dir/r.txt")
	if grep -q "^replanned.*old repetend" "$dir/r.txt"; then r="$r, old repetend kept"; fi
	rr=$(new "$dir/rr.txt")
	fresh=$(sed -n 's/^fresh search *makespan \([0-9]*\) in \(.*\)$/\1 in \2/p' "$dir/r.txt")
	grep -q '^verified *yes$' "$dir/r.txt"
	grep -q '^verified *yes$' "$dir/rr.txt"
	echo "| $label | $name | $oldms | $orders / ${rep:-–} | $r | $rr | $fresh |"
}
echo "| placement, memory | new cluster | old makespan | old orders / old repetend there | replan | replan --refine | fresh search |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
old v-shape 4 4 --transfer-time 1
row "v-shape, 4" four-slow-link --cluster $c/four-slow-link.json
old m-shape 4 6 --transfer-time 1
row "m-shape, 6" four-slow-link --cluster $c/four-slow-link.json
old x-shape 4 4 --transfer-time 1
row "x-shape, 4" four-slow-link-2 --cluster $c/four-slow-link-2.json
row "x-shape, 4" four-slow-link --cluster $c/four-slow-link.json
old nn-shape 4 6 --transfer-time 1
row "nn-shape, 6" four-slow-link --cluster $c/four-slow-link.json
old v-shape 4 4 --transfer-time 1
row "v-shape, 4" hetero-4 --cluster $c/hetero-4.json
row "v-shape, 4" four-half-speed --cluster $c/four-half-speed.json
old m-shape 4 6 --transfer-time 1
row "m-shape, 6" hetero-4 --cluster $c/hetero-4.json
row "m-shape, 6" four-half-speed --cluster $c/four-half-speed.json
row "m-shape, 6" "device 0 half" --device-speed 0=0.5 --transfer-time 1
old v-shape 8 8 --cluster $c/two-nodes-8.json
row "v-shape, 8" two-nodes-8-slow-link --cluster $c/two-nodes-8-slow-link.json
row "v-shape, 8" two-nodes-8-slow5 --cluster $c/two-nodes-8-slow5.json
old m-shape 8 8 --cluster $c/two-nodes-8.json
row "m-shape, 8" two-nodes-8-slow-link --cluster $c/two-nodes-8-slow-link.json
row "m-shape, 8" two-nodes-8-slow5 --cluster $c/two-nodes-8-slow5.json
