# gpufit: hand-written GNU make build (GNU make >= 3.82; tested with 4.3).
#
#   make                      library (static + shared) and the gpufit command, in build/
#   make check                unit tests, header tests, export/ABI checks, install round trip,
#                             Python binding tests, CLI smoke tests
#   make check-asan           unit tests rebuilt in build-asan/ under ASan + UBSan
#   make install / uninstall  PREFIX=/usr/local DESTDIR= (also LIBDIR, INCLUDEDIR, BINDIR)
#   make docs                 Doxygen HTML in build/docs (fails on any warning)
#   make validate | bench | format | format-check | clean | help
#
# Variables honoured: CC, CXX, AR, CFLAGS (default -O2 -g), CPPFLAGS, LDFLAGS, WERROR (default
# -Werror; `make WERROR=` for packagers), PREFIX/prefix, LIBDIR, INCLUDEDIR, BINDIR,
# PKGCONFIGDIR, DESTDIR, BUILD (default build), PYTHON, DOXYGEN, CLANG_FORMAT.
#
# The version lives only in include/gpufit.h; everything below reads it from there.

SHELL := /bin/sh
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SUFFIXES:

# ---------------------------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------------------------
CC ?= cc
# `make CC=clang` should also test the header with clang++ (and gcc-12 with g++-12), unless
# CXX was given explicitly.
ifeq ($(origin CXX),default)
  ifneq ($(findstring clang,$(CC)),)
    CXX := $(subst clang,clang++,$(CC))
  else ifneq ($(findstring gcc,$(CC)),)
    CXX := $(subst gcc,g++,$(CC))
  endif
endif
AR ?= ar
NM ?= nm
READELF ?= readelf
INSTALL ?= install
PYTHON ?= python3
DOXYGEN ?= doxygen
CLANG_FORMAT ?= clang-format-14

# ---------------------------------------------------------------------------------------------
# Version, read from the header (zstd style). `\#` keeps `#` literal in every GNU make version.
# ---------------------------------------------------------------------------------------------
HEADER := include/gpufit.h
HASH := \#
gpufit_header_int = $(shell sed -n 's/^[[:blank:]]*$(HASH)[[:blank:]]*define[[:blank:]]\{1,\}GPUFIT_$(1)[[:blank:]]\{1,\}\([0-9]\{1,\}\).*/\1/p' $(HEADER))
MAJOR     := $(call gpufit_header_int,VERSION_MAJOR)
MINOR     := $(call gpufit_header_int,VERSION_MINOR)
PATCH     := $(call gpufit_header_int,VERSION_PATCH)
SOVERSION := $(call gpufit_header_int,SOVERSION)
ifeq ($(strip $(MAJOR)),)
  $(error cannot read GPUFIT_VERSION_MAJOR from $(HEADER))
endif
ifeq ($(strip $(MINOR)),)
  $(error cannot read GPUFIT_VERSION_MINOR from $(HEADER))
endif
ifeq ($(strip $(PATCH)),)
  $(error cannot read GPUFIT_VERSION_PATCH from $(HEADER))
endif
ifeq ($(strip $(SOVERSION)),)
  $(error cannot read GPUFIT_SOVERSION from $(HEADER))
endif
VERSION := $(MAJOR).$(MINOR).$(PATCH)

# ---------------------------------------------------------------------------------------------
# Directories
# ---------------------------------------------------------------------------------------------
BUILD ?= build
prefix ?= /usr/local
PREFIX ?= $(prefix)
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR ?=

# ---------------------------------------------------------------------------------------------
# Flags
# ---------------------------------------------------------------------------------------------
CFLAGS ?= -O2 -g
CPPFLAGS ?=
LDFLAGS ?=
WERROR ?= -Werror
# Extra flags for every compile and link (check-asan sets it); not for users.
SAN_FLAGS ?=
# libm: only if lib/ ever needs it; --as-needed drops it from the .so otherwise.
LIBS ?= -lm

