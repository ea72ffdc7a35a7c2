# mk/proofs.mk - issue #3's proofs: LD_PRELOAD over a stand-in libnccom,
# dlopen next to the reference model, and C++ hosts. Included by the
# Makefile after its variables (it uses BUILD, LIB, REFLIB, SONAME, CC, CXX,
# CSTD, INCLUDES, XML_CFLAGS, XML_LIBS, COMMON, COMMON_H, LINK_LIB), e.g. at
# its end:
#
#   include mk/proofs.mk
#
# `make test-proofs` builds and runs all of it (see tests/c/standin,
# tests/c/dlopen and tests/c/cxx, each with a README).

PROOFS_CXXSTD  = -std=c++17 -Wall -Wextra -Werror -pedantic -O2
PROOFS_INC     = $(INCLUDES) -Itests/c/common
PROOFS_COMPARE = tests/c/common/stage_compare.c tests/c/common/stage_compare.h

PROOFS_STANDIN     = $(BUILD)/libnccom-standin.so
PROOFS_STANDIN_SYM = $(BUILD)/standin-symbolic/libnccom-standin.so
PROOFS_STANDIN_SRC = tests/c/standin/standin.c tests/c/standin/standin_driver.c tests/c/standin/standin.h tests/c/common/stage_setup.h

.PHONY: test-proofs test-proofs-standin test-proofs-dlopen test-proofs-cxx test-proofs-header test-proofs-conformance

test-proofs: test-proofs-header test-proofs-standin test-proofs-dlopen test-proofs-cxx test-proofs-conformance
	@echo "make test-proofs: all passed"

# ---- LD_PRELOAD proof ----

# The stand-in libnccom: the default -fPIC shared build (no -Bsymbolic,
# default visibility), so its internal calls of the four go through its PLT.
$(PROOFS_STANDIN): $(PROOFS_STANDIN_SRC) $(COMMON_H)
	@mkdir -p $(BUILD)
	$(CC) $(CSTD) $(PROOFS_INC) -fPIC -shared -Wl,-soname,libnccom-standin.so \
	  -o $@ tests/c/standin/standin.c tests/c/standin/standin_driver.c

# The negative control: the same stand-in linked -Bsymbolic (same SONAME, in
# its own directory, found first through LD_LIBRARY_PATH).
$(PROOFS_STANDIN_SYM): $(PROOFS_STANDIN_SRC) $(COMMON_H)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(PROOFS_INC) -fPIC -shared -Wl,-Bsymbolic -Wl,-soname,libnccom-standin.so \
	  -o $@ tests/c/standin/standin.c tests/c/standin/standin_driver.c

# Linked against the stand-in only: NEEDED libnccom-standin.so, rpath $ORIGIN.
$(BUILD)/standin-host: tests/c/standin/standin_host.c $(PROOFS_COMPARE) $(COMMON) $(COMMON_H) $(PROOFS_STANDIN)
	$(CC) $(CSTD) $(PROOFS_INC) $(XML_CFLAGS) -o $@ tests/c/standin/standin_host.c \
	  tests/c/common/stage_compare.c $(COMMON) $(PROOFS_STANDIN) -Wl,-rpath,'$$ORIGIN' $(XML_LIBS) -ldl

# Linked against libnccomring alone: no ncclTopoGetLocalNet anywhere.
$(BUILD)/no-local-net: tests/c/standin/no_local_net.c include/nccom_ring.h $(LIB) $(BUILD)/$(SONAME)
	$(CC) $(CSTD) $(INCLUDES) -o $@ tests/c/standin/no_local_net.c $(LINK_LIB)

test-proofs-standin: $(PROOFS_STANDIN) $(PROOFS_STANDIN_SYM) $(BUILD)/standin-host $(BUILD)/no-local-net $(LIB) $(REFLIB)
	sh tests/c/standin/check.sh $(PROOFS_STANDIN) $(BUILD)/standin-host $(BUILD)/no-local-net \
	  $(LIB) $(REFLIB) $(dir $(PROOFS_STANDIN_SYM))

# ---- dlopen proof ----

