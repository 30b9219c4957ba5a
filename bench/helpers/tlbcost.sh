#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM: the cost of one kernel TLB invalidation (invlpg) to a
# system call, with the module of bench/helpers/tlbcost and
# build/bench/invlpg-time (both built by make bench-helpers). Prints
# "invlpg_ns N syscall_ns M" (see bench/helpers/invlpg-time.c), or nothing
# if they are not built or the module does not load.
#
#   tlbcost.sh [BUILD_DIR]
set -u
b=${1:-build/bench}
d=/sys/kernel/debug/tlbcost
[ -f "$b/tlbcost/tlbcost.ko" ] && [ -x "$b/invlpg-time" ] || exit 0
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null
insmod "$b/tlbcost/tlbcost.ko" 2>/dev/null || exit 0
if [ -d $d ]; then
	"$b/invlpg-time" $d
fi
rmmod tlbcost
