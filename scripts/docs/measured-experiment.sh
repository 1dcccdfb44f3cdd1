#!/bin/sh
# Re-runs the end-to-end experiment of docs/measured.md on this machine's
# CPU (package measure, Experiment; cmd/measuredexp): profile the
# decoder, plan it onto 2 ranks, run 1F1B, GPipe, ZB-H1 and tessel's
# schedule at N = 4, 8, 16 and 32 with the generated workers (gloo, one
# thread each, 5 iterations after 1 warm-up), measure, calibrate, plan
# again. It rewrites the table of docs/measured.md and docs/img/measured.svg
# and keeps every run's files (programs, traces, model files) in
# ${OUT:-/tmp/tessel-measured}. Run it from the repository root on a
# quiet machine: the times are wall-clock. Extra arguments go to
# measuredexp (for example -n 4,8 -iterations 2 for a quick try).
set -e
out=${OUT:-/tmp/tessel-measured}
rm -rf "$out"
mkdir -p "$out"
echo "load before: $(cat /proc/loadavg)"
go run ./cmd/measuredexp -dir "$out/work" -page docs/measured.md -svg docs/img/measured.svg -json "$out/results.json" "$@"
echo "load after: $(cat /proc/loadavg)"
