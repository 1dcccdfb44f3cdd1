#!/bin/sh
# Prints tessel replan --timeline --model for docs/dynamic.md: splits the
# model onto the cluster (tessel partition --cluster), searches the old
# schedule on that placement with the search flags given, then replans it
# through the timeline file with the model (a fresh plan beside every
# step). Every search is effort-based (deterministic); the times are the
# machine's. Run from the repository root with tessel on PATH; writes its
# files in a temporary folder.
#
#	sh scripts/docs/timeline-model.sh TIMELINE MODEL CLUSTER SEARCH-FLAGS...
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
t=$1
m=$2
c=$3
shift 3
tessel partition --model "$m" --cluster "$c" --out "$dir/p.json" --cluster-out "$dir/pc.json" > /dev/null
tessel search --placement-file "$dir/p.json" --cluster "$dir/pc.json" "$@" --out "$dir/old.json" > /dev/null
tessel replan --schedule "$dir/old.json" --timeline "$t" --model "$m" --cluster "$c"
