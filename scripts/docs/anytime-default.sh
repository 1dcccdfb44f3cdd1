#!/bin/sh
# Prints the default-effort makespans of docs/anytime.md's table "A minute
# against the default effort" (the same cases without --time-limit:
# effort-based, deterministic): one `schedule` line of tessel search each.
# Run from the repository root with tessel on PATH.
set -e
zb="--placement v-shape --chunks 2 --order loop --split-backward"
run() { # label, then tessel search's flags
	label=$1
	shift
	echo "$label"
	tessel search "$@" | grep '^schedule '
}
run "nn-shape, 8 devices, memory 8, N = 32" --placement nn-shape -d 8 --memory 8 -n 32
run "zero bubble, 8 ranks × 2 stages, F:I:W = 3:4:2, N = 16, memory 16" $zb -d 8 --forward-time 3 --input-time 4 --weight-time 2 -n 16 --memory 16
run "zero bubble, 8 ranks × 2 stages, F:I:W = 3:4:2, N = 8, memory 16" $zb -d 8 --forward-time 3 --input-time 4 --weight-time 2 -n 8 --memory 16
run "zero bubble, 4 ranks × 2 stages, F:I:W = 1:2:1, N = 8, memory 8" $zb -d 4 --forward-time 1 --input-time 2 --weight-time 1 -n 8 --memory 8
