#!/usr/bin/env bash
# Installs what tessel needs from Debian's packages, only where missing:
# libz3-dev and pkg-config (the smt package links the system's libz3 with
# cgo) and python3-torch (the runtime's end-to-end test runs PyTorch
# workers on CPU with gloo). Safe to run again; quiet when all is there.
set -euo pipefail

need=()
pkg-config --exists z3 2>/dev/null || need+=(libz3-dev pkg-config)
command -v gcc >/dev/null || need+=(gcc)
/usr/bin/python3 -c 'import torch' >/dev/null 2>&1 || need+=(python3-torch)

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
