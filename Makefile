# SPDX-License-Identifier: GPL-2.0
#
# vsmfs top-level build.
#
#   make              build fs/vsmfs/vsmfs.ko (out of tree, the test build with
#                     fault injection), the instrumented build/pmlog/vsmfs.ko,
#                     the production build/release/vsmfs.ko and the tools
#   make pmlog        build/pmlog/vsmfs.ko only: the module with the
#                     persistence-ordering log (CONFIG_VSMFS_PMLOG)
#   make release      build/release/vsmfs.ko only: the module make install
#                     installs, without fault injection or the log
#   make test         build, then run the test suite in QEMU VMs
#   make demo         build, boot a VM, mkfs + mount + a short fio run against
#                     ext4-DAX with the PM bytes written per byte, then
#                     power cuts during overwrites (a few minutes)
#   make check        checkpatch, sparse and kernel-doc over the module, the
#                     layers of its files (tests/layering), and every test
#                     listed in its group's README.md (tests/check-tables)
#   make fuzz         hostile-image fuzzer: N mutants (default 2000) of SEED
#   make crash-test   power-cut loop: N crash points (default 50) from SEED
#   make crash-parallel  power cuts while four workloads run at once: N crash
#                     points (default 20) from SEED
#   make crash-atomic overwrite atomicity: N crash images (default 500) from SEED
#   make fsx-test     posix/010-fsx with SEEDS (default eight; make test: two)
#   make ordering-test  persistence-ordering check, the long run: every
#                     workload, every crash point, more lost-line subsets;
#                     OPTSETS=default,ckpt,... runs those mount option sets
#                     only (the whole run takes hours here: shard it)
#   make crash-long   generated crash workloads (tests/suites/ordering/gen.py):
#                     every length-1 workload and the seeded length-2 and
#                     length-3 samples of SEED, every crash point;
#                     SHARD=I/N runs the I-th of N shards, each within
#                     an hour here (2,440 workloads, 41 a shard: N=60; a
#                     shard of length-2 and -3 workloads takes about 6
#                     minutes); without SHARD all SHARDS (60) in turn
#   make crash-recovery crashes during recovery, the long run: crash images
#                     of every crash point of the recovery workloads, each
#                     mounted with the log on and its recovery cut at every
#                     one of its crash points; ONLY=journal-sync,... takes
#                     those workloads only, SEED another sample (hours here)
#   make install      install the tools, their manual pages, the udev rule and
#                     the production module
#   make uninstall    remove what make install installed
#   make dkms-install register the module with DKMS, build and install it
#   make dkms-uninstall  remove it from DKMS and /usr/src
#   make intree-check apply arch-patches/ to a copy of linux-source-6.1 and
#                     compile fs/vsmfs in that tree
#   make intree-kernel  the same, then build the whole patched kernel
#   make blkid-patch-test  build Debian's util-linux with the vsmfs prober of
#                     arch-patches/util-linux/, run its blkid -p on an image
#
# KDIR selects the kernel build tree; the default is Debian's
# linux-headers-amd64 for the newest installed 6.1 kernel.

KVER ?= $(shell ls -d /usr/src/linux-headers-6.1*-amd64 2>/dev/null | sed 's|.*/linux-headers-||' | sort -V | tail -n 1)
KDIR ?= /lib/modules/$(KVER)/build
WERROR ?= 1
MOD_DIR := $(CURDIR)/fs/vsmfs
# The development build has the fault injection points (FAULT_INJECTION=n
# leaves them out, as a distribution kernel would).
FAULT_INJECTION ?= y
KBUILD_ARGS := -C $(KDIR) M=$(MOD_DIR) CONFIG_VSMFS_FS=m W=1 \
	$(if $(filter y,$(FAULT_INJECTION)),CONFIG_VSMFS_FAULT_INJECTION=y) \
	$(if $(filter 1,$(WERROR)),KCFLAGS=-Werror)

all: module pmlog release tools

module:
	@test -d "$(KDIR)" || { echo "kernel build tree '$(KDIR)' not found: apt-get install linux-headers-amd64 (or set KDIR)"; exit 1; }
	$(MAKE) $(KBUILD_ARGS) modules

