# SPDX-License-Identifier: GPL-2.0-only
# husk: `make` builds ./husk (VMM with the guest kernel inside) and the images;
# `make run` installs what is missing, builds and runs a demo; `make check`
# runs the tests.

include mk/vmm-lib.mk

BUILD := $(CURDIR)/build
PREFIX ?= /usr/local
CC ?= cc
HOST_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -Ivmm -Iloader
GUEST_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -ffreestanding -fno-pic -fno-pie \
	-mno-red-zone -mgeneral-regs-only -fno-stack-protector -fno-asynchronous-unwind-tables \
	-fno-builtin -nostdinc -isystem $(shell $(CC) -print-file-name=include) \
	-Iguest -Iguest/include -Iinclude -I$(BUILD)/libfdt-src

GUEST_SRC := $(wildcard guest/*.c guest/*/*.c)
LIBFDT_SRC := fdt.c fdt_ro.c fdt_strerror.c
HEADERS := $(wildcard include/husk/*.h vmm/*.h vmm/*/*.h loader/*.h)

.PHONY: all deps images run check bench conformance clean distclean test-builds
all: husk images lib

deps:
	@./scripts/install-deps

# --- guest kernel -------------------------------------------------------
$(BUILD)/libfdt-src/ORIGIN: guest/fetch-libfdt scripts/debsrc
	guest/fetch-libfdt $(BUILD)/src $(BUILD)/libfdt-src

$(BUILD)/guest/%.o: guest/%.c $(wildcard guest/*.h guest/*/*.h) $(HEADERS) $(BUILD)/libfdt-src/ORIGIN
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(GUEST_CFLAGS) -c $< -o $@

$(BUILD)/guest/arch/entry.o: guest/arch/entry.S include/husk/abi.h
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	@$(CC) $(GUEST_CFLAGS) -c $< -o $@

# libfdt is third-party code: its own warnings are not ours to fix.
$(BUILD)/guest/libfdt/%.o: $(BUILD)/libfdt-src/ORIGIN
	@mkdir -p $(dir $@)
	@echo "  CC      libfdt/$*.c"
	@$(CC) $(GUEST_CFLAGS) -Wno-error -Wno-sign-compare -c $(BUILD)/libfdt-src/$*.c -o $@