WARNINGS := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wvla -Wformat=2 -Wwrite-strings -Wundef -Wpointer-arith
# Tests: no -Wwrite-strings, which Criterion's new assert API (eq(str, x, "literal")) trips.
TEST_WARNINGS := $(filter-out -Wwrite-strings,$(WARNINGS))
DEPFLAGS := -MMD -MP

# The library: hidden by default, exported through GPUFIT_API + lib/gpufit.map.
LIB_CFLAGS  = -std=c11 $(WARNINGS) $(WERROR) -fPIC -fvisibility=hidden -DGPUFIT_BUILDING \
              -Iinclude -Ilib $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS)
# The command is a client of the public header only.
CLI_CFLAGS  = -std=c11 $(WARNINGS) $(WERROR) -Iinclude $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS)
# Unit tests and benchmarks may also test lib/internal.h.
TEST_CFLAGS = -std=c11 $(TEST_WARNINGS) $(WERROR) -Iinclude -Ilib $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS)
LINK_FLAGS  = $(CFLAGS) $(SAN_FLAGS) $(LDFLAGS)

# Header tests: always -Werror, independent of WERROR.
HEADER_WARN := -Wall -Wextra -Wpedantic -Werror
ASAN_FLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

# ---------------------------------------------------------------------------------------------
# Sources and products
# ---------------------------------------------------------------------------------------------
LIB_SRCS   := $(sort $(wildcard lib/*.c))
LIB_OBJS   := $(patsubst lib/%.c,$(BUILD)/obj/%.o,$(LIB_SRCS))
CLI_SRCS   := $(sort $(wildcard cli/*.c))
CLI_OBJS   := $(patsubst cli/%.c,$(BUILD)/cli/%.o,$(CLI_SRCS))
UNIT_SRCS  := $(sort $(wildcard tests/unit/*.c))
UNIT_OBJS  := $(patsubst tests/unit/%.c,$(BUILD)/unit/%.o,$(UNIT_SRCS))
BENCH_SRCS := $(sort $(wildcard tests/bench/*.c))
BENCH_BINS := $(patsubst tests/bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
CLI_TESTS  := $(sort $(wildcard tests/cli/*.sh))

STATIC_LIB := $(BUILD)/libgpufit.a
SO_REAL    := libgpufit.so.$(VERSION)
SONAME     := libgpufit.so.$(SOVERSION)
SHARED_LIB := $(BUILD)/$(SO_REAL)
SO_LINKS   := $(BUILD)/$(SONAME) $(BUILD)/libgpufit.so
CLI_BIN    := $(if $(CLI_SRCS),$(BUILD)/gpufit)
UNIT_BIN   := $(BUILD)/test_unit
UNIT_DEP   := $(if $(UNIT_SRCS),$(UNIT_BIN))
PC_FILE    := $(BUILD)/gpufit.pc
HEADER_OBJS := $(BUILD)/header/header_c11.o $(BUILD)/header/header_c99.o \
               $(BUILD)/header/header_cxx.o

# Environment for scripts and tests: absolute paths to what was built.
TEST_ENV = GPUFIT_LIBRARY='$(abspath $(BUILD)/$(SONAME))' GPUFIT_CLI='$(abspath $(BUILD)/gpufit)' \
           GPUFIT_BUILD='$(abspath $(BUILD))' PATH='$(abspath $(BUILD))':"$$PATH"

# ---------------------------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------------------------
.PHONY: all lib cli
all: lib cli $(PC_FILE)
lib: $(STATIC_LIB) $(SHARED_LIB) $(SO_LINKS)
cli: $(CLI_BIN)
	@$(if $(CLI_SRCS),:,echo "note: cli/ has no .c files yet; the gpufit command was not built")

$(BUILD)/obj $(BUILD)/cli $(BUILD)/unit $(BUILD)/bench $(BUILD)/header $(BUILD)/docs:
	mkdir -p $@

$(BUILD)/obj/%.o: lib/%.c | $(BUILD)/obj
	$(CC) $(LIB_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/cli/%.o: cli/%.c | $(BUILD)/cli
	$(CC) $(CLI_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/unit/%.o: tests/unit/%.c | $(BUILD)/unit
	$(CC) $(TEST_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(STATIC_LIB): $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $(LIB_OBJS)

$(SHARED_LIB): $(LIB_OBJS) lib/gpufit.map
	$(CC) -shared $(LINK_FLAGS) -Wl,-z,defs -Wl,--version-script=lib/gpufit.map \
	    -Wl,-soname,$(SONAME) -o $@ $(LIB_OBJS) -Wl,--as-needed $(LIBS)

$(BUILD)/$(SONAME): $(SHARED_LIB)
	ln -sf $(SO_REAL) $@

$(BUILD)/libgpufit.so: $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

# The command links the static archive, so it runs without LD_LIBRARY_PATH.
$(BUILD)/gpufit: $(CLI_OBJS) $(STATIC_LIB)
	$(CC) $(LINK_FLAGS) -o $@ $(CLI_OBJS) $(STATIC_LIB) $(LIBS)

# pkg-config file: lib/include dirs relative to ${prefix} where possible; no build-only defines.
PC_LIBDIR     = $(patsubst $(PREFIX)/%,$${exec_prefix}/%,$(LIBDIR))
PC_INCLUDEDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))
$(PC_FILE): pkgconfig/gpufit.pc.in $(HEADER) FORCE
	@mkdir -p $(@D)
	@sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(PC_LIBDIR)|g' \
	     -e 's|@INCLUDEDIR@|$(PC_INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' \
	     pkgconfig/gpufit.pc.in > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; echo "generated $@"; fi

$(UNIT_BIN): $(UNIT_OBJS) $(STATIC_LIB)
	$(CC) $(LINK_FLAGS) -o $@ $(UNIT_OBJS) $(STATIC_LIB) -lcriterion $(LIBS)

$(BUILD)/bench/%: tests/bench/%.c $(STATIC_LIB) | $(BUILD)/bench
	$(CC) $(TEST_CFLAGS) -o $@ $< $(STATIC_LIB) $(LDFLAGS) $(LIBS)

# Header tests: gpufit.h alone must compile as C11 and C99 with -Wpadded (no implicit padding
# in any public struct) and as C++11.
$(BUILD)/header/header_c11.o: tests/header/header_c11.c $(HEADER) | $(BUILD)/header
	$(CC) -std=c11 $(HEADER_WARN) -Wpadded -Iinclude -c $< -o $@
$(BUILD)/header/header_c99.o: tests/header/header_c11.c $(HEADER) | $(BUILD)/header
	$(CC) -std=c99 $(HEADER_WARN) -Wpadded -Iinclude -c $< -o $@
$(BUILD)/header/header_cxx.o: tests/header/header_cxx.cpp $(HEADER) | $(BUILD)/header
	$(CXX) -std=c++11 $(HEADER_WARN) -Iinclude -c $< -o $@

-include $(wildcard $(BUILD)/obj/*.d $(BUILD)/cli/*.d $(BUILD)/unit/*.d)

# ---------------------------------------------------------------------------------------------
# Tests. Each step is a canned recipe so that `make check` runs them in order (even under -j)
# and each can also be run alone (make check-unit, check-header, check-abi, ...).
# ---------------------------------------------------------------------------------------------
# Sanitizer reports go to $(BUILD)/sanitizer.log.PID: Criterion ignores a worker's exit status
# after the test body has passed, so a leak report would otherwise not fail the run.
SAN_LOG = $(abspath $(BUILD))/sanitizer.log
SAN_ENV = ASAN_OPTIONS='log_path=$(SAN_LOG)' \
          LSAN_OPTIONS='suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0:log_path=$(SAN_LOG)' \
          UBSAN_OPTIONS='print_stacktrace=1:halt_on_error=1:log_path=$(SAN_LOG)'
define run-unit
	@echo "==> unit tests ($(UNIT_BIN))"
	@rm -f $(SAN_LOG).*
	$(if $(UNIT_SRCS),$(TEST_ENV) $(SAN_ENV) $(UNIT_BIN),@echo "    no tests/unit/*.c yet")
	@if ls $(SAN_LOG).* >/dev/null 2>&1; then cat $(SAN_LOG).*; \
	    echo "FAIL: sanitizer reports above (files $(SAN_LOG).*)"; exit 1; fi
endef

define run-header
	@echo "==> header tests: gpufit.h alone as C11 and C99 (-Wpadded) and C++11 ($(CXX)): OK"
endef

define run-abi
	@echo "==> exported symbols: $(SHARED_LIB) == lib/gpufit.map == GPUFIT_API in $(HEADER)"
	NM='$(NM)' READELF='$(READELF)' sh tests/abi/check-exports.sh '$(BUILD)'
endef

define run-install
	@echo "==> install round trip (DESTDIR, pkg-config, examples, uninstall)"
	CC='$(CC)' BUILD='$(BUILD)' GPUFIT_MAKE='$(MAKE)' sh tests/install/test-install.sh
endef

define run-python
	@echo "==> Python binding tests (bindings/python/tests)"
	@if [ -d bindings/python/tests ]; then \
	    echo "cd bindings/python && $(PYTHON) -m unittest discover -s tests -v"; \
	    cd bindings/python && $(TEST_ENV) PYTHONPATH='$(CURDIR)/bindings/python' \
	        $(PYTHON) -m unittest discover -s tests -v; \
	else echo "    bindings/python/tests does not exist yet: skipped"; fi
endef

define run-cli
	@echo "==> CLI smoke tests (tests/cli/*.sh)"
	@$(if $(CLI_TESTS),set -e; for t in $(CLI_TESTS); do echo "--- $$t"; $(TEST_ENV) bash "$$t"; done; \
	    echo "    $(words $(CLI_TESTS)) CLI smoke test(s) passed",echo "    no tests/cli/*.sh yet: skipped")
endef

# Accuracy gate: the single-GPU published measurements of ../shared/validation must meet the
# targets of issue #2 (median |error| <= 10 %, worst <= 25 %, every verdict right).
VALIDATION_CASES ?= ../shared/validation/public.jsonl
define run-validate
	@echo "==> accuracy against published measurements (tools/validate.py --scope single --check)"
	@if [ -f '$(VALIDATION_CASES)' ]; then \
	    st=0; out=$$($(TEST_ENV) $(PYTHON) tools/validate.py --cases '$(VALIDATION_CASES)' \
	        --scope single --check 2>&1) || st=$$?; printf '%s\n' "$$out" | tail -n 6; \
	    exit $$st; \
	else echo "    $(VALIDATION_CASES) not found: skipped"; fi
endef

.PHONY: check check-unit check-header check-abi check-install check-python check-cli check-asan
check: all $(UNIT_DEP) $(HEADER_OBJS)
	$(run-unit)
	$(run-header)
	$(run-abi)
	$(run-install)
	$(run-python)
	$(run-cli)
	$(run-validate)
	@echo "==> make check: all steps passed"

check-unit: $(UNIT_DEP)
	$(run-unit)
check-header: $(HEADER_OBJS)
	$(run-header)
check-abi: lib
	$(run-abi)
check-install: all
	$(run-install)
check-python: lib
	$(run-python)
check-cli: $(CLI_BIN)
	$(run-cli)

# Unit tests under AddressSanitizer + UndefinedBehaviorSanitizer, in build-asan/ (only the
# static archive is needed: sanitised shared objects do not link with -z defs under clang).
# Always rebuilt from scratch, so the compiler and flags of this run are the ones tested.
check-asan:
	rm -rf build-asan
	$(MAKE) --no-print-directory BUILD=build-asan SAN_FLAGS='$(ASAN_FLAGS)' check-unit

# ---------------------------------------------------------------------------------------------
# Other targets
# ---------------------------------------------------------------------------------------------
.PHONY: validate bench docs format format-check
validate: $(CLI_BIN) lib
	$(if $(CLI_BIN),,$(error make validate needs the gpufit command, and cli/ has no .c files))
	$(TEST_ENV) $(PYTHON) tools/validate.py $(VALIDATE_ARGS)

bench: $(BENCH_BINS)
	@$(if $(BENCH_BINS),set -e; for b in $(BENCH_BINS); do echo "==> $$b"; $$b; done, \
	    echo "no tests/bench/*.c yet: nothing to run")

# README.md becomes the main page when it exists (`make docs DOCS_README=` to leave it out).
DOCS_README ?= $(wildcard README.md)
docs: | $(BUILD)/docs
	@echo "==> doxygen docs/Doxyfile -> $(BUILD)/docs/html"
	{ cat docs/Doxyfile; \
	  echo 'PROJECT_NUMBER = $(VERSION)'; \
	  echo 'OUTPUT_DIRECTORY = $(BUILD)/docs'; \
	  $(if $(DOCS_README),echo 'INPUT += $(DOCS_README)'; echo 'USE_MDFILE_AS_MAINPAGE = $(DOCS_README)';) \
	} | $(DOXYGEN) -

FORMAT_FILES = $(sort $(wildcard include/*.h lib/*.c lib/*.h cli/*.c cli/*.h examples/*.c \
                 tests/*/*.c tests/*/*.h tests/*/*.cpp))