# The other builds of the module are made from links to the sources, each
# in its own directory, so that fs/vsmfs/vsmfs.ko stays the test module:
# build/pmlog the instrumented one, build/release the one make install
# installs (as a distribution kernel would build it: neither fault
# injection nor the log, whatever FAULT_INJECTION says).
PMLOG_DIR := $(CURDIR)/build/pmlog
RELEASE_DIR := $(CURDIR)/build/release
MOD_SRC := $(MOD_DIR)/Makefile $(MOD_DIR)/Kconfig \
	$(filter-out %.mod.c,$(wildcard $(MOD_DIR)/*.c)) $(wildcard $(MOD_DIR)/*.h)
define link_sources
	@test -d "$(KDIR)" || { echo "kernel build tree '$(KDIR)' not found: apt-get install linux-headers-amd64 (or set KDIR)"; exit 1; }
	@mkdir -p $(1)
	@find $(1) -maxdepth 1 -type l -delete
	@ln -s $(MOD_SRC) $(1)/
endef

pmlog:
	$(call link_sources,$(PMLOG_DIR))
	$(MAKE) $(subst M=$(MOD_DIR),M=$(PMLOG_DIR),$(KBUILD_ARGS)) CONFIG_VSMFS_PMLOG=y modules

release:
	$(call link_sources,$(RELEASE_DIR))
	$(MAKE) -C $(KDIR) M=$(RELEASE_DIR) CONFIG_VSMFS_FS=m W=1 \
		$(if $(filter 1,$(WERROR)),KCFLAGS=-Werror) modules

tools:
	$(MAKE) -C tools $(if $(filter 1,$(WERROR)),,WERROR=)

test: all
	tests/run $(TESTS)

unit: tools
	$(MAKE) -C tests/unit run

demo: all
	tests/demo

N ?=
SEED ?= 1

fuzz: all
	tests/suites/crash/fuzz -s $(SEED) -n $(or $(N),2000)

crash-test: all
	tests/suites/crash/power-cut -s $(SEED) -n $(or $(N),50)

crash-parallel: all
	tests/suites/crash/power-cut --parallel 4 -s $(SEED) -n $(or $(N),20)
	tests/run persist/007-parallel-cut

crash-atomic: all
	VSMFS_CRASH_SNAPSHOTS=$(or $(N),500) VSMFS_CRASH_SEED=$(or $(SEED),4) tests/run atomic

# Tests too long for make test (group.conf "long="): the DKMS build in the VM.
dkms-test: all
	tests/run tools/006-dkms

# vsmfs-fsx with more seeds than make test's two (SEEDS, eight by default).
fsx-test: all
	VSMFS_FSX_SEEDS="$(or $(SEEDS),1 2 3 4 5 6 7 8)" tests/run posix/010-fsx

ordering-test: all
	VSMFS_ORDERING=long VSMFS_ORDERING_SEED=$(SEED) VSMFS_ORDERING_OPTSETS=$(OPTSETS) \
		VSMFS_TEST_TIMEOUT=7000 tests/run ordering

SHARDS ?= 60
crash-long: all
	set -e; for s in $(or $(SHARD),$(shell seq -s ' ' -f '%g/$(SHARDS)' 1 $(SHARDS))); do \
		VSMFS_GEN=long VSMFS_GEN_SEED=$(SEED) VSMFS_GEN_SHARD=$$s \
			VSMFS_TEST_TIMEOUT=10000 tests/run ordering/003-generated; done
crash-recovery: all
	VSMFS_RECOVERY=long VSMFS_RECOVERY_SEED=$(or $(SEED),1) VSMFS_RECOVERY_ONLY=$(ONLY) \
		VSMFS_TEST_TIMEOUT=10000 tests/run ordering/005-recovery-crash

# Benchmarks against ext4-DAX and XFS-DAX (bench/README.md), not part of
# make test: bench-quick takes about 20 minutes here, bench about two hours;
# both end with bench/report, which writes REPORT.md.
# Set VSMFS_VM_LOCK=FILE to serialize each benchmark VM with others (flock).
BENCH_HELPERS := build/bench/append30 build/bench/mix build/bench/invlpg-time build/bench/markops \
	build/bench/createlat build/bench/fxmark build/bench/pingpong build/bench/maptouch

build/bench/%: bench/helpers/%.c bench/helpers/marker.h
	@mkdir -p build/bench
	$(CC) -O2 -Wall -Wextra -pthread -o $@ $<

# The TLB calibration module, built from links like the pmlog module.
TLBCOST_DIR := $(CURDIR)/build/bench/tlbcost

bench-tlbcost:
	@test -d "$(KDIR)" || { echo "kernel build tree '$(KDIR)' not found: apt-get install linux-headers-amd64 (or set KDIR)"; exit 1; }
	@mkdir -p $(TLBCOST_DIR)
	@ln -sf $(CURDIR)/bench/helpers/tlbcost/Makefile $(CURDIR)/bench/helpers/tlbcost/tlbcost.c $(TLBCOST_DIR)/
	$(MAKE) -C $(KDIR) M=$(TLBCOST_DIR) W=1 $(if $(filter 1,$(WERROR)),KCFLAGS=-Werror) modules

bench-helpers: $(BENCH_HELPERS) bench-tlbcost

BENCH_DAY := $(shell date +%F)
BENCH_OUT ?= bench/results/$(BENCH_DAY)

bench: all bench-helpers
	bench/fio-overwrite --reps 3 --runtime 2 --out $(BENCH_OUT)
	bench/metadata --reps 3 --scale 2 --out $(BENCH_OUT)
	bench/create-scaling --reps 3 --out $(BENCH_OUT)
	bench/job-scaling --out $(BENCH_OUT)
	bench/create-latency --out $(BENCH_OUT)
	bench/report $(BENCH_OUT)

bench-quick: all bench-helpers
	bench/fio-overwrite --quick --out $(BENCH_OUT)
	bench/metadata --quick --out $(BENCH_OUT)
	bench/create-scaling --reps 1 --files 2000 --out $(BENCH_OUT)
	bench/job-scaling --quick --out $(BENCH_OUT)
	bench/create-latency --quick --out $(BENCH_OUT)
	bench/report $(BENCH_OUT)

# FxMark-style private-object loops by 1 and 2 processes (bench/fxmark;
# about 15 minutes here).
bench-fxmark: all bench-helpers
	bench/fxmark --out $(BENCH_OUT)-fxmark

# Cache lines moved between CPUs per private operation, 8 vCPUs, under the
# coherence model (bench/coherence/README.md; about 15 minutes), and the
# model's own test.
bench-coherence: all bench-helpers
	bench/coherence-fxmark --out $(BENCH_OUT)-coherence

# Guest kernel instructions per operation and function (bench/insn-profile).
bench-profile: all bench-helpers
	bench/insn-profile --out $(BENCH_OUT)-profile

bench-coherence-test: bench-helpers
	bench/coherence/selftest

# File creation by 1-8 threads on an 8-vCPU VM, alone (a few minutes).
bench-create: all
	bench/create-scaling --out $(BENCH_OUT)
	bench/report $(BENCH_OUT)

check:
	$(MAKE) $(KBUILD_ARGS) C=2 modules
	tests/hygiene
	tests/layering
	tests/check-tables

# Installation, with the usual DESTDIR, PREFIX (manual pages, default
# /usr/local), SBINDIR (default /sbin, on root's $PATH, where mkfs(8) and
# fsck(8) look for mkfs.vsmfs and fsck.vsmfs) and MANDIR.
#
# install-module copies the production module built by "make"
# (build/release/vsmfs.ko) to /lib/modules/<the kernel it was built
# for>/$(MODSUBDIR) and runs depmod unless DESTDIR is set. It does not
# build: run "make" first. A module installed by dkms-install lies under
# updates/, which depmod prefers.
INSTALL_TARGETS := install-tools install-module
UNINSTALL_TARGETS := uninstall-tools uninstall-module
MODSUBDIR ?= extra
# The kernel the built module is for (its vermagic), else KVER.
MODULE_KVER = $(or $(shell modinfo -F vermagic $(RELEASE_DIR)/vsmfs.ko 2>/dev/null | cut -d' ' -f1),$(KVER))

install: $(INSTALL_TARGETS)

uninstall: $(UNINSTALL_TARGETS)

install-tools:
	$(MAKE) -C tools install $(if $(filter 1,$(WERROR)),,WERROR=)

uninstall-tools:
	$(MAKE) -C tools uninstall

install-module:
	@test -f $(RELEASE_DIR)/vsmfs.ko || { echo "$(RELEASE_DIR)/vsmfs.ko not built: run make first"; exit 1; }
	install -D -m 644 $(RELEASE_DIR)/vsmfs.ko $(DESTDIR)/lib/modules/$(MODULE_KVER)/$(MODSUBDIR)/vsmfs.ko
	$(if $(DESTDIR),,depmod -a $(MODULE_KVER))

uninstall-module:
	rm -f $(DESTDIR)/lib/modules/$(MODULE_KVER)/$(MODSUBDIR)/vsmfs.ko
	$(if $(DESTDIR),,depmod -a $(MODULE_KVER))

# DKMS: the version is the one dkms.conf names. dkms-install replaces an
# earlier registration of the same version, so it also updates the sources.
# The module is built and installed for KVER now; AUTOINSTALL in dkms.conf
# rebuilds it for every 6.1 kernel installed later.
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' $(CURDIR)/dkms.conf)
DKMS_SRC := /usr/src/vsmfs-$(DKMS_VERSION)
DKMS_MOD_FILES := fs/vsmfs/Kconfig fs/vsmfs/Makefile \
	$(filter-out %.mod.c,$(wildcard fs/vsmfs/*.c)) $(wildcard fs/vsmfs/*.h)
DKMS_ID := -m vsmfs -v $(DKMS_VERSION)

dkms-install:
	@command -v dkms >/dev/null || { echo "dkms not found: apt-get install dkms"; exit 1; }
	@test -d "$(KDIR)" || { echo "kernel build tree '$(KDIR)' not found: apt-get install linux-headers-amd64 (or set KVER)"; exit 1; }
	if [ -n "$$(dkms status $(DKMS_ID))" ]; then dkms remove $(DKMS_ID) --all; fi
	rm -rf $(DKMS_SRC)
	install -d $(DKMS_SRC)/fs/vsmfs
	install -m 644 dkms.conf $(DKMS_SRC)/
	install -m 644 $(DKMS_MOD_FILES) $(DKMS_SRC)/fs/vsmfs/
	dkms add $(DKMS_ID)
	dkms build $(DKMS_ID) -k $(KVER)
	dkms install $(DKMS_ID) -k $(KVER)

dkms-uninstall:
	@command -v dkms >/dev/null || { echo "dkms not found"; exit 1; }
	if [ -n "$$(dkms status $(DKMS_ID))" ]; then dkms remove $(DKMS_ID) --all; fi
	rm -rf $(DKMS_SRC)

# In-tree build of fs/vsmfs with arch-patches/ (see arch-patches/README).
intree-check:
	tests/intree

intree-kernel:
	tests/intree --full

# The libblkid prober (arch-patches/util-linux/) in Debian's util-linux;
# downloads the source package, so not part of make test.
blkid-patch-test: tools
	tests/blkid-patch

clean:
	$(MAKE) -C $(KDIR) M=$(MOD_DIR) clean 2>/dev/null || true
	$(MAKE) -C tools clean
	$(MAKE) -C tests/unit clean
	rm -rf build

.PHONY: all module pmlog release ordering-test crash-long crash-recovery fsx-test tools test unit demo check fuzz crash-test crash-parallel crash-atomic clean install uninstall \
	install-tools uninstall-tools install-module uninstall-module dkms-install dkms-uninstall \
	intree-check intree-kernel blkid-patch-test dkms-test bench bench-quick bench-create bench-fxmark bench-coherence bench-profile bench-coherence-test bench-helpers bench-tlbcost