# Linked directly against the reference model (NEEDED libnccomref.so); it
# dlopens libnccomring.so itself.
$(BUILD)/dlopen-host: tests/c/dlopen/dlopen_host.c $(PROOFS_COMPARE) $(COMMON) $(COMMON_H) $(REFLIB)
	$(CC) $(CSTD) $(PROOFS_INC) $(XML_CFLAGS) -o $@ tests/c/dlopen/dlopen_host.c \
	  tests/c/common/stage_compare.c $(COMMON) $(REFLIB) -Wl,-rpath,'$$ORIGIN' $(XML_LIBS) -ldl

test-proofs-dlopen: $(BUILD)/dlopen-host $(LIB)
	$(BUILD)/dlopen-host $(CURDIR)/$(LIB)

# ---- C++ hosts ----

$(BUILD)/cxx_host.o: tests/c/cxx/cxx_host.cpp include/nccom_ring.h
	@mkdir -p $(BUILD)
	$(CXX) $(PROOFS_CXXSTD) $(INCLUDES) -DNCCOM_RING_CXX_LINKAGE -c -o $@ tests/c/cxx/cxx_host.cpp

$(BUILD)/cxx-host: $(BUILD)/cxx_host.o $(LIB) $(BUILD)/$(SONAME)
	$(CXX) -rdynamic -o $@ $(BUILD)/cxx_host.o $(LINK_LIB)

test-proofs-cxx: $(BUILD)/cxx-host $(BUILD)/cxx_host.o $(LIB)
	sh tests/c/cxx/check_names.sh $(LIB) $(BUILD)/cxx_host.o
	$(BUILD)/cxx-host

# The header stays clean with the opt-in macro, in C (no effect) and C++.
test-proofs-header:
	$(CC) -std=c11 -Wall -Wextra -Werror -pedantic $(INCLUDES) -DNCCOM_RING_CXX_LINKAGE -x c -fsyntax-only tests/c/header/header_check.c
	$(CXX) -std=c++17 -Wall -Wextra -Werror -pedantic $(INCLUDES) -DNCCOM_RING_CXX_LINKAGE -x c++ -fsyntax-only tests/c/header/header_check.c

# ---- the harness against any library (--reference) ----

# Against the stand-in the harness must report its wrong answers (exit 1,
# a DIFFERENCE with a shrunk case), and a library without the symbols must
# be named as such (exit 2).
test-proofs-conformance: $(BUILD)/conformance $(LIB) $(PROOFS_STANDIN)
	@echo "== negative controls: the harness must find the stand-in's wrong answers, and refuse unusable libraries"
	@out=$$($(BUILD)/conformance --candidate $(LIB) --reference $(PROOFS_STANDIN) --real --count 50 --seed 1); rc=$$?; \
	  test $$rc -eq 1 && echo "$$out" | grep -q '^conformance: DIFFERENCE' && \
	  echo "$$out" | grep -q 'smallest reproducing case' || { echo "$$out" | tail -4; echo "expected a difference against the stand-in"; exit 1; }; \
	  echo "ok (expected): against the wrong stand-in the harness exits 1 with a DIFFERENCE and a shrunk case"
	@out=$$($(BUILD)/conformance --candidate $(LIB) --reference $(BUILD)/libnccom-standin-missing.so 2>&1); rc=$$?; \
	  test $$rc -eq 2 || { echo "$$out" | tail -1; echo "expected a load error"; exit 1; }; \
	  echo "ok (expected): a library that cannot be loaded exits 2"
	@out=$$($(BUILD)/conformance --candidate $(LIB) --reference $(PROOFS_NOSYM) 2>&1); rc=$$?; \
	  test $$rc -eq 2 && echo "$$out" | grep -q 'does not export ncclTopoPreset' || \
	  { echo "$$out"; echo "expected a missing-symbol report"; exit 1; }; \
	  echo "ok (expected): a library without the four functions exits 2, naming the missing symbol"

# A library that exports none of the four names.
PROOFS_NOSYM = $(BUILD)/libnosymbols.so
$(PROOFS_NOSYM): tests/c/standin/no_symbols.c
	$(CC) $(CSTD) -fPIC -shared -o $@ $<
test-proofs-conformance: $(PROOFS_NOSYM)
