#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Self-test of tests/helpers/vsmfs-fsx on the host: a run with every
# optional operation the host file system supports must pass, and a run
# with a deliberately corrupted model must fail and say where.
set -eu
fsx=$(dirname "$0")/../helpers/vsmfs-fsx
dir=$(mktemp -d "${TMPDIR:-/tmp}/vsmfs-fsx.XXXXXX")
trap 'rm -rf "$dir"' EXIT
opts=$("$fsx" -P "$dir")
# shellcheck disable=SC2086
"$fsx" -q -S 1 -N 3000 -s 16M $opts "$dir/a" "$dir/b"
# shellcheck disable=SC2086
if "$fsx" -q -S 2 -N 3000 -s 16M -X 1000 $opts "$dir/a" "$dir/b" >"$dir/out" 2>&1; then
	echo "fsx-selftest: a corrupted model was not detected"
	exit 1
fi
grep -q "FAILED at operation" "$dir/out" && grep -q "self-test: model of" "$dir/out" || {
	cat "$dir/out"
	echo "fsx-selftest: the failure report is incomplete"
	exit 1
}
echo "fsx-selftest: passed (host options: ${opts:-none}; corruption detected)"
