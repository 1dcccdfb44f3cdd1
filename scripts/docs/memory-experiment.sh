#!/bin/sh
# Re-runs OptPipe's memory experiment in full (go test ./search -run
# TestMemoryExperiment -memory-experiment) in a copy of the repository and
# compares the tables and charts it writes with docs/memory-experiment.md and
# docs/img/memory-*.svg as committed: prints one line when they match, the
# differences otherwise. Every search is effort-based (deterministic). Run
# from the repository root; the checkout is never written.
set -e
root=$(pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for e in *; do
	case $e in docs | search) ;; *) ln -s "$root/$e" "$dir/$e" ;; esac
done
# Copies, not links: the test writes ../docs from the package's folder.
cp -RL search "$dir/search"
mkdir -p "$dir/docs/img"
cp docs/memory-experiment.md "$dir/docs/"
cp docs/img/memory-budget.svg docs/img/memory-sweep.svg "$dir/docs/img/"
(cd "$dir" && go test ./search -run '^TestMemoryExperiment$' -memory-experiment -count 1 -timeout 0 > "$dir/test.txt") || { cat "$dir/test.txt" >&2; exit 1; }
status=0
for f in docs/memory-experiment.md docs/img/memory-budget.svg docs/img/memory-sweep.svg; do
	if ! cmp -s "$f" "$dir/$f"; then
		echo "$f differs:"
		diff -u "$f" "$dir/$f" | head -40 || true
		status=1
	fi
done
if [ $status = 0 ]; then
	echo "docs/memory-experiment.md's tables and docs/img/memory-*.svg: as the experiment writes them"
fi
