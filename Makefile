# SPDX-License-Identifier: GPL-2.0
#
# vsmfs top-level build.
#
#   make              build fs/vsmfs/vsmfs.ko (out of tree) and the tools
#   make test         build, then run the test suite in QEMU VMs
#   make demo         build, boot a VM, mkfs + mount + a short fio run
#   make check        checkpatch, sparse and kernel-doc over the module
#   make fuzz         hostile-image fuzzer: N mutants (default 2000) of SEED
#   make crash-test   power-cut loop: N crash points (default 50) from SEED
#   make install      install the tools and their manual pages
#   make uninstall    remove what make install installed
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

all: module tools

module:
	@test -d "$(KDIR)" || { echo "kernel build tree '$(KDIR)' not found: apt-get install linux-headers-amd64 (or set KDIR)"; exit 1; }
	$(MAKE) $(KBUILD_ARGS) modules

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
	tests/crash/fuzz -s $(SEED) -n $(or $(N),2000)

crash-test: all
	tests/crash/power-cut -s $(SEED) -n $(or $(N),50)

check:
	$(MAKE) $(KBUILD_ARGS) C=2 modules
	tests/hygiene

# Installation, with the usual DESTDIR, PREFIX (manual pages, default
# /usr/local), SBINDIR (default /sbin, on root's $PATH, where mkfs(8) and
# fsck(8) look for mkfs.vsmfs and fsck.vsmfs) and MANDIR. The kernel module is installed by its own targets,
# which are added to INSTALL_TARGETS and UNINSTALL_TARGETS.
INSTALL_TARGETS := install-tools
UNINSTALL_TARGETS := uninstall-tools

install: $(INSTALL_TARGETS)

uninstall: $(UNINSTALL_TARGETS)

install-tools:
	$(MAKE) -C tools install $(if $(filter 1,$(WERROR)),,WERROR=)

uninstall-tools:
	$(MAKE) -C tools uninstall

clean:
	$(MAKE) -C $(KDIR) M=$(MOD_DIR) clean 2>/dev/null || true
	$(MAKE) -C tools clean
	$(MAKE) -C tests/unit clean
	rm -rf build

.PHONY: all module tools test unit demo check fuzz crash-test clean install uninstall install-tools uninstall-tools
