#!/usr/bin/env bash
# Installs what tessel needs from Debian's packages, only where missing.
#
#   scripts/install-deps.sh search   what the search needs: libz3-dev and
#                                    pkg-config (the smt package links the
#                                    system's libz3 with cgo) and gcc
#   scripts/install-deps.sh all      the same, python3-torch (the
#                                    runtime's end-to-end test runs PyTorch
#                                    workers on CPU with gloo) and chromium
#                                    (the test of tessel plan --report opens
#                                    the page headless); the default
#
# `make run` asks for search only: the search needs no PyTorch, which takes
# a minute to install. Safe to run again; quiet when all is there.
set -euo pipefail

mode=${1:-all}
case "$mode" in
search | all) ;;
*)
	echo "install-deps: unknown mode \"$mode\" (want search or all)" >&2
	exit 2
	;;
esac

need=()
pkg-config --exists z3 2>/dev/null || need+=(libz3-dev pkg-config)
command -v gcc >/dev/null || need+=(gcc)
if [ "$mode" = all ]; then
	/usr/bin/python3 -c 'import torch' >/dev/null 2>&1 || need+=(python3-torch)
	command -v chromium >/dev/null || need+=(chromium)
fi

if [ ${#need[@]} -eq 0 ]; then
	exit 0
fi
echo "install-deps: installing ${need[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
