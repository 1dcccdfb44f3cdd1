#!/bin/sh
# Starts the {{.Devices}} ranks of a tessel schedule ({{printf "%q" .Placement}}, {{.Mode}}) on this
# machine with torch.distributed.run; each rank runs worker.py on its program
# rank<R>.json. Written by `tessel gen`.
#
#   sh launch.sh [--out DIR]          run; with --out (relative to this
#                                     directory), save gradients and losses
#   python3 worker.py check --out DIR compare them with a single-process run
#
# Environment: PYTHON (default python3), BACKEND (default {{.Backend}}),
# MASTER_PORT (default 29500).
set -eu
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
BACKEND=${BACKEND:-{{.Backend}}}
MASTER_PORT=${MASTER_PORT:-29500}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# "--redirects 9:1 --tee 9:1" names a local rank that does not exist, so every
# rank keeps its console: Debian's torch 1.13 under Python 3.11 cannot parse
# the defaults ("0").
exec "$PYTHON" -m torch.distributed.run --nnodes=1 --nproc_per_node={{.Devices}} \
	--master_addr=127.0.0.1 --master_port="$MASTER_PORT" --redirects 9:1 --tee 9:1 --monitor_interval 1 \
	worker.py run --programs . --backend "$BACKEND" "$@"
