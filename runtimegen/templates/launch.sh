#!/bin/sh
# Starts the {{.Devices}} ranks of a tessel schedule ({{printf "%q" .Placement}}, {{.Mode}}) on this
# machine with torch.distributed.run; each rank runs worker.py on its program
# rank<R>.json. Written by `tessel gen`.
#
#   sh launch.sh [--out DIR] [--iterations K]
#                               train K iterations (default 1); with --out
#                               (relative to this directory), save every
#                               iteration's gradients and losses
#   sh launch.sh check --out DIR
#                               compare them with a single-process run
#
# Environment: PYTHON (default: the first of python3 and /usr/bin/python3
# that imports torch), BACKEND (default {{.Backend}}), MASTER_PORT (default 29500).
set -eu
cd "$(dirname "$0")"
if [ -n "${PYTHON:-}" ]; then
	if ! "$PYTHON" -c 'import torch' >/dev/null 2>&1; then
		echo "launch.sh: PYTHON=$PYTHON cannot import torch: install PyTorch for it (pip install torch) or unset PYTHON" >&2
		exit 1
	fi
else
	for candidate in python3 /usr/bin/python3; do
		if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import torch' >/dev/null 2>&1; then
			PYTHON=$candidate
			break
		fi
	done
	if [ -z "${PYTHON:-}" ]; then
		echo "launch.sh: neither python3 nor /usr/bin/python3 imports torch: install PyTorch (Debian: sudo apt-get install python3-torch; elsewhere: pip install torch) or set PYTHON to a Python that has it" >&2
		exit 1
	fi
fi
if [ "${1:-}" = check ]; then
	shift
	exec "$PYTHON" worker.py check --programs . "$@"
fi
BACKEND=${BACKEND:-{{.Backend}}}
MASTER_PORT=${MASTER_PORT:-29500}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
# "--redirects 9:1 --tee 9:1" names a local rank that does not exist, so every
# rank keeps its console: Debian's torch 1.13 under Python 3.11 cannot parse
# the defaults ("0").
exec "$PYTHON" -m torch.distributed.run --nnodes=1 --nproc_per_node={{.Devices}} \
	--master_addr=127.0.0.1 --master_port="$MASTER_PORT" --redirects 9:1 --tee 9:1 --monitor_interval 1 \
	worker.py run --programs . --backend "$BACKEND" "$@"