# The VMM's ELF loader is the kernel's too (execve: proc/exec.c, which
# provides its gpa_ptr and errmsg): its headers come from loader/ and vmm/,
# after the guest's own (<elf.h> and <stdio.h>: guest/include).
GUEST_LOADER_INC := -Iloader -Ivmm
$(BUILD)/guest/loader/%.o: loader/%.c $(wildcard guest/include/*.h) $(HEADERS)
	@mkdir -p $(dir $@)
	@echo "  CC      $< (guest)"
	@$(CC) $(GUEST_CFLAGS) $(GUEST_LOADER_INC) -c $< -o $@
$(BUILD)/guest/proc/exec.o: GUEST_CFLAGS += $(GUEST_LOADER_INC)

# /etc/services in the guest: Debian's netbase file (guest/fs/services.S).
ETC_SERVICES ?= /etc/services
$(BUILD)/guest/fs/services.o: guest/fs/services.S $(ETC_SERVICES)
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	@$(CC) $(GUEST_CFLAGS) -DETC_SERVICES='"$(ETC_SERVICES)"' -c $< -o $@

GUEST_OBJ := $(BUILD)/guest/arch/entry.o $(BUILD)/guest/fs/services.o $(patsubst guest/%.c,$(BUILD)/guest/%.o,$(GUEST_SRC)) \
	$(BUILD)/guest/loader/elf_load.o $(patsubst %.c,$(BUILD)/guest/libfdt/%.o,$(LIBFDT_SRC))

$(BUILD)/guest/kernel.elf: $(GUEST_OBJ) guest/arch/kernel.ld
	@echo "  LD      $@"
	@$(CC) -nostdlib -static -no-pie -Wl,-T,guest/arch/kernel.ld -Wl,--build-id=none -Wl,--no-warn-rwx-segments -o $@ $(GUEST_OBJ) -lgcc

# --- VMM ------------------------------------------------------------------
# build/libvmm.a (objects in build/libvmm/), and ./husk from it, main.o and
# the kernel blob (build/husk/).  Static: no dynamic loader work at start-up
# (~0.5 ms measured here).
HOST_COMPILE = $(CC) $(HOST_CFLAGS)
$(eval $(call husk_lib,$(BUILD)/libvmm.a,HOST_COMPILE))
$(eval $(call husk_objs,$(BUILD)/husk,vmm/main.c,HOST_COMPILE))

$(BUILD)/husk/kernel_blob.o: vmm/kernel_blob.S $(BUILD)/guest/kernel.elf
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	@$(CC) $(HOST_CFLAGS) -DHUSK_KERNEL_PATH='"$(BUILD)/guest/kernel.elf"' -c $< -o $@

husk: $(BUILD)/husk/vmm/main.o $(BUILD)/husk/kernel_blob.o $(BUILD)/libvmm.a
	@echo "  LD      husk"
	@$(CC) -o $@ $^ -static $(HUSK_LDLIBS)

# --- libhusk: the C library (include/husk.h, lib/) ------------------------
# build/lib/libhusk.so.0 (soname; the ABI's version, HUSK_ABI_VERSION) and
# libhusk.a (make install adds husk.pc for pkg-config, from lib/husk.pc.in).
# Position-independent objects of lib/*.c
# and the option table husk itself parses (vmm/option_table.c); only husk_*
# is exported (lib/libhusk.map).  The library starts the husk executable:
# HUSK_BIN, else LIBDIR/../bin/husk beside it, else $(PREFIX)/bin/husk.
LIB_SRC := $(wildcard lib/*.c) vmm/option_table.c
LIB_OBJ := $(patsubst %.c,$(BUILD)/lib/objs/%.o,$(LIB_SRC))
LIB_VERSION := $(shell sed -n 's/^\#define HUSK_VERSION "\(.*\)"/\1/p' vmm/version.h)
LIB_SONAME := libhusk.so.0
# The objects hold PREFIX (the last place they look for husk): made again
# when it changes.
$(BUILD)/lib/prefix: FORCE
	@mkdir -p $(dir $@)
	@echo '$(PREFIX)' | cmp -s - $@ || echo '$(PREFIX)' >$@
.PHONY: FORCE

$(BUILD)/lib/objs/%.o: %.c include/husk.h lib/lib_internal.h vmm/option_table.h vmm/version.h $(BUILD)/lib/prefix
	@mkdir -p $(dir $@)
	@echo "  CC      $< (libhusk)"
	@$(CC) $(HOST_CFLAGS) -fPIC -DHUSK_BIN_DEFAULT='"$(PREFIX)/bin/husk"' -c $< -o $@

$(BUILD)/lib/libhusk.so.$(LIB_VERSION): $(LIB_OBJ) lib/libhusk.map
	@echo "  LD      $(notdir $@)"
	@$(CC) -shared -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=lib/libhusk.map -Wl,-z,defs \
		-o $@ $(LIB_OBJ) -ljansson
	@ln -sf $(notdir $@) $(BUILD)/lib/$(LIB_SONAME)
	@ln -sf $(LIB_SONAME) $(BUILD)/lib/libhusk.so

$(BUILD)/lib/libhusk.a: $(LIB_OBJ)
	@echo "  AR      $(notdir $@)"
	@rm -f $@ && $(AR) rcs $@ $^

.PHONY: lib
lib: $(BUILD)/lib/libhusk.so.$(LIB_VERSION) $(BUILD)/lib/libhusk.a

# --- test-only builds ----------------------------------------------------
# husk-test: husk with test hooks (HUSK_TEST_KERNEL, HUSK_TEST_SECCOMP_TRIGGER):
# main.c and the library's sources that mention HUSK_TEST_HOOKS compiled again
# with it (build/tests/hooks/), linked ahead of libvmm.a, whose hook-less
# copies of them are then never pulled in.  (A header's hooks only declare.)
# evil-kernel.elf: a hostile guest kernel for it (tests/evil-kernel).
HOOK_SRC := vmm/main.c $(shell grep -l HUSK_TEST_HOOKS $(HUSK_LIB_SRC))
HOOK_COMPILE = $(CC) $(HOST_CFLAGS) -DHUSK_TEST_HOOKS
$(eval $(call husk_objs,$(BUILD)/tests/hooks,$(HOOK_SRC),HOOK_COMPILE))

$(BUILD)/tests/husk-test: $(patsubst %.c,$(BUILD)/tests/hooks/%.o,$(HOOK_SRC)) $(BUILD)/husk/kernel_blob.o \
		$(BUILD)/libvmm.a
	@mkdir -p $(dir $@)
	@echo "  LD      husk-test"
	@$(CC) -o $@ $^ -static $(HUSK_LDLIBS)

EVIL_SRC := tests/evil-kernel/start.S tests/evil-kernel/evil.c
$(BUILD)/tests/evil-kernel.elf: $(EVIL_SRC) guest/arch/kernel.ld $(wildcard include/husk/*.h)
	@mkdir -p $(dir $@)
	@echo "  LD      evil-kernel.elf"
	@$(CC) $(GUEST_CFLAGS) -nostdlib -static -no-pie -Wl,-T,guest/arch/kernel.ld -Wl,--build-id=none \
		-Wl,--no-warn-rwx-segments -o $@ $(EVIL_SRC)

test-builds: $(BUILD)/tests/husk-test $(BUILD)/tests/evil-kernel.elf

# --- images (our libc, Lua, CPython and its system disk: images/Makefile) ----
# The system disk holds BusyBox (images/busybox.sh: /usr/bin/sh and the common
# tools); images/Makefile builds it before the disk.  build/images/busybox is
# a part of the disk, not an image (mode 0644: husk lists only executables),
# so it is not in IMAGE_NAMES.
images:
	$(MAKE) -C images BUILD=$(BUILD)
	$(MAKE) image-info

# --- image metadata: build/images/NAME.info ----------------------------------
# What `husk images` lists and where husk finds an image's aliases (python3,
# python3.11 -> python): KEY=VALUE lines from scripts/image-info, which runs
# each static binary natively for its version.  IMAGE_NAMES are the images
# `make images` builds (images/Makefile) and `make install` installs.
IMAGE_NAMES := lua python
IMAGE_INFO := $(patsubst %,$(BUILD)/images/%.info,$(IMAGE_NAMES))
.PHONY: image-info
image-info: $(IMAGE_INFO)

$(BUILD)/images/%.info: $(BUILD)/images/% scripts/image-info
	@echo "  INFO    $(notdir $@)"
	@scripts/image-info $(BUILD)/images $* > $@.tmp && mv $@.tmp $@

run: deps
	$(MAKE) all
	./husk run lua -e 'print("hello from Lua " .. _VERSION .. " in a husk microVM: 1+1 = " .. 1+1)'

check: deps
	$(MAKE) all $(BUILD)/timeit test-builds
	$(MAKE) -C tests BUILD=$(BUILD)
	prove -v tests/unit/*.t tests/integration/*.t tests/hostile/*.t
	$(MAKE) fuzz-smoke

# The integration and hostile tests again with every run booted afresh
# (HUSK_COLD=1: no snapshot), as the default runs start from snapshots.  CI
# runs it after check.
check-cold: deps
	$(MAKE) all test-builds
	$(MAKE) -C tests BUILD=$(BUILD)
	HUSK_COLD=1 prove tests/integration/*.t tests/hostile/*.t

$(BUILD)/timeit: bench/timeit.c bench/samples.h
	$(CC) $(HOST_CFLAGS) -o $@ $<

$(BUILD)/bench/lib_runs: bench/lib_runs.c bench/samples.h include/husk.h $(BUILD)/lib/libhusk.a
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -o $@ $< $(BUILD)/lib/libhusk.a -ljansson

bench: all $(BUILD)/timeit $(BUILD)/bench/lib_runs
	$(MAKE) -C tests BUILD=$(BUILD)
	bench/startup
	bench/compute
	bench/syscall
	bench/python
	bench/threads
	bench/processes
	bench/datasets
	bench/density
	bench/library
	bench/dask
	bench/review

# husk bench's peers, from Debian: the sandboxes, lua5.4 (the lua
# workload's native run), matplotlib and rsvg-convert (the plots), and a
# Debian cloud kernel for QEMU's microvm, unpacked into build/bench-deps
# (never installed into /boot).
BENCH_DEB_PACKAGES := bubblewrap firejail runsc qemu-system-x86 lua5.4 python3-matplotlib librsvg2-bin cpio
.PHONY: bench-deps bench-report
bench-deps:
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(BENCH_DEB_PACKAGES)
	@mkdir -p $(BUILD)/bench-deps
	@set -e; cd $(BUILD)/bench-deps; rm -f *.deb; \
		k=$$(apt-cache depends linux-image-cloud-amd64 | awk '/Depends: linux-image-/ { print $$2; exit }'); \
		apt-get download -q "$$k"; dpkg-deb --fsys-tarfile "$$k"_*.deb | tar -x --wildcards './boot/vmlinuz-*'; \
		mv boot/vmlinuz-* . && rmdir boot && rm -f *.deb; ls vmlinuz-*

# The README's performance section and docs/bench.svg, from one husk bench
# report (between the README's "husk bench report" markers).
bench-report: all
	./husk bench --runs 200 --json $(BUILD)/bench-report.json --plot docs/bench.svg \
		--update-readme README.md

# --- fuzzing (libFuzzer: clang, libclang-rt-14-dev) -------------------------
# tests/fuzz: each target runs FUZZ_SECONDS and prints libFuzzer's "Done N
# runs" line; fuzz-smoke is the short run for CI.  A crash fails either one
# and leaves its input in $(BUILD)/fuzz/crashes/TARGET/.
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10
.PHONY: fuzz fuzz-smoke check-cold
fuzz:
	@$(MAKE) --no-print-directory -C tests/fuzz BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) run
fuzz-smoke:
	@$(MAKE) --no-print-directory -C tests/fuzz BUILD=$(BUILD) FUZZ_SECONDS=$(FUZZ_SMOKE_SECONDS) run

conformance: all
	tests/conformance/run

# clean: everything built from this tree, except what is slow to remake and
# comes from elsewhere: our libc, the images and their Debian sources
# (build/musl, musl-deps, images, host-tcl, src: `make -C images clean`
# removes the builds, keeping the sources), the fetched libfdt source
# (build/libfdt-src), and the fuzzers' corpus and crashes (build/fuzz/corpus,
# crashes: findings, not build products).  distclean: all of build/.
clean:
	rm -rf husk $(BUILD)/husk $(BUILD)/libvmm $(BUILD)/libvmm.a $(BUILD)/lib $(BUILD)/bench $(BUILD)/guest $(BUILD)/tests \
		$(BUILD)/timeit $(filter-out $(BUILD)/fuzz/corpus $(BUILD)/fuzz/crashes,$(wildcard $(BUILD)/fuzz/*))

distclean:
	rm -rf husk '$(BUILD)'

# --- install --------------------------------------------------------------
# make install [PREFIX=/usr/local] [DESTDIR=]: husk in PREFIX/bin, libhusk
# (below), the images
# in PREFIX/lib/husk (only what a run reads: NAME, NAME.disk, NAME.env,
# NAME.info; not the staging dirs python-lib/ and python-sys/, nor
# python-stdlib.zip, which python.disk holds), where an installed husk looks
# for them (vmm/image.c, image_dir), the man page and bash completion.
# Depends on all, which rebuilds nothing when the tree is built.  uninstall
# removes exactly those files (and PREFIX/lib/husk once it is empty).
DESTDIR ?=
INSTALL ?= install
# Where each goes under DESTDIR (fixed: husk looks for its images at
# ../lib/husk from its own directory).
INSTALL_BIN = $(DESTDIR)$(PREFIX)/bin
INSTALL_IMAGES = $(DESTDIR)$(PREFIX)/lib/husk
INSTALL_MAN1 = $(DESTDIR)$(PREFIX)/share/man/man1
INSTALL_BASHCOMP = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
# libhusk, its header and pkg-config file; the Python package (with the
# header, which it reads for its declarations) where Debian's python3 looks (/usr/lib/python3/dist-packages for PREFIX=/usr, else
# PREFIX/lib/python3.X/dist-packages).
INSTALL_LIB = $(DESTDIR)$(PREFIX)/lib
INSTALL_INCLUDE = $(DESTDIR)$(PREFIX)/include
INSTALL_PC = $(DESTDIR)$(PREFIX)/lib/pkgconfig
PYTHON_VERSION := $(shell /usr/bin/python3 -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null)
INSTALL_PY = $(DESTDIR)$(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3/dist-packages,$(PREFIX)/lib/$(PYTHON_VERSION)/dist-packages)/husk
PY_FILES := $(wildcard python/husk/*.py) python/husk/py.typed
.PHONY: install uninstall
install: all $(IMAGE_INFO)
	$(INSTALL) -d '$(INSTALL_BIN)' '$(INSTALL_IMAGES)' '$(INSTALL_MAN1)' '$(INSTALL_BASHCOMP)' \
		'$(INSTALL_LIB)' '$(INSTALL_INCLUDE)' '$(INSTALL_PC)' '$(INSTALL_PY)'
	$(INSTALL) -m 0755 husk '$(INSTALL_BIN)/husk'
	$(INSTALL) -m 0755 $(BUILD)/lib/libhusk.so.$(LIB_VERSION) '$(INSTALL_LIB)/'
	ln -sf libhusk.so.$(LIB_VERSION) '$(INSTALL_LIB)/$(LIB_SONAME)'
	ln -sf $(LIB_SONAME) '$(INSTALL_LIB)/libhusk.so'
	$(INSTALL) -m 0644 $(BUILD)/lib/libhusk.a '$(INSTALL_LIB)/'
	$(INSTALL) -m 0644 include/husk.h '$(INSTALL_INCLUDE)/husk.h'
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(LIB_VERSION)|g' lib/husk.pc.in >'$(INSTALL_PC)/husk.pc'
	$(INSTALL) -m 0644 $(PY_FILES) include/husk.h '$(INSTALL_PY)/'
	@if [ -z '$(DESTDIR)' ]; then ldconfig; fi
	@set -e; for name in $(IMAGE_NAMES); do \
		img='$(BUILD)/images/'$$name; \
		echo "  $(INSTALL) $$img -> $(INSTALL_IMAGES)"; \
		$(INSTALL) -m 0755 "$$img" '$(INSTALL_IMAGES)/'; \
		$(INSTALL) -m 0644 "$$img.info" '$(INSTALL_IMAGES)/'; \
		for f in "$$img.disk" "$$img.env"; do \
			if [ -f "$$f" ]; then $(INSTALL) -m 0644 "$$f" '$(INSTALL_IMAGES)/'; fi; \
		done; \
	done
	$(INSTALL) -m 0644 bench/husk_bench.py bench/husk_bench_plot.py '$(INSTALL_IMAGES)/'
	$(INSTALL) -m 0644 docs/husk.1 '$(INSTALL_MAN1)/husk.1'
	$(INSTALL) -m 0644 docs/husk.bash-completion '$(INSTALL_BASHCOMP)/husk'

uninstall:
	rm -f '$(INSTALL_BIN)/husk' '$(INSTALL_MAN1)/husk.1' '$(INSTALL_BASHCOMP)/husk'
	rm -f '$(INSTALL_IMAGES)/husk_bench.py' '$(INSTALL_IMAGES)/husk_bench_plot.py'
	rm -f '$(INSTALL_LIB)/libhusk.so.$(LIB_VERSION)' '$(INSTALL_LIB)/$(LIB_SONAME)' '$(INSTALL_LIB)/libhusk.so' \
		'$(INSTALL_LIB)/libhusk.a' '$(INSTALL_INCLUDE)/husk.h' '$(INSTALL_PC)/husk.pc'
	rm -rf '$(INSTALL_PY)'
	@if [ -z '$(DESTDIR)' ]; then ldconfig; fi
	@set -e; for name in $(IMAGE_NAMES); do \
		for f in $$name $$name.info $$name.disk $$name.env; do \
			rm -f '$(INSTALL_IMAGES)/'$$f; \
		done; \
	done
	@if [ -d '$(INSTALL_IMAGES)' ]; then rmdir '$(INSTALL_IMAGES)' 2>/dev/null || \
		echo "uninstall: $(INSTALL_IMAGES) is not empty: left in place"; fi
