#!/bin/sh
# Prints tessel replan --timeline for docs/dynamic.md: searches the old
# schedule with the search flags given, then replans it through the
# timeline file (a fresh search beside every step). Every search is
# effort-based (deterministic); the times are the machine's. Run from the
# repository root with tessel on PATH; writes its files in a temporary
# folder.
#
#	sh scripts/docs/timeline.sh [--no-fresh] TIMELINE SEARCH-FLAGS...
#
# --no-fresh leaves the fresh searches out.
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fresh=
if [ "$1" = --no-fresh ]; then
	fresh=--no-fresh
	shift
fi
t=$1
shift
tessel search "$@" --out "$dir/old.json" > /dev/null
tessel replan --schedule "$dir/old.json" --timeline "$t" $fresh
