# SPDX-License-Identifier: GPL-2.0-only
# The VMM library, shared by the top Makefile, tests/Makefile and
# tests/fuzz/Makefile (each includes this file).
# The VMM minus its main(): every .c under vmm/ and the ELF loader, one list
# for the program (build/libvmm.a), the unit tests (build/tests/libvmm-san.a)
# and the fuzzers (build/fuzz/libvmm-fuzz.a).  Paths are relative to the top.
HUSK_ROOT := $(patsubst %/mk/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
HUSK_SRC_PREFIX := $(if $(filter $(CURDIR),$(HUSK_ROOT)),,$(HUSK_ROOT)/)
HUSK_LIB_SRC := $(filter-out vmm/main.c,$(patsubst $(HUSK_ROOT)/%,%,\
	$(wildcard $(HUSK_ROOT)/vmm/*.c $(HUSK_ROOT)/vmm/*/*.c))) loader/elf_load.c
# What husk links, statically (see README.md, "Licence"); the tests and the
# fuzzers link the same, dynamically.
HUSK_LDLIBS := -lfdt -lseccomp -lext2fs -lcom_err -ljansson -lnettle -lcares

# $(call husk_objs,DIR,SOURCES,COMPILE): DIR/x.o from each x.c in SOURCES,
# compiled by the command in the variable named COMPILE, with the headers it
# includes as prerequisites (DIR/x.d, from -MMD).
define husk_objs
$(patsubst %.c,$(1)/%.o,$(2)): $(1)/%.o: $(HUSK_SRC_PREFIX)%.c
	@mkdir -p $$(@D)
	@echo "  CC      $$*.c ($(notdir $(1)))"
	@$$($(3)) -MMD -MP -c $$< -o $$@
-include $(patsubst %.c,$(1)/%.d,$(2))
endef

# $(call husk_lib,ARCHIVE,COMPILE): ARCHIVE (lib*.a) from HUSK_LIB_SRC, its
# objects in the folder of the same name without .a.  The source folders are
# prerequisites too, so that a file added or removed rebuilds the archive.
define husk_lib
$(eval $(call husk_objs,$(basename $(1)),$(HUSK_LIB_SRC),$(2)))
$(1): $(patsubst %.c,$(basename $(1))/%.o,$(HUSK_LIB_SRC)) \
		$(sort $(patsubst %/,%,$(dir $(addprefix $(HUSK_SRC_PREFIX),$(HUSK_LIB_SRC)))))
	@echo "  AR      $$@"
	@rm -f $$@ && $$(AR) rcs $$@ $$(filter %.o,$$^)
endef