format:
	$(CLANG_FORMAT) -i $(FORMAT_FILES)
format-check:
	$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_FILES)

# ---------------------------------------------------------------------------------------------
# Install
# ---------------------------------------------------------------------------------------------
.PHONY: install uninstall
install: all
	$(INSTALL) -d '$(DESTDIR)$(INCLUDEDIR)' '$(DESTDIR)$(LIBDIR)' '$(DESTDIR)$(PKGCONFIGDIR)'
	$(INSTALL) -m 644 $(HEADER) '$(DESTDIR)$(INCLUDEDIR)/gpufit.h'
	$(INSTALL) -m 644 $(STATIC_LIB) '$(DESTDIR)$(LIBDIR)/libgpufit.a'
	$(INSTALL) -m 755 $(SHARED_LIB) '$(DESTDIR)$(LIBDIR)/$(SO_REAL)'
	ln -sf $(SO_REAL) '$(DESTDIR)$(LIBDIR)/$(SONAME)'
	ln -sf $(SONAME) '$(DESTDIR)$(LIBDIR)/libgpufit.so'
	$(INSTALL) -m 644 $(PC_FILE) '$(DESTDIR)$(PKGCONFIGDIR)/gpufit.pc'
ifneq ($(CLI_BIN),)
	$(INSTALL) -d '$(DESTDIR)$(BINDIR)'
	$(INSTALL) -m 755 $(CLI_BIN) '$(DESTDIR)$(BINDIR)/gpufit'
endif

uninstall:
	rm -f '$(DESTDIR)$(INCLUDEDIR)/gpufit.h' '$(DESTDIR)$(LIBDIR)/libgpufit.a' \
	      '$(DESTDIR)$(LIBDIR)/$(SO_REAL)' '$(DESTDIR)$(LIBDIR)/$(SONAME)' \
	      '$(DESTDIR)$(LIBDIR)/libgpufit.so' '$(DESTDIR)$(PKGCONFIGDIR)/gpufit.pc' \
	      '$(DESTDIR)$(BINDIR)/gpufit'

# ---------------------------------------------------------------------------------------------
.PHONY: clean help FORCE
FORCE:
clean:
	rm -rf '$(BUILD)' build build-asan

help:
	@sed -n '2,16s/^# \{0,1\}//p' Makefile
	@echo "version $(VERSION) (SONAME $(SONAME)), from $(HEADER)"
