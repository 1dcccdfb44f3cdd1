#!/bin/sh
# Prints docs/heterogeneous.md's S1 or S2 table (the argument: s1 or s2)
# and fails where docs/img/hetero-s1.svg or hetero-s2.svg differ from the
# chart the scenario draws (rewrite them with
# `go run ./cmd/heterofigs -svg docs/img`). Run from the
# repository root. Every search is effort-based: same output every run.
set -e
go run ./cmd/heterofigs -scenario "${1:-s1,s2}" -check docs/img
