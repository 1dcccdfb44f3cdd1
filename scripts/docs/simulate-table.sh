#!/bin/sh
# Prints the table of docs/commands.md ("tessel simulate"): blocking and
# non-blocking makespans of tessel search's and 1F1B+'s schedules on m- and
# nn-shape, 8 micro-batches, memory 8, every transfer taking 1. Run from the
# repository root with tessel on PATH; writes its files in a temporary folder.
set -e
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
row() { # name schedule-file
	tessel simulate --schedule "$2" --comm-time 1 |
		sed -n 's/^non-blocking is \(.*\) as fast as blocking (makespan \([0-9]*\) instead of \([0-9]*\))$/\3 \2 \1/p' |
		while read -r blocking nonblocking gain; do
			echo "| $1 | $blocking | $nonblocking | $gain |"
		done
}
for p in m-shape nn-shape; do
	tessel search --placement $p -n 8 --memory 8 --out "$dir/$p.json" > /dev/null
	tessel compare --placement $p -n 8 --memory 8 --schedules "$dir/$p" > /dev/null
done
echo "| schedule | blocking | non-blocking | gain |"
echo "| --- | --- | --- | --- |"
for p in m-shape nn-shape; do row "$p, \`tessel search\`" "$dir/$p.json"; done
for p in m-shape nn-shape; do row "$p, 1F1B+" "$dir/$p/1f1b+.json"; done
