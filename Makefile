# libnccomring: `make` builds the library and the hosts, `make demo` runs the
# ring stage on the embedded default cluster, `make test` runs every test.

# Go on PATH, else where these machines keep it (the set-up step says so
# when it is in neither place).
export PATH := $(PATH):/usr/local/go/bin
GO      ?= go
CC      ?= gcc
CXX     ?= g++
BUILD   := build
LIB     := $(BUILD)/libnccomring.so
# LIB is this project's library. The libnccom build under test is
# LIBNCCOM=PATH (make conformance, make check-libnccom); LIB=PATH named it
# before issue 32, and on the command line it would replace this library in
# every rule, so it stops here, saying what to type.
ifeq ($(origin LIB),command line)
$(error LIB is this project's library, not a setting: name the libnccom build under test with LIBNCCOM=PATH, e.g. make check-libnccom LIBNCCOM=PATH)
endif
SONAME  := libnccomring.so.0
REFLIB  := $(BUILD)/libnccomref.so
PRELOAD := $(BUILD)/libnccomring-preload.so

CSTD     := -std=c11 -Wall -Wextra -Werror -O2
INCLUDES := -Iinclude
XML_CFLAGS := $(shell pkg-config --cflags libxml-2.0 2>/dev/null || xml2-config --cflags 2>/dev/null)
XML_LIBS   := $(shell pkg-config --libs libxml-2.0 2>/dev/null || xml2-config --libs 2>/dev/null)
# Hosts find build/libnccomring.so.0 next to themselves.
LINK_LIB := $(LIB) -Wl,-rpath,'$$ORIGIN'

# What the library is built from (not the tools under cmd/nccom-*).
GO_SOURCES := go.mod go.sum $(shell find abi abicheck layout ring kanga netdev ringdump version cmd/libnccomring -name '*.go' -o -name '*.s' -o -name '*.c' -o -name '*.h' -o -name '*.map') include/nccom_ring.h
COMMON     := tests/c/common/cluster.c tests/c/common/graph_xml.c tests/c/common/linked.c
COMMON_H   := tests/c/common/cluster.h tests/c/common/stage_setup.h tests/c/common/host.h include/nccom_ring.h

# The watchdog (tests/watchdog, docs/testing.md "Limits"): runs make
# test's steps, each in a make of its own, under limits that detect a hang
# without timing the machine (CPU since the last output, nothing running
# or waiting to run, a wall-clock cap only as the last resort), and the
# commands inside a step under tighter ones: $(WATCH) NAME -- COMMAND. A
# recipe that uses it lists $(WATCHDOG) among its prerequisites (set here,
# above every rule: make expands a prerequisite list as it reads it).
# Put it before env and LD_PRELOAD=, never after: preloaded into the
# watchdog, the Go library would start a second Go runtime in a Go program.
WATCHDOG := $(BUILD)/watchdog
WATCH     = $(CURDIR)/$(WATCHDOG) run --cpu 5m --blocked 60s --wall 30m --name
# For a command that never sleeps and ends in seconds (a host that calls the
# library): 30 s with none of its threads running or waiting to run is a
# hang (a call waiting on a lock, a pipe or a child), 2 min of CPU without
# output a spin; the wall-clock cap, 10 min, only the last resort.
WATCH_NOSLEEP = $(CURDIR)/$(WATCHDOG) run --cpu 2m --blocked 30s --wall 10m --name

# go vet/test compile the export package too: the header's hash in
# CGO_CFLAGS makes Go's cache notice header edits (see mk/build-lib.sh).
export CGO_CFLAGS := -O2 -g -DNCCOMRING_HEADER_SHA256_PREFIX=$(shell sha256sum < include/nccom_ring.h | cut -c1-16)

.PHONY: test-boundary all demo bench test-bench test test-hostile test-sanitizers test-fuzz fuzz test-go test-header test-c test-graphs test-cmake test-conformance conformance clean

## all: build the library, the preload shim, ringstage and the C hosts (default)
all: $(LIB) $(PRELOAD) $(BUILD)/ringstage $(BUILD)/expected $(BUILD)/faults
# Issue 38: nccom-rings simulate's SimGrid engine, built where SimGrid is
# (its rule is by test-simulate's).
SIMGRID    := $(shell pkg-config --exists simgrid 2>/dev/null && echo yes)
SIM_ENGINE := $(BUILD)/nccom-simulate-engine
SIM_MISSING := the SimGrid engine is not built: apt-get install -y libsimgrid-dev, then make
all: $(if $(SIMGRID),$(SIM_ENGINE))

# make help: one line per target a user runs, read from the `## TARGET: text`
# comments of this Makefile and mk/*.mk. To list a target, put such a line
# just above it; make test's steps come from TEST_STEPS.
## help: this list
.PHONY: help
help:
	@awk '/^## [^ :]+: / { sub(/^## /, ""); i = index($$0, ": "); \
	  printf "  make %-19s %s\n", substr($$0, 1, i - 1), substr($$0, i + 2) }' $(MAKEFILE_LIST) | sort
	@echo "make test's steps, each of which runs alone (make STEP):"
	@echo "$(TEST_STEPS)" | fold -s -w 72 | sed 's/^/  /; s/ *$$//'

# After the build, the header, the layout table and the Go mirrors must
# agree: the header asserts its offsets at compile time, abi/'s mirrors are
# generated from it (a generated file that is stale fails), and the table
# is checked against the mirrors and the header (internal/headercheck), so
# a drifted offset anywhere fails `make` itself.
$(LIB): $(GO_SOURCES) mk/build-lib.sh
	sh mk/build-lib.sh $(BUILD)
	@$(GO) test -count=1 ./internal/headercheck > $(BUILD)/layout-check.log 2>&1 || \
	  { cat $(BUILD)/layout-check.log; rm -f $@; exit 1; }

# The Go mirrors of the header's structs, generated with cgo -godefs in the
# manner of golang.org/x/sys/unix: DIR/types.go is the input, DIR/ztypes.go
# the output, whose first line is the command that writes it
# (internal/mkgodefs says what it edits). After an edit to
# include/nccom_ring.h, run this and commit the result; internal/headercheck
# fails until then.
GODEFS_DIRS := abi internal/headercheck
.PHONY: generate
## generate: regenerate the Go mirrors (*/ztypes.go) from include/nccom_ring.h, zenv.h and docs/environment.md's table from cmd/libnccomring/params.go, and docs/commands/ from the tools' command tables, after editing any of them
generate:
	$(GO) generate ./cmd/libnccomring
	$(GO) test ./cmd/nccom-rings ./cmd/nccom-abi -run '^TestCommandTable$$' -update
	@mkdir -p $(BUILD)
	@set -e; for d in $(GODEFS_DIRS); do \
	  echo "$(GO) run ./internal/mkgodefs $$d/types.go > $$d/ztypes.go"; \
	  $(GO) run ./internal/mkgodefs $$d/types.go > $(BUILD)/ztypes.go.new; \
	  mv $(BUILD)/ztypes.go.new $$d/ztypes.go; \
	done

# The name hosts record as NEEDED (the SONAME); build-lib.sh makes it.
$(BUILD)/$(SONAME): $(LIB)
	@test -L $@ || ln -sf libnccomring.so $@

# The preload shim (preload/, issue 9): plain C, exports the four functions
# and loads $(LIB) (libnccomring.so.0 beside it) at the first call, so that
# preloaded processes that never call start no Go runtime. It logs with the
# library's logger: PRELOAD_SHARED are the library's C files it compiles
# too, each with preload/glibc_floor.h first. SONAME
# libnccomring-preload.so.0, with its link.
PRELOAD_SHARED := cmd/libnccomring/log.c cmd/libnccomring/env.c cmd/libnccomring/hostsym.c
PRELOAD_DEPS   := preload/nccomring_preload.c preload/exports.map preload/glibc_floor.h $(PRELOAD_SHARED) \
  cmd/libnccomring/entry.h cmd/libnccomring/log.h cmd/libnccomring/env.h cmd/libnccomring/zenv.h cmd/libnccomring/hostsym.h include/nccom_ring.h
$(PRELOAD): $(PRELOAD_DEPS)
	@mkdir -p $(BUILD)
	$(CC) $(CSTD) -D_GNU_SOURCE -include preload/glibc_floor.h -fPIC -shared $(INCLUDES) -Icmd/libnccomring \
	  -Wl,--version-script=preload/exports.map -Wl,-soname,libnccomring-preload.so.0 -o $@ \
	  preload/nccomring_preload.c $(PRELOAD_SHARED) \
	  -Wl,--push-state,--no-as-needed -l:libdl.so.2 -l:libpthread.so.0 -Wl,--pop-state
	@ln -sf libnccomring-preload.so $(BUILD)/libnccomring-preload.so.0

$(REFLIB): tests/c/refmodel/refmodel.c tests/c/refmodel/refmodel_layout.h tests/c/refmodel/exports.map
	@mkdir -p $(BUILD)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -fPIC -shared \
	  -Wl,--version-script=tests/c/refmodel/exports.map -Wl,-soname,libnccomref.so \
	  -o $@ tests/c/refmodel/refmodel.c -ldl -lpthread

$(BUILD)/ringstage: tests/c/ringstage/main.c $(COMMON) $(COMMON_H) $(LIB) $(BUILD)/$(SONAME)
	$(CC) $(CSTD) $(INCLUDES) $(XML_CFLAGS) -o $@ tests/c/ringstage/main.c $(COMMON) $(LINK_LIB) $(XML_LIBS)

# -rdynamic: the test defines platform hooks the library finds with dlsym.
$(BUILD)/expected: tests/c/expected/expected.c $(COMMON) $(COMMON_H) $(LIB) $(BUILD)/$(SONAME)
	$(CC) $(CSTD) $(INCLUDES) $(XML_CFLAGS) -rdynamic -o $@ tests/c/expected/expected.c $(COMMON) $(LINK_LIB) $(XML_LIBS)

# The conformance harness dlopens both libraries by path; -rdynamic lets
# them find its platform hooks and ncclTopoGetLocalNet (D14, D19).
# Its files, one a job (tests/c/conformance/conformance.h lists them).
CONFORMANCE_SRC = $(addprefix tests/c/conformance/,main.c harness.c spec.c generate.c compare.c cases.c \
  crossrank.c crossrank_expect.c report.c) tests/c/common/cluster.c tests/c/common/graph_xml.c
CONFORMANCE_DEPS = $(CONFORMANCE_SRC) $(addprefix tests/c/conformance/,conformance.h spec.h regressions.inc \
  crossrank.inc) $(COMMON_H)
$(BUILD)/conformance: $(CONFORMANCE_DEPS)
	@mkdir -p $(BUILD)
	$(CC) $(CSTD) -D_GNU_SOURCE $(INCLUDES) $(XML_CFLAGS) -rdynamic -o $@ $(CONFORMANCE_SRC) -ldl -lpthread $(XML_LIBS)

# X_ENV_PLATFORM runs a rank's Preset in this helper, a process without
# the platform hooks (tests/c/conformance/preset_env.c); the harness finds
# it beside itself.
$(BUILD)/conformance-preset-env: tests/c/conformance/preset_env.c include/nccom_ring.h
	@mkdir -p $(BUILD)
	$(CC) $(CSTD) -D_GNU_SOURCE $(INCLUDES) -o $@ $< -ldl

# Reference library for `make conformance`: the C reference model unless
# LIBNCCOM=PATH names a libnccom build (e.g. a real libnccom.so.2; see
# docs/checking.md), the same variable as make check-libnccom's.
# NCCOM_REF_LIB named it before issue 32: given to make, it stops here rather
# than be ignored (build/conformance run alone reads $LIBNCCOM too, when
# given no --reference).
ifeq ($(origin NCCOM_REF_LIB),command line)
$(error NCCOM_REF_LIB is now LIBNCCOM: make conformance LIBNCCOM=PATH)
endif
ifneq ($(filter conformance,$(MAKECMDGOALS)),)
ifeq ($(origin NCCOM_REF_LIB),environment)
$(error NCCOM_REF_LIB is now LIBNCCOM: make conformance LIBNCCOM=PATH (unset NCCOM_REF_LIB))
endif
endif
CONFORMANCE_REF = $(or $(LIBNCCOM),$(REFLIB))
CONFORMANCE_COUNT ?= 20000
# Another library than the reference model cannot match this project's WARN
# texts or survive its fault injection: compare what the spec fixes (--real;
# CONFORMANCE_REAL= compares strictly). CONFORMANCE_FLAGS adds flags, e.g.
# '--progress 30 --json build/conformance.json' (issue 10). The run limits'
# defaults suit CI (--cpu-limit 60 --blocked-limit 10 --timeout 600): they
# end a hang, not a slow runner (issue 32).
CONFORMANCE_REAL ?= $(if $(filter $(abspath $(REFLIB)),$(abspath $(CONFORMANCE_REF))),,--real)
CONFORMANCE_FLAGS ?=

## conformance: 20,000 random clusters vs the reference model; LIBNCCOM=PATH for a libnccom build
conformance: $(BUILD)/conformance $(BUILD)/conformance-preset-env $(LIB) $(if $(filter $(abspath $(REFLIB)),$(abspath $(CONFORMANCE_REF))),$(REFLIB))
	$(BUILD)/conformance --candidate $(LIB) --reference $(CONFORMANCE_REF) --count $(CONFORMANCE_COUNT) $(CONFORMANCE_REAL) $(CONFORMANCE_FLAGS)

# Then the cross-rank mode (issue 8, D23, D24, D28): one corruption per
# cluster, or one rank's (or node's) own state at Preset (platform by hook or
# by NCCOM_RING_PLATFORM, enablePod, nKangaRingChannels, graph), or a record
# of another kind; Postset on every rank; one verdict, the same in both
# libraries, the verdict each kind must reach, and the rate at which the
# WARN names the rank it must (printed; below 99% fails). 10,000 clusters:
# a quarter of them D28's kinds.
CROSS_RANK_COUNT ?= 10000

# Both modes once more in processes of their own with NCCOM_RING_POD_ORDER=node,
# which both libraries read once per process (D27: pods stitched in node
# order when every record says so).
POD_ORDER_COUNT ?= 2000

test-conformance: $(BUILD)/conformance $(BUILD)/conformance-preset-env $(LIB) $(REFLIB)
	$(BUILD)/conformance --candidate $(LIB) --reference $(REFLIB) --count $(CONFORMANCE_COUNT) --json $(BUILD)/conformance.json
	$(BUILD)/conformance --cross-rank --candidate $(LIB) --reference $(REFLIB) --count $(CROSS_RANK_COUNT) --json $(BUILD)/cross-rank.json
	$(BUILD)/conformance --pod-order node --candidate $(LIB) --reference $(REFLIB) --count $(POD_ORDER_COUNT)
	$(BUILD)/conformance --cross-rank --pod-order node --candidate $(LIB) --reference $(REFLIB) --count $(POD_ORDER_COUNT)
	@# make conformance-count's two runs, briefly: on this very library none differs
	$(BUILD)/conformance --keep-going --candidate $(LIB) --reference $(REFLIB) --count 200 > $(BUILD)/conformance-count.out
	grep -qx 'conformance: 0 of [0-9]* cases (the NULL-argument calls counted as one) differ' $(BUILD)/conformance-count.out
	$(BUILD)/conformance --keep-going --cross-rank --candidate $(LIB) --reference $(REFLIB) --count 100 > $(BUILD)/conformance-count.out
	grep -qx 'conformance: 0 of [0-9]* cross-rank cases (named, pasted and random) differ' $(BUILD)/conformance-count.out

# Issue 35: every case of both modes, none stopping the run or shrunk: how
# many differ, by kind, with one replay line each (--keep-going). After an
# intended change to the rings, the count and the kinds say what moved
# (docs/changing-rings.md). Exit 0 none differ, 1 some do, 2 unusable input,
# 3 or 4 as make conformance; the second mode runs whatever the first found.
.PHONY: conformance-count
## conformance-count: every conformance case, not stopping at a difference: how many differ, by kind, a replay line each
conformance-count: $(BUILD)/conformance $(BUILD)/conformance-preset-env $(LIB) $(REFLIB)
	@s=0; $(BUILD)/conformance --keep-going --candidate $(LIB) --reference $(REFLIB) --count $(CONFORMANCE_COUNT) || s=$$?; \
	$(BUILD)/conformance --keep-going --cross-rank --candidate $(LIB) --reference $(REFLIB) --count $(CROSS_RANK_COUNT) || \
	  { r=$$?; [ $$r -gt $$s ] && s=$$r; }; \
	echo "conformance-count: harness exit $$s (0 none differ, 1 some differ, 2 unusable input; make itself exits 2 on any failure)"; exit $$s


# Issues 10 and 32: the harness's run limits. A stand-in that hangs in a
# call or while loading ends the run with exit 4 and the case, by the limit
# that fits: a sleep is blocked, a spin (signals blocked) is cpu; the wall
# cap fires alone; a case starved of CPU is no hang; --no-limits waits;
# --json parses on every exit path.
.PHONY: test-conformance-timeout
$(BUILD)/libnccom-hang.so: tests/c/conformance/hanglib.c include/nccom_ring.h
	@mkdir -p $(BUILD)
	$(CC) $(CSTD) -D_GNU_SOURCE $(INCLUDES) -fPIC -shared -o $@ $< -ldl
test-conformance-timeout: $(BUILD)/conformance $(BUILD)/conformance-preset-env $(BUILD)/libnccom-hang.so $(LIB) $(REFLIB)
	sh tests/c/conformance/timeout_check.sh $(BUILD)

# Issue 9: the boundary as real hosts drive it (tests/c/boundary): variables
# set after load, hooks inside a stand-in libnccom loaded RTLD_LOCAL (C and
# C++ names), hooks that abort when called outside the SwitchV1 gate.
$(BUILD)/libnccom-hooks.so: tests/c/boundary/hooklib.c include/nccom_ring.h
	$(CC) $(CSTD) -D_GNU_SOURCE $(INCLUDES) -fPIC -shared -o $@ $<
$(BUILD)/libnccom-hooks-cxx.so: tests/c/boundary/hooklib.c include/nccom_ring.h
	$(CC) $(CSTD) -D_GNU_SOURCE $(INCLUDES) -DHOOKLIB_CXX_NAMES -fPIC -shared -o $@ $<
$(BUILD)/boundary: tests/c/boundary/boundary.c tests/c/common/host.h tests/c/common/cluster.h include/nccom_ring.h
	$(CC) $(CSTD) -D_GNU_SOURCE $(INCLUDES) -o $@ $< -ldl

BOUNDARY_ENV := env -u NCCOM_RING_PLATFORM -u NCCOM_RING_POD_ORDER -u NCCOM_RING_DUMP -u NCCL_DEBUG -u NCCL_DEBUG_FILE -u NCCOM_RING_LAYOUT
test-boundary: $(BUILD)/boundary $(BUILD)/libnccom-hooks.so $(BUILD)/libnccom-hooks-cxx.so $(LIB)
	$(BOUNDARY_ENV) $(BUILD)/boundary env-after-load $(CURDIR)/$(LIB)
	$(BOUNDARY_ENV) LD_PRELOAD=$(CURDIR)/$(LIB) $(BUILD)/boundary rtld-local $(CURDIR)/$(BUILD)/libnccom-hooks.so
	$(BOUNDARY_ENV) LD_PRELOAD=$(CURDIR)/$(LIB) $(BUILD)/boundary rtld-local $(CURDIR)/$(BUILD)/libnccom-hooks-cxx.so
	$(BOUNDARY_ENV) LD_PRELOAD=$(CURDIR)/$(LIB) $(BUILD)/boundary gate $(CURDIR)/$(BUILD)/libnccom-hooks.so
	$(BOUNDARY_ENV) NCCL_DEBUG=WARN $(BUILD)/boundary address-limit $(CURDIR)/$(LIB)
	$(BOUNDARY_ENV) $(BUILD)/boundary stale-pointer $(CURDIR)/$(LIB)
	$(BOUNDARY_ENV) LD_PRELOAD=$(CURDIR)/$(LIB) $(BUILD)/boundary shared-log $(CURDIR)/$(BUILD)/libnccom-hooks.so
	@echo "test-boundary: environment after load, RTLD_LOCAL hooks (C and C++ names), SwitchV1 gate, address-space limit, stale pointers, shared log file: passed"

# Issue 9: the glibc floor. Prints the newest GLIBC_ symbol version each
# shipped library needs and its NEEDED list; fails above GLIBC_FLOOR (the
# minimum docs/building.md states) or when an old-version binding lacks its
# pre-2.34 library (cmd/libnccomring/glibc_compat.c, mk/glibc-floor.sh).
GLIBC_FLOOR := 2.17
.PHONY: test-glibc
test-glibc: $(LIB) $(PRELOAD)
	sh mk/glibc-floor.sh $(GLIBC_FLOOR) $(LIB) $(PRELOAD)

# The logger on its own (tests/c/log): the one formatter of both line
# styles (D21, D26) and the style and level a process gets.
.PHONY: test-log
$(BUILD)/log-test: tests/c/log/log_test.c $(PRELOAD_SHARED) cmd/libnccomring/log.h cmd/libnccomring/env.h cmd/libnccomring/zenv.h cmd/libnccomring/hostsym.h
	$(CC) $(CSTD) -Icmd/libnccomring -o $@ tests/c/log/log_test.c $(PRELOAD_SHARED) -ldl -lpthread
test-log: $(BUILD)/log-test $(BUILD)/preload-standin/libnccom.so.2
	$(BUILD)/log-test $(CURDIR)/$(BUILD)/preload-standin/libnccom.so.2

# The preload shim from outside and from inside processes under it
# (tests/c/preload/check.sh): symbols and machine code, ulimit -v 300000,
# 1 thread when never called, conformance and boundary through it, fork
# before the first call, unusable libraries, the line style over a
# stand-in libnccom.so.2 (D26); prints docs/operating.md's figures.
.PHONY: test-preload
$(BUILD)/preload-probe: tests/c/preload/preload_probe.c tests/c/common/cluster.c $(COMMON_H)
	$(CC) $(CSTD) $(INCLUDES) -o $@ tests/c/preload/preload_probe.c tests/c/common/cluster.c -ldl -lpthread
# A stand-in named libnccom.so.2 (D26: a libnccom loaded in the process).
$(BUILD)/preload-standin/libnccom.so.2: tests/c/preload/standin_libnccom.c include/nccom_ring.h
	@mkdir -p $(BUILD)/preload-standin
	$(CC) $(CSTD) $(INCLUDES) -fPIC -shared -Wl,-soname,libnccom.so.2 -o $@ $< -ldl
test-preload: $(WATCHDOG) $(PRELOAD) $(LIB) $(BUILD)/$(SONAME) $(BUILD)/preload-probe $(BUILD)/conformance $(REFLIB) \
	  $(BUILD)/boundary $(BUILD)/libnccom-hooks.so $(BUILD)/libnccom-hooks-cxx.so $(BUILD)/preload-standin/libnccom.so.2
	WATCHDOG=$(CURDIR)/$(WATCHDOG) sh tests/c/preload/check.sh $(CURDIR)/$(BUILD)

# The fault catalogue through the C ABI; -rdynamic: its platform hooks.
$(BUILD)/faults: tests/c/faults/faults.c $(COMMON) $(COMMON_H) $(LIB) $(BUILD)/$(SONAME)
	$(CC) $(CSTD) $(INCLUDES) $(XML_CFLAGS) -rdynamic -o $@ tests/c/faults/faults.c $(COMMON) $(LINK_LIB) $(XML_LIBS)

# Issue 8's inputs, every rank in one process: one verdict (D23, D24).
$(BUILD)/verdict: tests/c/verdict/verdict.c $(COMMON) $(COMMON_H) $(LIB) $(BUILD)/$(SONAME)
	$(CC) $(CSTD) $(INCLUDES) $(XML_CFLAGS) -o $@ tests/c/verdict/verdict.c $(COMMON) $(LINK_LIB) $(XML_LIBS)

# Hostile hosts dlopen the library themselves (tests/c/hostile).
HOSTILE_SRC := tests/c/hostile/hostile.c tests/c/common/cluster.c tests/c/common/graph_xml.c tests/c/common/stage_compare.c
$(BUILD)/hostile: $(HOSTILE_SRC) $(COMMON_H) tests/c/common/stage_compare.h
	$(CC) $(CSTD) $(INCLUDES) $(XML_CFLAGS) -o $@ $(HOSTILE_SRC) -ldl -lpthread $(XML_LIBS)

HOSTILE_MODES := threads signals-before signals-after signals-nostack fork early sigwait
test-hostile: $(WATCHDOG) $(BUILD)/hostile $(BUILD)/preinit $(BUILD)/malloc-failure $(BUILD)/libfailmalloc.so $(LIB)
	@set -e; for m in $(HOSTILE_MODES); do $(WATCH_NOSLEEP) hostile-$$m -- $(BUILD)/hostile $(LIB) $$m; done
	$(WATCH_NOSLEEP) preinit -- $(BUILD)/preinit
	$(WATCH_NOSLEEP) malloc-failure -- env LD_PRELOAD=$(CURDIR)/$(BUILD)/libfailmalloc.so FAILMALLOC_SIZE=3996 FAILMALLOC_AFTER=2 $(BUILD)/malloc-failure

$(BUILD)/preinit: tests/c/hostile/preinit.c include/nccom_ring.h $(LIB) $(BUILD)/$(SONAME)
	$(CC) $(CSTD) $(INCLUDES) -o $@ tests/c/hostile/preinit.c $(LINK_LIB)
$(BUILD)/libfailmalloc.so: tests/c/faults/failmalloc.c
	$(CC) $(CSTD) -fPIC -shared -o $@ $<
$(BUILD)/malloc-failure: tests/c/faults/malloc_failure.c $(COMMON) $(COMMON_H) $(LIB) $(BUILD)/$(SONAME)
	$(CC) $(CSTD) $(INCLUDES) $(XML_CFLAGS) -o $@ tests/c/faults/malloc_failure.c $(COMMON) $(LINK_LIB) $(XML_LIBS)

# The C hosts and harnesses again under AddressSanitizer (with LeakSanitizer)
# and UndefinedBehaviorSanitizer, with the Go library loaded; the reference
# model is instrumented too. Any report fails the run.
SAN       := $(BUILD)/asan
SANFLAGS  := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
SAN_CC    = $(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $(SANFLAGS) $(INCLUDES) $(XML_CFLAGS)
SAN_LINK  := $(LIB) -Wl,-rpath,'$$ORIGIN/..'
SAN_ENV   := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

$(SAN)/libnccomref.so: tests/c/refmodel/refmodel.c tests/c/refmodel/refmodel_layout.h tests/c/refmodel/exports.map
	@mkdir -p $(SAN)
	$(SAN_CC) -fPIC -shared -Wl,--version-script=tests/c/refmodel/exports.map -o $@ tests/c/refmodel/refmodel.c -ldl -lpthread
$(SAN)/expected: tests/c/expected/expected.c $(COMMON) $(COMMON_H) $(LIB) $(BUILD)/$(SONAME)
	@mkdir -p $(SAN)
	$(SAN_CC) -rdynamic -o $@ tests/c/expected/expected.c $(COMMON) $(SAN_LINK) $(XML_LIBS)
$(SAN)/faults: tests/c/faults/faults.c $(COMMON) $(COMMON_H) $(LIB) $(BUILD)/$(SONAME)
	@mkdir -p $(SAN)
	$(SAN_CC) -rdynamic -o $@ tests/c/faults/faults.c $(COMMON) $(SAN_LINK) $(XML_LIBS)
$(SAN)/ringstage: tests/c/ringstage/main.c $(COMMON) $(COMMON_H) $(LIB) $(BUILD)/$(SONAME)
	@mkdir -p $(SAN)
	$(SAN_CC) -o $@ tests/c/ringstage/main.c $(COMMON) $(SAN_LINK) $(XML_LIBS)
$(SAN)/conformance: $(CONFORMANCE_DEPS)
	@mkdir -p $(SAN)
	$(SAN_CC) -rdynamic -o $@ $(CONFORMANCE_SRC) -ldl -lpthread $(XML_LIBS)
$(SAN)/hostile: $(HOSTILE_SRC) $(COMMON_H) tests/c/common/stage_compare.h
	@mkdir -p $(SAN)
	$(SAN_CC) -o $@ $(HOSTILE_SRC) -ldl -lpthread $(XML_LIBS)

# The sanitized harness runs X_ENV_PLATFORM's Presets in a sanitized helper
# beside it (its runtime must come first in the process that loads the model).
$(SAN)/conformance-preset-env: tests/c/conformance/preset_env.c include/nccom_ring.h
	@mkdir -p $(SAN)
	$(SAN_CC) -o $@ $< -ldl

test-sanitizers: $(WATCHDOG) $(SAN)/expected $(SAN)/faults $(SAN)/ringstage $(SAN)/conformance $(SAN)/conformance-preset-env $(SAN)/hostile $(SAN)/libnccomref.so $(LIB)
	$(SAN_ENV) $(SAN)/expected
	$(SAN_ENV) $(SAN)/faults
	$(SAN_ENV) $(SAN)/ringstage --quiet
	@set -e; for g in $(GRAPHS); do $(SAN_ENV) $(SAN)/ringstage --quiet --graph $$g --nodes 2 >/dev/null; done
	$(SAN_ENV) $(SAN)/conformance --candidate $(LIB) --reference $(SAN)/libnccomref.so --count 2000
	$(SAN_ENV) $(SAN)/conformance --cross-rank --candidate $(LIB) --reference $(SAN)/libnccomref.so --count 500
	@set -e; for m in threads fork early; do $(SAN_ENV) $(WATCH_NOSLEEP) asan-hostile-$$m -- $(SAN)/hostile $(LIB) $$m; done

# Fuzzing (issues 4 and 32): Go's native fuzzer on the pure packages, and
# libFuzzer (clang, -fsanitize=fuzzer,address,undefined) on the C ABI.
# make test replays, it does not race: open-ended fuzzing is at the mercy of
# the machine's load (issue 32: on a busy machine Go's coordinator gave up on
# a target whose rate had fallen to 0 execs/s, with no failing input). So
# test-fuzz runs each Go target as an ordinary test over its corpus and the
# inputs internal/fuzzseed derives from it with a fixed seed, and libFuzzer
# for LIBFUZZER_RUNS inputs from LIBFUZZER_SEED. make fuzz fuzzes, each Go
# target for FUZZTIME and libFuzzer for LIBFUZZER_SECONDS. Go's budget there
# is a count of executions (Nx), not a duration: a duration races Go 1.26's
# fuzz coordinator at its deadline and fails with "context deadline
# exceeded" now and then without any failing input (golang/go#75804, fixed
# in Go 1.27).
FUZZ_TARGETS      := FuzzPreset FuzzPostset FuzzBuildRings FuzzPostsetEveryRank
# The other packages' targets (PACKAGE:TARGET): issue 21's dump reader,
# what reads crafted dumps and the quoting of untrusted strings (seed
# corpora in PACKAGE/testdata/fuzz); issue 22's parsers of nccom-rings
# locate (package location) and issue 36's other sources and instances
# files; issue 21's DWARF walkers (abicheck); issue 23's reading of dumps
# into a job to score and compare (package score).
FUZZ_OTHER        := ./ringdump:FuzzDecode ./cmd/nccom-rings:FuzzVerify ./internal/quote:FuzzString \
  ./cmd/nccom-rings/location:FuzzParseEC2 ./cmd/nccom-rings/location:FuzzParseSlurm ./cmd/nccom-rings/location:FuzzHostlist ./cmd/nccom-rings/location:FuzzReadLocations \
  ./cmd/nccom-rings/location:FuzzParseEC2Reservation ./cmd/nccom-rings/location:FuzzParseK8s ./cmd/nccom-rings/location:FuzzParseSlurmYAML \
  ./cmd/nccom-rings/location:FuzzParseScontrolTopology ./cmd/nccom-rings/location:FuzzSlurmEnv ./cmd/nccom-rings/location:FuzzDetect \
  ./cmd/nccom-rings/location:FuzzParseInstances ./abicheck:FuzzDWARFWalk ./cmd/nccom-rings/score:FuzzFromDumps
FUZZ_NAMES        := $(FUZZ_TARGETS) $(foreach pt,$(FUZZ_OTHER),$(lastword $(subst :, ,$(pt))))
FUZZ_PKGS         := $(sort ./ring $(foreach pt,$(FUZZ_OTHER),$(firstword $(subst :, ,$(pt)))))
FUZZTIME          ?= 600000x
LIBFUZZER_SECONDS ?= 300
# About 15 s of CPU on a quiet machine (some 3,000 inputs a second).
LIBFUZZER_RUNS    ?= 50000
LIBFUZZER_SEED    ?= 32
CLANG             ?= clang

$(BUILD)/fuzz-abi: tests/c/fuzz/fuzz_abi.c tests/c/common/cluster.c tests/c/common/graph_xml.c $(COMMON_H) $(LIB) $(BUILD)/$(SONAME)
	$(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=c11 -D_GNU_SOURCE \
	  -Wall -Wextra -Werror $(INCLUDES) $(XML_CFLAGS) -o $@ tests/c/fuzz/fuzz_abi.c tests/c/common/cluster.c \
	  tests/c/common/graph_xml.c $(LINK_LIB) $(XML_LIBS)

# libFuzzer over tests/c/fuzz/corpus, with $(1) as its budget; new inputs
# go to build/fuzz-corpus, emptied first, so that each run starts from the
# committed corpus alone.
define run-libfuzzer
	@rm -rf $(BUILD)/fuzz-corpus && mkdir -p $(BUILD)/fuzz-corpus
	@rc=0; $(BUILD)/fuzz-abi $(1) -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz- \
	  $(BUILD)/fuzz-corpus tests/c/fuzz/corpus > $(BUILD)/fuzz-abi.log 2>&1 || rc=$$?; \
	  if [ $$rc -ne 0 ]; then tail -40 $(BUILD)/fuzz-abi.log; \
	  echo "libFuzzer failed: the input is $(BUILD)/fuzz-crash-*; add it to tests/c/fuzz/corpus"; exit $$rc; fi; \
	  echo "libFuzzer: $$(sed -n 's/^stat::number_of_executed_units: *//p' $(BUILD)/fuzz-abi.log) inputs ($(1)), no failure"
endef

# The Go targets as tests (-run, not -fuzz): each runs its seeds, its
# testdata/fuzz files and the inputs fuzzseed derives, NCCOMRING_FUZZ_SEEDED
# of them (internal/fuzzseed says how many by default). A target named in
# FUZZ_TARGETS or FUZZ_OTHER that did not run fails the step. libFuzzer
# runs with -timeout=0: its per-input alarm is a wall clock, the kind of
# limit a loaded machine trips, and a hang in make test is the step
# watchdog's to end; -reload=0 stops its re-reading of the corpus each
# second, which a run's timing would steer. make fuzz keeps both defaults
# (an input that takes 1200 s is saved as build/fuzz-timeout-*).
test-fuzz: $(BUILD)/fuzz-abi
	@rc=0; $(GO) test -count=1 -v -run "^($$(echo $(FUZZ_NAMES) | tr ' ' '|'))\$$" $(FUZZ_PKGS) \
	  > $(BUILD)/fuzz-go.log 2>&1 || rc=$$?; \
	  if [ $$rc -ne 0 ]; then grep -v -e '--- PASS' -e '^=== ' $(BUILD)/fuzz-go.log | tail -60; exit $$rc; fi; \
	  ran=$$(grep -c -e '^--- PASS: Fuzz' $(BUILD)/fuzz-go.log); \
	  if [ "$$ran" -ne $(words $(FUZZ_NAMES)) ]; then echo "$$ran of the $(words $(FUZZ_NAMES)) Go fuzz targets ran: is one misnamed?"; exit 1; fi; \
	  echo "Go fuzz targets: $$(grep -c -e '--- PASS: Fuzz[^ ]*/' $(BUILD)/fuzz-go.log) inputs over $$ran targets, as tests (corpora and fuzzseed's inputs)"
	$(call run-libfuzzer,-runs=$(LIBFUZZER_RUNS) -seed=$(LIBFUZZER_SEED) -timeout=0 -reload=0)

## fuzz: each Go fuzz target for FUZZTIME (600000x), libFuzzer for LIBFUZZER_SECONDS (300)
fuzz: $(BUILD)/fuzz-abi
	@set -e; for t in $(FUZZ_TARGETS); do $(GO) test ./ring -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME); done
	@set -e; for pt in $(FUZZ_OTHER); do $(GO) test $${pt%%:*} -run '^$$' -fuzz "^$${pt#*:}$$" -fuzztime $(FUZZTIME); done
	$(call run-libfuzzer,-max_total_time=$(LIBFUZZER_SECONDS))

# Benchmarks (issue 5): the C driver through the ABI (library, reference
# model, memory floor) and Go's testing.B on the pure packages. make test
# runs a smoke of both; BENCHMARKS.md has a full run.
$(BUILD)/bench: tests/c/bench/bench.c tests/c/bench/bench_shape.h include/nccom_ring.h
	@mkdir -p $(BUILD)
	$(CC) $(CSTD) -D_GNU_SOURCE $(INCLUDES) -o $@ tests/c/bench/bench.c -ldl -lm

# VS=path/to/an/older/libnccomring.so: also time that build's rank order
# against this one's (bench --vs, one child process each). The smoke gives
# --vs this very library, so that the children's path runs in make test.
## bench: time Postset (rank and network order), ncclBuildRings, GetNetDev, the first call, the report's first picture at 2,048 nodes; VS=OLD.so: against an older build
bench: $(LIB) $(REFLIB) $(BUILD)/bench $(RINGS_TOOL) $(WATCHDOG)
	$(BUILD)/bench --lib $(LIB) --ref $(REFLIB) $(if $(VS),--vs $(VS)) --out $(BUILD)/bench.json
	$(GO) test -run '^$$' -bench . -benchtime 500ms ./ring
	@$(MAKE) --no-print-directory bench-simulate
	@WATCHDOG=$(CURDIR)/$(WATCHDOG) GO=$(GO) sh tests/report/bench.sh $(BUILD)

# Issue 35: this tree's library against BASE's (a commit, e.g. HEAD~1; HEAD
# prices uncommitted edits), built in a git worktree under build/bench-compare
# and kept there by commit; one child process per library, calls alternated,
# each figure's new/old ratio with the spread of the pairs' ratios
# (mk/bench-compare.sh, build/bench --compare).
.PHONY: bench-compare
## bench-compare: BASE=REV: this tree's Postset against REV's build (a child process each, alternated): ratios with their spread
bench-compare: $(LIB) $(BUILD)/bench
	@sh mk/bench-compare.sh "$(BASE)"

test-bench: $(LIB) $(REFLIB) $(BUILD)/bench
	$(BUILD)/bench --smoke --lib $(LIB) --ref $(REFLIB) --vs $(LIB) --out $(BUILD)/bench-smoke.json
	$(GO) test -run '^$$' -bench . -benchtime 1x ./ring > /dev/null

# Issue 13: what the library adds to a C host (tests/c/bench/footprint.c).
# test-footprint: with GOMAXPROCS=128 in the host's environment (a large
# node), Postset at 65,536 ranks adds at most FOOTPRINT_MAX_THREADS threads
# (the issue's bound) and no garbage collection runs during 20 steady-state
# calls, by the library's own count and by GODEBUG=gctrace=1 (no "gc N"
# line after the host's marker). The library adds 4 to 6, 4 or 5 in 39 of
# 40 processes (BENCHMARKS.md "Footprint" has the distribution): it retires the
# idle threads the runtime started before its cap applied (ABI note P25);
# before the cap it was 35. bench-footprint: BENCHMARKS.md's table, at 1,024 and 65,536 ranks,
# GOMAXPROCS unset and 128.
FOOTPRINT_MAX_THREADS := 6
FOOTPRINT_ENV := env -u NCCL_DEBUG -u NCCL_DEBUG_FILE -u NCCL_DEBUG_SUBSYS -u NCCOM_RING_GOMAXPROCS -u GODEBUG \
  NCCOM_RING_LOG_STYLE=nccl
$(BUILD)/footprint: tests/c/bench/footprint.c tests/c/bench/bench_shape.h tests/c/common/host.h include/nccom_ring.h
	@mkdir -p $(BUILD)
	$(CC) $(CSTD) -D_GNU_SOURCE $(INCLUDES) -o $@ tests/c/bench/footprint.c -ldl

.PHONY: test-footprint bench-footprint
test-footprint: $(LIB) $(BUILD)/footprint $(BUILD)/ringstage
	$(FOOTPRINT_ENV) GOMAXPROCS=128 GODEBUG=gctrace=1 $(BUILD)/footprint --lib $(LIB) --ranks 65536 --calls 20 \
	  --max-threads $(FOOTPRINT_MAX_THREADS) --no-steady-gc 2> $(BUILD)/footprint-gctrace.log || \
	  { cat $(BUILD)/footprint-gctrace.log; exit 1; }
	@awk '/steady-state calls begin/ {on = 1; next} /steady-state calls end/ {on = 0} on && /^gc [0-9]/ {n++} \
	  END {if (n) {print "test-footprint: GODEBUG=gctrace=1 printed " n " gc lines during the steady-state calls"; exit 1} \
	  else print "test-footprint: GODEBUG=gctrace=1 printed no gc line during the steady-state calls"}' $(BUILD)/footprint-gctrace.log
	@for v in 1 3; do $(FOOTPRINT_ENV) NCCOM_RING_GOMAXPROCS=$$v NCCL_DEBUG=TRACE NCCL_DEBUG_SUBSYS=ALLOC \
	  $(BUILD)/ringstage --nodes 1 --quiet | grep -q "footprint: .*GOMAXPROCS $$v," || \
	  { echo "test-footprint: NCCOM_RING_GOMAXPROCS=$$v did not set the library's GOMAXPROCS"; exit 1; }; done
	@for v in 'abc:"abc" is not a positive integer; using 2' '1000:"1000" is more than 64; using 64'; do \
	  val=$${v%%:*} want=$${v#*:}; out=$$($(FOOTPRINT_ENV) NCCOM_RING_GOMAXPROCS=$$val NCCL_DEBUG=WARN $(BUILD)/ringstage --nodes 1 --quiet | grep 'NCCL WARN'); \
	  [ "$$(printf '%s\n' "$$out" | grep -c .)" = 1 ] && printf '%s\n' "$$out" | grep -qF "NCCOM_RING_GOMAXPROCS=$$want" || \
	  { echo "test-footprint: NCCOM_RING_GOMAXPROCS=$$val: want one WARN '$$want', got: $$out"; exit 1; }; done
	@echo "test-footprint: NCCOM_RING_GOMAXPROCS sets the library's GOMAXPROCS (1, 3); a bad value is one WARN at the first call (abc, 1000)"

## bench-footprint: the threads and memory the library adds to a host, at 1,024 and 65,536 ranks
bench-footprint: $(LIB) $(BUILD)/footprint
	@for n in 1024 65536; do \
	  $(FOOTPRINT_ENV) $(BUILD)/footprint --lib $(LIB) --ranks $$n 2>/dev/null; \
	  $(FOOTPRINT_ENV) GOMAXPROCS=128 $(BUILD)/footprint --lib $(LIB) --ranks $$n 2>/dev/null; \
	done

# Issue 10: cmd/nccom-abi, and the stand-in libnccom builds it is tested on
# (tests/c/abi): one -g build per variant of fixture.h and of the link,
# a stripped copy, a non-ELF file and a library of >= 10 MB with debug info.
ABI      := $(BUILD)/abi
ABI_TOOL := $(BUILD)/nccom-abi
ABI_CC   := $(CC) -std=c11 -Wall -Wextra -Werror -O1 -g -fPIC -shared
ABI_CXX  := $(CXX) -std=c++17 -Wall -Wextra -Werror -O1 -g -fPIC -shared -x c++
ABI_SRC  := tests/c/abi/fixture.c tests/c/abi/fixture.h
ABI_VARIANTS := match moved grown renamed cxx cxx-ns hidden symbolic protected nosemantic
ABI_FLAGS_moved      := -DFIXTURE_MOVE_RANK
ABI_FLAGS_grown      := -DFIXTURE_GROW_GRAPH
ABI_FLAGS_renamed    := -DFIXTURE_RENAME
ABI_FLAGS_cxx-ns     := -DFIXTURE_NAMESPACE
ABI_FLAGS_hidden     := -fvisibility=hidden
ABI_FLAGS_symbolic   := -Wl,-Bsymbolic
ABI_FLAGS_protected  := -DFIXTURE_VISIBILITY='"protected"'
ABI_FLAGS_nosemantic := -fno-semantic-interposition
ABI_COMPILER_cxx     := $(ABI_CXX)
ABI_COMPILER_cxx-ns  := $(ABI_CXX)
ABI_FIXTURES := $(patsubst %,$(ABI)/libnccom-%.so,$(ABI_VARIANTS)) \
  $(ABI)/libnccom-stripped.so $(ABI)/not-elf.so $(ABI)/libnccom-big.so
ABI_BIG_STRUCTS ?= 11000

## build/nccom-abi: build the checker of a libnccom build's structs and preload
$(ABI_TOOL): $(wildcard cmd/nccom-abi/*.go abi/*.go internal/cli/*.go abicheck/*.go layout/*.go version/*.go) go.mod
	$(GO) build -trimpath -buildvcs=false -o $@ ./cmd/nccom-abi
$(ABI)/libnccom-%.so: $(ABI_SRC)
	@mkdir -p $(ABI)
	$(or $(ABI_COMPILER_$*),$(ABI_CC)) $(ABI_FLAGS_$*) -o $@ tests/c/abi/fixture.c
$(ABI)/libnccom-stripped.so: $(ABI)/libnccom-match.so
	strip --strip-all -o $@ $<
$(ABI)/not-elf.so:
	@mkdir -p $(ABI)
	printf 'INPUT ( libnccom.so.2 )\n' > $@
$(ABI)/libnccom-big.so: tests/c/abi/genbig.sh $(ABI_SRC)
	@mkdir -p $(ABI)
	sh tests/c/abi/genbig.sh $(ABI_BIG_STRUCTS) > $(ABI)/big.c
	$(CC) -std=c11 -O0 -g -fno-eliminate-unused-debug-types -fPIC -shared -o $@ $(ABI)/big.c tests/c/abi/fixture.c

.PHONY: test-abi-tool
test-abi-tool: $(ABI_TOOL) $(ABI_FIXTURES)
	sh tests/c/abi/check.sh $(ABI_TOOL) $(ABI)
	NCCOMRING_BUILD=$(CURDIR)/$(BUILD) NCCOM_ABI_REQUIRE_PAHOLE=1 $(GO) test -count=1 ./cmd/nccom-abi

# Issue 10: ASSUMED ncclComm offsets from a layout profile (NCCOM_RING_LAYOUT):
# the moved fixture's profile runs its layout correctly; D3 refuses it; a bad
# profile makes every export refuse. Issue 21 (tests/c/abi/profile_check.sh):
# a link, a FIFO, /dev/zero, a directory, a file over 64 KiB, another
# build's profile, offsets at 2^63-4 or past the profile's own sizeof: each
# refused, never waited on or read to its end.
.PHONY: test-layout-profile
test-layout-profile: $(WATCHDOG) $(BUILD)/boundary $(ABI_TOOL) $(ABI)/libnccom-moved.so $(LIB) 	  $(ABI)/selfcheck/match/libnccom.so.2 $(ABI)/selfcheck/moved/libnccom.so.2 $(ABI)/selfcheck/stripped/libnccom.so.2 $(ABI)/selfcheck/host-moved tests/c/abi/profile_check.sh
	$(ABI_TOOL) profile $(ABI)/libnccom-moved.so > $(BUILD)/moved-layout.json
	$(BOUNDARY_ENV) $(BUILD)/boundary layout-profile $(CURDIR)/$(LIB) $(CURDIR)/$(BUILD)/moved-layout.json
	$(BOUNDARY_ENV) $(BUILD)/boundary layout-d3 $(CURDIR)/$(LIB)
	$(BOUNDARY_ENV) $(BUILD)/boundary layout-bad $(CURDIR)/$(LIB)
	WATCHDOG=$(CURDIR)/$(WATCHDOG) sh tests/c/abi/profile_check.sh $(BUILD)

# Issue 10: the self-check in the host process (NCCOM_RING_ABI_CHECK, E5).
# Stand-ins from fixture.c built -g with SONAME libnccom.so.2 (the matching
# and the moved layout, a stripped copy), loaded RTLD_LOCAL by a host built
# from fixture.h in the same layout, libnccomring preloaded
# (tests/c/abi/selfcheck_host.c). bench-abi-check: BENCHMARKS.md's figures
# on the 10 MB library.
SELFCHECK      := $(ABI)/selfcheck
SELFCHECK_LIBS := $(patsubst %,$(SELFCHECK)/%/libnccom.so.2,match moved stripped)
# Put the watchdog (or any wrapper) before $(SELFCHECK_RUN), never after: a
# wrapper that LD_PRELOAD reaches gets a Go runtime, whose threads can take
# the signals it waits for (tests/c/abi/profile_check.sh).
SELFCHECK_RUN  := $(BOUNDARY_ENV) -u NCCOM_RING_ABI_CHECK -u NCCL_DEBUG_SUBSYS LD_PRELOAD=$(CURDIR)/$(LIB)
$(SELFCHECK)/%/libnccom.so.2: $(ABI_SRC)
	@mkdir -p $(dir $@)
	$(ABI_CC) $(ABI_FLAGS_$*) -Wl,-soname,libnccom.so.2 -o $@ tests/c/abi/fixture.c
# Issue 34 (F5): the matching and the moved layout under one forged build ID.
FORGED_BUILD_ID := 0x34b534b534b534b534b534b534b534b534b534b5
$(SELFCHECK)/forged-%/libnccom.so.2: $(ABI_SRC)
	@mkdir -p $(dir $@)
	$(ABI_CC) $(ABI_FLAGS_$*) -Wl,-soname,libnccom.so.2 -Wl,--build-id=$(FORGED_BUILD_ID) -o $@ tests/c/abi/fixture.c
$(SELFCHECK)/stripped/libnccom.so.2: $(SELFCHECK)/match/libnccom.so.2
	@mkdir -p $(dir $@)
	strip --strip-all -o $@ $<
$(SELFCHECK)/big/libnccom.so.2: $(ABI)/libnccom-big.so
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O0 -g -fno-eliminate-unused-debug-types -fPIC -shared -Wl,-soname,libnccom.so.2 -o $@ $(ABI)/big.c tests/c/abi/fixture.c
$(SELFCHECK)/host-%: tests/c/abi/selfcheck_host.c tests/c/common/host.h $(ABI_SRC)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -D_GNU_SOURCE -Itests/c/abi $(ABI_FLAGS_$*) -o $@ $< -ldl

# Issue 21: issue 21's crafted files (internal/elfcraft/mkhostile: the
# compressed-section bombs and the three DWARF type cycles) added to the
# stripped stand-in, loaded as the host's libnccom.so.2: the first Preset
# returns within 30 s with one WARN naming the problem; and a libnccom.so.2
# replaced after load is not read for the one mapped.
CRAFTED     := $(ABI)/hostile
CRAFTED_SRC := $(wildcard internal/elfcraft/*.go internal/elfcraft/mkhostile/*.go)
$(CRAFTED)/.made: $(SELFCHECK)/stripped/libnccom.so.2 $(CRAFTED_SRC)
	$(GO) run ./internal/elfcraft/mkhostile -base $(SELFCHECK)/stripped/libnccom.so.2 $(CRAFTED) > /dev/null
	@touch $@
CRAFTED_CASES := \
  'zstd-2g:section .debug_info (zstd-compressed, SHF_COMPRESSED) declares 2147483648 bytes, more than the 268435456 bytes (MaxSectionSize)' \
  'zstd-64g:section .debug_info (zstd-compressed, SHF_COMPRESSED) declares 68719476736 bytes' \
  'zlib-64g:section .debug_info (zlib-compressed, SHF_COMPRESSED) declares 68719476736 bytes' \
  'zdebug-64g:section .zdebug_info (zlib-compressed, .zdebug) declares 68719476736 bytes' \
  'typedef-self:DWARF type cycle at .debug_info+0x64: typedef ncclComm at 0x64 -> typedef ncclComm at 0x64' \
  'pointer-cycle:DWARF type cycle at .debug_info+0x85: pointer at 0x85 -> pointer at 0x7f -> pointer at 0x85' \
  'anon-cycle:DWARF type cycle at .debug_info+0x7a: anonymous struct at 0x7a -> anonymous struct at 0x7a'

.PHONY: test-abi-check bench-abi-check
test-abi-check: $(WATCHDOG) $(SELFCHECK_LIBS) $(SELFCHECK)/host-match $(SELFCHECK)/host-moved $(ABI_TOOL) $(LIB) $(CRAFTED)/.made \
  $(SELFCHECK)/forged-match/libnccom.so.2 $(SELFCHECK)/forged-moved/libnccom.so.2
	$(ABI_TOOL) profile $(SELFCHECK)/moved/libnccom.so.2 > $(SELFCHECK)/moved-layout.json
	$(SELFCHECK_RUN) $(SELFCHECK)/host-moved refuse $(CURDIR)/$(SELFCHECK)/moved/libnccom.so.2
	$(SELFCHECK_RUN) $(SELFCHECK)/host-moved refuse $(CURDIR)/$(SELFCHECK)/moved/libnccom.so.2 Bogus
	$(SELFCHECK_RUN) $(SELFCHECK)/host-moved run $(CURDIR)/$(SELFCHECK)/moved/libnccom.so.2 $(CURDIR)/$(SELFCHECK)/moved-layout.json
	$(SELFCHECK_RUN) $(SELFCHECK)/host-match run $(CURDIR)/$(SELFCHECK)/match/libnccom.so.2
	$(SELFCHECK_RUN) $(SELFCHECK)/host-moved off $(CURDIR)/$(SELFCHECK)/moved/libnccom.so.2
	$(SELFCHECK_RUN) $(SELFCHECK)/host-moved warn $(CURDIR)/$(SELFCHECK)/moved/libnccom.so.2
	$(SELFCHECK_RUN) $(SELFCHECK)/host-match unverified
	$(SELFCHECK_RUN) $(SELFCHECK)/host-match unverified $(CURDIR)/$(SELFCHECK)/stripped/libnccom.so.2
	@set -e; for c in $(CRAFTED_CASES); do name=$${c%%:*} want=$${c#*:}; \
	  $(WATCH_NOSLEEP) crafted-$$name -- $(SELFCHECK_RUN) $(SELFCHECK)/host-match hostile $(CURDIR)/$(CRAFTED)/$$name.so "$$want"; done
	$(SELFCHECK_RUN) $(SELFCHECK)/host-match replaced $(CURDIR)/$(SELFCHECK)/match/libnccom.so.2 $(CURDIR)/$(SELFCHECK)/moved/libnccom.so.2
	$(SELFCHECK_RUN) $(SELFCHECK)/host-moved forged $(CURDIR)/$(SELFCHECK)/forged-moved/libnccom.so.2 $(CURDIR)/$(SELFCHECK)/forged-match/libnccom.so.2
	@echo "test-abi-check: refuse (enforce, and an unknown value), the stand-in's profile, matching stand-in, off, warn, no libnccom, no DWARF, issue 21's crafted libnccom.so.2 files, a file replaced after load, another file with its build ID put at its path: passed"
## bench-abi-check: the first call's cost of the layout self-check over a large libnccom
bench-abi-check: $(SELFCHECK)/big/libnccom.so.2 $(SELFCHECK)/host-match $(LIB)
	@for i in 1 2 3; do \
	  $(SELFCHECK_RUN) $(SELFCHECK)/host-match bench $(CURDIR)/$(SELFCHECK)/big/libnccom.so.2; \
	  $(SELFCHECK_RUN) NCCOM_RING_ABI_CHECK=off $(SELFCHECK)/host-match bench $(CURDIR)/$(SELFCHECK)/big/libnccom.so.2; \
	done

# Issue 23: an operator's walkthrough on one stand-in (mk/operator-demo.sh):
# nccom-abi check on $(SELFCHECK)/match/libnccom.so.2 (DWARF, SONAME
# libnccom.so.2), a 16-rank job through it (host-match job) under
# LD_PRELOAD=$(PRELOAD) with NCCOM_RING_DUMP, the self-check's "matches"
# INFO line, nccom-rings verify and score on the dumps, and the report when
# nccom-rings has one. One line per step; files in $(BUILD)/operator-demo.
.PHONY: operator-demo
OPERATOR_DEMO_DEPS = $(LIB) $(BUILD)/$(SONAME) $(PRELOAD) $(ABI_TOOL) $(RINGS_TOOL) \
  $(SELFCHECK)/match/libnccom.so.2 $(SELFCHECK)/host-match
## operator-demo: check, preload, verified self-check, dumps, verify, score, report on one stand-in libnccom
operator-demo:
	@sh mk/setup.sh demo
	@mkdir -p $(BUILD)
	@$(MAKE) --no-print-directory $(OPERATOR_DEMO_DEPS) > $(BUILD)/operator-demo-build.log 2>&1 || \
	  { cat $(BUILD)/operator-demo-build.log; exit 1; }
	@sh mk/operator-demo.sh $(BUILD)

# Issue 23: the CI gate over one libnccom build, mk/check-libnccom.sh:
# nccom-abi check, nccom-abi preload and the conformance harness (--real,
# LIBNCCOM as the reference), each run to its end; a table of each step's
# exit code, the JUnit files (and conformance.json) in CHECK_LIBNCCOM_OUT,
# exit-codes.txt, and the worst code as the script's exit code. CI calls
# the script (docs/ci.md): make exits 2 for any failing recipe (issue 32).
# `make check-libnccom LIBNCCOM=PATH` is a convenience over it: the script
# builds what it needs, and without LIBNCCOM make stops while reading this
# file, before building anything (the recipe removes an older exit-codes.txt
# first: bad arguments stop the script before it writes one, and the old
# file's worst is no answer). test-check-libnccom runs it over the ABI
# fixtures match, moved and stripped (tests/c/abi/check_libnccom.sh).
CHECK_LIBNCCOM_OUT   ?= $(BUILD)/check-libnccom
CHECK_LIBNCCOM_COUNT ?= $(CONFORMANCE_COUNT)
ifneq ($(filter check-libnccom,$(MAKECMDGOALS)),)
ifeq ($(strip $(LIBNCCOM)),)
$(error check-libnccom: name the libnccom build to check: make check-libnccom LIBNCCOM=PATH (nothing was built))
endif
endif
.PHONY: check-libnccom test-check-libnccom
## check-libnccom: LIBNCCOM=PATH: nccom-abi check, preload and conformance against a libnccom build; JUnit in build/check-libnccom
check-libnccom:
	@rm -f $(CHECK_LIBNCCOM_OUT)/exit-codes.txt; rc=0; sh mk/check-libnccom.sh --build $(BUILD) --out $(CHECK_LIBNCCOM_OUT) --count $(CHECK_LIBNCCOM_COUNT) "$(LIBNCCOM)" || rc=$$?; \
	  test $$rc -eq 0 || ! test -f $(CHECK_LIBNCCOM_OUT)/exit-codes.txt || echo "check-libnccom: worst $$rc (in $(CHECK_LIBNCCOM_OUT)/exit-codes.txt); make exits 2 for any failure: CI should call sh mk/check-libnccom.sh, whose exit code is the worst"; \
	  exit $$rc
test-check-libnccom: $(ABI_TOOL) $(BUILD)/conformance $(LIB) $(BUILD)/$(SONAME) $(patsubst %,$(ABI)/libnccom-%.so,match moved stripped)
	sh tests/c/abi/check_libnccom.sh $(BUILD)

# The two commands do their own set-up first (mk/setup.sh: installs what is
# missing with apt-get where it can, else names the line to run), then the
# rest runs in a make of its own, which sees what the set-up installed.
## demo: set up, build, run the ring stage on the embedded 4-node x 32-rank cluster
demo:
	@sh mk/setup.sh demo
	@$(MAKE) --no-print-directory $(BUILD)/ringstage
	$(BUILD)/ringstage

# Issue 12: build/nccom-rings reads the per-rank wiring dumps the library
# writes under NCCOM_RING_DUMP (ringdump/); test-dump runs ringstage with it
# and checks the tool's verdicts (tests/dump/ringstage_dump.sh).
RINGS_TOOL := $(BUILD)/nccom-rings
## build/nccom-rings: build the wiring-dump tool (verify, show, locate, score, plan, simulate, diff, report)
$(RINGS_TOOL): $(wildcard cmd/nccom-rings/*.go cmd/nccom-rings/*/*.go cmd/nccom-rings/report/* cmd/nccom-rings/report/d3/* internal/cli/*.go internal/quote/*.go internal/safefile/*.go ringdump/*.go version/*.go nodeorder/*.go ring/*.go abi/*.go kanga/*.go layout/*.go netdev/*.go record/*.go) go.mod
	$(GO) build -trimpath -buildvcs=false -o $@ ./cmd/nccom-rings
.PHONY: test-dump
test-dump: $(BUILD)/ringstage $(RINGS_TOOL)
	sh tests/dump/ringstage_dump.sh $(BUILD)
	$(GO) test -count=1 ./ringdump ./cmd/nccom-rings

# Issues 23 and 37: nccom-rings report's page, its own checks (escaping,
# no external reference, redaction) and in a real browser
# (tests/report/check.sh, tests/report/browser): D25's example spoiled
# and jobs of 16, 128 and 512 nodes at 1400 x 1000 in Debian's headless
# chromium (installed by mk/setup.sh) through the DevTools protocol: every
# drawn element inside its picture, no two labels overlapping, the
# outermost groups labelled, a zoomed group's nodes labelled, node 7 found
# by host, no console line; screenshots in build/report-test/shots. D3
# comes from the set-up step (mk/fetch-d3.py; fetched here too when it
# can be). CHROMIUM=PATH picks the browser (CHROMIUM= none). Without a
# working one, or without D3, the browser check is skipped with a
# "test-report: skipped:" line, which make test's table shows as a skip,
# not a pass.
.PHONY: test-report report-screenshots
test-report: $(WATCHDOG)
	@python3 mk/fetch-d3.py cmd/nccom-rings/report/d3 || true
	@$(MAKE) --no-print-directory $(RINGS_TOOL)
	$(if $(filter-out undefined,$(origin CHROMIUM)),CHROMIUM="$(CHROMIUM)") WATCHDOG=$(CURDIR)/$(WATCHDOG) GO=$(GO) sh tests/report/check.sh $(BUILD)

# Issue 38: nccom-rings simulate's engine (cmd/nccom-rings/simulate/engine,
# docs/simulate.md), a C++ program on SimGrid's S4U (Debian's
# libsimgrid-dev 3.32). Without SimGrid it is not built: simulate exits 2
# with the line that installs it, and test-simulate skips saying so.
$(SIM_ENGINE): cmd/nccom-rings/simulate/engine/engine.cpp
	@mkdir -p $(BUILD)
	$(CXX) -std=c++17 -O2 -Wall -Wextra -Werror $(shell pkg-config --cflags simgrid 2>/dev/null) -o $@ $< $(shell pkg-config --libs simgrid 2>/dev/null)

# The engine against closed forms and against SMPI's own ring AllReduce
# (cmd/nccom-rings/simulate/simulate_test.go), and simulate's command.
.PHONY: test-simulate
test-simulate: $(WATCHDOG) $(RINGS_TOOL) $(if $(SIMGRID),$(SIM_ENGINE))
	@test -x $(SIM_ENGINE) || echo "test-simulate: skipped: $(SIM_MISSING)"
	NCCOMRING_BUILD=$(CURDIR)/$(BUILD) $(WATCH) simulate -- $(GO) test -count=1 ./cmd/nccom-rings/simulate
	NCCOMRING_BUILD=$(CURDIR)/$(BUILD) $(GO) test -count=1 -run 'Simulate|PlanSimulate' ./cmd/nccom-rings

# make bench's simulate row: a 512-node x 32-rank job (16 channels: the
# default graph's 8, doubled) in 16 leaves under 2 spines, both orders,
# flat and hierarchical at 1:1, 2:1 and 4:1 (the default sweep, 6 solves an
# order); CPU seconds and max RSS (the largest of the tool and its engine).
.PHONY: bench-simulate
bench-simulate: $(RINGS_TOOL) $(if $(SIMGRID),$(SIM_ENGINE))
	@test -x $(SIM_ENGINE) || { echo "bench-simulate: skipped: $(SIM_MISSING)"; exit 0; }; \
	  awk 'BEGIN { for (i = 1; i <= 512; i++) printf "trn%03d spine%d/leaf%02d\n", i, int((i-1)%16/8), (i-1)%16 }' > $(BUILD)/bench-simulate-locations; \
	  for o in rank network; do \
	    /usr/bin/time -f "bench simulate 512 nodes x 32 ranks x 16 channels, order $$o, flat and hierarchical at 1:1, 2:1, 4:1: %U+%S CPU s, %M KB max RSS" \
	      $(RINGS_TOOL) simulate --locations $(BUILD)/bench-simulate-locations --hosts 'trn[001-512]' --ranks-per-node 32 \
	      --order $$o --bytes 256M > /dev/null || exit 1; \
	  done
# Issue 37: the screenshots docs/operating.md shows, one a view, from
# test-report's run (each must stay under 200 KB to be committed).
REPORT_SHOTS := 16-nodes-ring 16-nodes-ring-zoomed 128-nodes-groups 16-nodes-nodes
## report-screenshots: test-report, then its screenshot of each view of nccom-rings report's page into docs/images
report-screenshots: test-report
	@set -e; for v in $(REPORT_SHOTS); do f=$(BUILD)/report-test/shots/$$v.png; \
	  test -f $$f || { echo "report-screenshots: no $$f (was the browser check skipped?)"; exit 1; }; \
	  size=$$(wc -c < $$f); if [ $$size -ge 204800 ]; then echo "report-screenshots: $$f is $$size bytes, over 200 KB"; exit 1; fi; \
	  cp $$f docs/images/report-$$v.png; echo "docs/images/report-$$v.png: $$size bytes"; done

# Issue 21: what another user can do to a job through shared files and the
# environment (tests/c/security/check.sh, docs/security.md): links planted
# under dump names, a dump swapped for a FIFO or /dev/zero, dump directories
# others can write into, NCCL_DEBUG_FILE as a FIFO, a device, a link or a
# path too long, newlines in values, a set-user-ID-root host run by nobody
# (skipped, saying why, where the machine forbids it), nccom-rings on
# crafted dumps under ulimit -v 2000000.
.PHONY: test-security
$(BUILD)/security-host: tests/c/security/security.c tests/c/common/host.h tests/c/common/cluster.h include/nccom_ring.h
	@mkdir -p $(BUILD)
	$(CC) $(CSTD) -D_GNU_SOURCE $(INCLUDES) -o $@ $< -ldl
$(BUILD)/libnccomring-evil.so: tests/c/security/evil.c
	@mkdir -p $(BUILD)
	$(CC) $(CSTD) -D_GNU_SOURCE -fPIC -shared -o $@ $<
test-security: $(WATCHDOG) $(BUILD)/security-host $(BUILD)/libnccomring-evil.so $(LIB) $(BUILD)/$(SONAME) $(PRELOAD) $(BUILD)/ringstage $(RINGS_TOOL)
	WATCHDOG=$(CURDIR)/$(WATCHDOG) sh tests/c/security/check.sh $(CURDIR)/$(BUILD)

# Issue 20: mutation testing of ring/, kanga/ and netdev/ with gremlins
# (docs/mutation.md), not part of `make test`: it runs a package's tests
# once per mutant, 18 to 35 minutes here. mk/mutate.sh installs gremlins at
# GREMLINS_VERSION into $(BUILD)/tools through the Go module proxy if it is
# not there, writes $(BUILD)/mutate-PKG.txt and .json, prints the survivors
# and one line per package, and fails under 90% test efficacy or 85%
# mutator coverage. Two workers on a 2-core machine; a mutant is stopped
# after 20 times the duration of the coverage run (an endless loop; on a
# machine busy with other work, now and then a slow mutant too).
GREMLINS_VERSION           := v0.6.0
MUTATE_PACKAGES            ?= ring kanga netdev
MUTATE_WORKERS             ?= 2
MUTATE_TIMEOUT_COEFFICIENT ?= 20
.PHONY: mutate
## mutate: mutation testing (gremlins) of MUTATE_PACKAGES, 18-35 min (docs/mutation.md)
mutate:
	@GO=$(GO) GREMLINS_VERSION=$(GREMLINS_VERSION) MUTATE_WORKERS=$(MUTATE_WORKERS) \
	  MUTATE_TIMEOUT_COEFFICIENT=$(MUTATE_TIMEOUT_COEFFICIENT) sh mk/mutate.sh $(BUILD) $(MUTATE_PACKAGES)

# make test's steps and how long each takes quiet: mk/test-steps.txt, the
# one list (make help prints it too).
TEST_STEPS := $(shell awk '!/^(#|budget)/ && NF { print $$1 }' mk/test-steps.txt)

# The watchdog's rule (WATCHDOG and WATCH are set at the top).
$(WATCHDOG): $(wildcard tests/watchdog/*.go internal/cli/*.go internal/junit/*.go) go.mod
	@mkdir -p $(BUILD)
	$(GO) build -trimpath -buildvcs=false -o $@ ./tests/watchdog

# The watchdog on real hangs (tests/watchdog/hang_check.sh): ringstage
# whose ncclTopoPostset sleeps forever, or spins with every signal blocked
# (the conformance harness's stand-in preloaded over the library), each
# ended by the limit that should end it, with where its threads were, and
# a step after them that still runs and passes.
.PHONY: test-watchdog
test-watchdog: $(WATCHDOG) $(BUILD)/ringstage $(BUILD)/libnccom-hang.so $(LIB)
	MAKE="$(MAKE)" sh tests/watchdog/hang_check.sh $(BUILD)

# Every step, even after one fails (FAIL_FAST=1: stop at the first), each
# under the watchdog; then a table of every step (passed, skipped and why,
# FAILED and why, its time and its quiet time), build/test-results.xml
# (JUnit, one testcase a step) and each step's log in build/test-logs.
# STEPS="test-go test-c" runs those only. Exit 1 when a step failed.
FAIL_FAST ?=
STEPS     ?=
# Under make -n the runner line would still run (it names $(MAKE)), and
# with it every step: a dry run says what it would run instead.
DRY_RUN := $(findstring n,$(firstword -$(MAKEFLAGS)))
## test: set up, then every step listed below, each to its end; about 10 minutes on 2 quiet cores
test:
	@sh mk/setup.sh test
	@$(MAKE) --no-print-directory $(WATCHDOG)
	@if [ -n "$(DRY_RUN)" ]; then echo "make -n test: would run, each under build/watchdog: $(or $(STEPS),the steps of mk/test-steps.txt)"; exit 0; fi; \
	  $(WATCHDOG) steps --table mk/test-steps.txt --junit $(BUILD)/test-results.xml --logs $(BUILD)/test-logs \
	  --make "$(MAKE)" $(if $(FAIL_FAST),--fail-fast) $(STEPS)

test-go: all $(REFLIB)
	@unformatted=$$(gofmt -l $$($(GO) list -f '{{.Dir}}' ./...)) || { echo "gofmt failed"; exit 1; }; \
	  if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	LIBNCCOMRING=$(CURDIR)/$(LIB) NCCOMRING_BUILD=$(CURDIR)/$(BUILD) $(GO) test -race -count=1 ./...

test-header:
	$(CC) -std=c11 -Wall -Wextra -Werror -pedantic $(INCLUDES) -x c -fsyntax-only tests/c/header/header_check.c
	$(CXX) -std=c++17 -Wall -Wextra -Werror -pedantic $(INCLUDES) -x c++ -fsyntax-only tests/c/header/header_check.c

test-c: $(BUILD)/expected $(BUILD)/ringstage $(BUILD)/faults $(BUILD)/verdict
	$(BUILD)/expected
	$(BUILD)/faults
	$(BUILD)/verdict
	$(BUILD)/ringstage --quiet

# Issue 11: examples/ring_host.c, the tutorial host of docs/abi-notes.md's
# "Using it from C": 2 nodes x 4 ranks through Preset, an in-memory AllGather, Postset
# and GetNetDev, checked against the rings they must give.
.PHONY: test-example
$(BUILD)/ring-host: examples/ring_host.c include/nccom_ring.h $(LIB) $(BUILD)/$(SONAME)
	$(CC) $(CSTD) $(INCLUDES) -o $@ examples/ring_host.c $(LINK_LIB)
test-example: $(BUILD)/ring-host
	$(BUILD)/ring-host

# Issue 12: one process per rank over MPI (tests/mpi/mpi_rings.c, built with
# Debian's OpenMPI, openmpi-bin libopenmpi-dev). Every process Presets its own
# rank, the fragments go through an AllGather, and rank 0 checks the
# invariants and compares every rank's result with the in-process run.
# Issue 32: a fixed shape a 2-core machine does in seconds even when busy,
# the same on every machine: 16 ranks as 4 simulated nodes x 4 and as 2 x 8
# (every default-graph channel its own head and NIC), every graph file on 8
# ranks, 8 ranks as one shared-memory node, 4 hosts of 4 ranks in network
# order, and three negative tests on 8 ranks: 12 jobs of 1 to 2 s each
# (most of it OpenMPI and a Go runtime a rank starting) but the stop-rank
# one's 6 s; about 20 s in all quiet, 30-55 s beside 4 busy loops. The
# 64-rank run (4 nodes x 16: 64 processes starting at once) is
# test-mpi-64, not part of make test.
#
# mpirun's flags: OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) let CI run it as root
# (harmless otherwise); --oversubscribe: more ranks than cores;
# --bind-to none: the kernel moves ranks to whichever core is free (2 ranks
# would otherwise be bound to a core each); --mca mpi_yield_when_idle 1:
# OpenMPI's blocking calls yield while they poll (OpenMPI 4.1 turns it on
# only when it sees the node oversubscribed; the flag makes it hold on any
# machine). mpi_rings itself waits in its two exchanges asleep (its
# wait_for), and positive runs give it --deadline 0: no wall clock inside.
#
# Each job runs under the watchdog ($(WATCH) NAME ... -- mpirun ...): a job
# of 16 ranks uses about 3 s of CPU, at most 1 min since its last output;
# 30 s with no thread running or waiting to run (a stopped rank, the others
# asleep) is a hang; the 5 min wall clock is the last resort, over 100x a
# job's quiet time. When one fires, its lines name the limit and where
# every rank's threads were, and the job exits 124.
#
# The negative tests end one rank before the AllGather while the others wait
# in it: it exits 3 (--die-rank), raises SIGKILL (--kill-rank) or stops
# itself (--stop-rank, SIGSTOP). mpirun must end the job by its own
# mechanism: a nonzero status that is not the watchdog's 124, saying the
# expected text; how long that took is printed, not judged. A stopped rank
# does not exit, so mpirun never notices it: each other rank gives up once
# it has waited --deadline 5 s in the AllGather (exit 4), which mpirun does
# notice. That deadline counts only while a rank waits, after its own work,
# and the AllGather cannot complete without the stopped rank: a busy
# machine delays its expiry, it cannot prevent it or make it a failure.
.PHONY: test-mpi test-mpi-64
MPICC      ?= mpicc
MPI_ENV    := OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI_FLAGS  := --oversubscribe --bind-to none --mca mpi_yield_when_idle 1
MPI_LIMITS := --cpu 1m --blocked 30s --wall 5m
MPI_SRC    := tests/mpi/mpi_rings.c $(COMMON) tests/c/common/stage_compare.c
$(BUILD)/mpi_rings: $(MPI_SRC) $(COMMON_H) tests/c/common/stage_compare.h $(LIB) $(BUILD)/$(SONAME)
	$(MPICC) $(CSTD) $(INCLUDES) $(XML_CFLAGS) -o $@ $(MPI_SRC) $(LINK_LIB) $(XML_LIBS)
# $(MPIRUN) ARGS: mpirun under the watchdog, named after the shell's $n, with
# the target's MPI_LIMITS. The recipes' shell functions:
# run NAME NP ARGS...: one job of mpi_rings with --deadline 0, its dumps in
#   build/mpi-dump/NAME, then nccom-rings verify on them.
# fails NAME NP ARGS... -- TEXT: the job must fail by itself (nonzero, not
#   124), its output (in build/mpi-failure.log) saying TEXT.
MPIRUN = $(MPI_ENV) $(WATCH) test-mpi:$$n $(MPI_LIMITS) -- mpirun $(MPI_FLAGS)
MPI_SH = \
	run() { n=$$1 d=$(BUILD)/mpi-dump/$$1 np=$$2; shift 2; rm -rf $$d; mkdir -p -m 755 $$d; \
	  echo "NCCOM_RING_DUMP=$$d mpirun $(MPI_FLAGS) -np $$np $(BUILD)/mpi_rings --deadline 0 $$*"; \
	  NCCOM_RING_DUMP=$$d $(MPIRUN) -np $$np $(BUILD)/mpi_rings --deadline 0 "$$@"; \
	  $(RINGS_TOOL) verify $$d; }; \
	fails() { n=$$1 np=$$2 s=$$(date +%s) rc=0; shift 2; args=$$(echo "$$*" | sed 's/ -- .*//'); want=$${*\#\#* -- }; \
	  $(MPIRUN) -np $$np $(BUILD)/mpi_rings $$args > $(BUILD)/mpi-failure.log 2>&1 || rc=$$?; t=$$(( $$(date +%s) - s )); \
	  if [ $$rc -eq 0 ] || [ $$rc -eq 124 ] || ! grep -q "$$want" $(BUILD)/mpi-failure.log; then \
	    cat $(BUILD)/mpi-failure.log; \
	    echo "test-mpi: mpi_rings $$args: want mpirun to fail by itself (not 0, not the watchdog's 124) saying '$$want'; exit $$rc after $$t s"; \
	    return 1; fi; \
	  echo "ok (expected): mpirun -np $$np mpi_rings $$args: exit $$rc after $$t s: $$(grep -m1 "$$want" $(BUILD)/mpi-failure.log | sed 's/^ *//')"; }
test-mpi: $(BUILD)/mpi_rings $(RINGS_TOOL) $(WATCHDOG)
	@set -e; $(MPI_SH); \
	run default-4x4 16 --local-ranks 4; \
	run default-2x8 16 --quiet --local-ranks 8; \
	for g in $(GRAPHS); do run $$(basename $$g .xml) 8 --quiet --graph $$g --local-ranks graph; done; \
	run shared-8 8 --quiet; \
	d=$(BUILD)/mpi-dump/order-4-hosts; rm -rf $$d; mkdir -p $$d; \
	host="-x NCCOM_RING_NODE_ORDER=network $(BUILD)/mpi_rings --deadline 0 --local-ranks 4 --quiet --min-crossings"; \
	echo "NCCOM_RING_DUMP=$$d mpirun $(MPI_FLAGS) -np 4 -x NCCOM_RING_LOCATION=spine0/leafA ... : (4 hosts alternating leafA, leafB)"; \
	n=order-4-hosts; NCCOM_RING_DUMP=$$d $(MPIRUN) -np 4 -x NCCOM_RING_LOCATION=spine0/leafA $$host : -np 4 -x NCCOM_RING_LOCATION=spine0/leafB $$host : \
	  -np 4 -x NCCOM_RING_LOCATION=spine0/leafA $$host : -np 4 -x NCCOM_RING_LOCATION=spine0/leafB $$host; \
	$(RINGS_TOOL) verify $$d; \
	fails die-rank 8 --local-ranks 4 --quiet --die-rank 5 -- "exited with non-zero status"; \
	fails kill-rank 8 --local-ranks 4 --quiet --kill-rank 3 -- "exited on signal 9"; \
	fails stop-rank 8 --local-ranks 4 --quiet --stop-rank 6 --deadline 5 -- "waited 5 s in the AllGather of the fragments (--deadline)"
	@echo "test-mpi: 16 ranks (4 simulated nodes x 4, 2 x 8), every graph file on 8 ranks, 8 ranks as one shared-memory node, 4 hosts of 4 ranks alternating between two leaves with NCCOM_RING_NODE_ORDER=network (each host's location through its own app context; the fewest crossings): identical to the in-process result; a rank that exits, is killed or stops before the AllGather fails the job"

# 64 processes start 64 Go runtimes besides OpenMPI's (about 19 MB resident
# each): about 10 s on 2 quiet cores, about 20 s of CPU, most of it starting.
# Limits: 5 min of CPU since the last output, 30 s blocked, 20 min of wall
# clock (100x quiet), the last resort.
## test-mpi-64: 64 ranks (4 simulated nodes x 16) over OpenMPI, against the in-process run; about 10 s quiet, not part of make test
test-mpi-64: MPI_LIMITS := --cpu 5m --blocked 30s --wall 20m
test-mpi-64: $(BUILD)/mpi_rings $(RINGS_TOOL) $(WATCHDOG)
	@set -e; $(MPI_SH); run default-64 64 --local-ranks 16
	@echo "test-mpi-64: 64 ranks (4 simulated nodes x 16): identical to the in-process result"

GRAPHS := $(wildcard testdata/graphs/*.xml)
test-graphs: $(BUILD)/ringstage
	@set -e; for g in $(GRAPHS); do for n in 1 2 4; do \
	  echo "ringstage --graph $$g --nodes $$n"; \
	  $(BUILD)/ringstage --quiet --graph $$g --nodes $$n; \
	done; done

test-cmake:
	cmake -S . -B $(BUILD)/cmake -DCMAKE_BUILD_TYPE=Release > $(BUILD)/cmake.log
	cmake --build $(BUILD)/cmake >> $(BUILD)/cmake.log
	ctest --test-dir $(BUILD)/cmake --output-on-failure --output-junit $(CURDIR)/$(BUILD)/ctest-junit.xml

## clean: remove build/
clean:
	rm -rf $(BUILD)

# Issue 3's proofs: LD_PRELOAD over a stand-in libnccom, dlopen beside the
# reference model, C++ hosts (needs the variables above).
include mk/proofs.mk
# make install / uninstall (PREFIX, DESTDIR) and test-install (issue 11).
include mk/install.mk
