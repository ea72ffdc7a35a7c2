# The steps tests/watchdog/hang_check.sh runs under build/watchdog steps
# (testdata/hang-steps.txt): build/ringstage with its ncclTopoPostset made
# to sleep forever, or to spin with every signal blocked (the stand-in
# tests/c/conformance/hanglib.c preloaded over the library; it forwards
# the other three), then a step that passes.
B ?= build
HANG := LD_PRELOAD=$(CURDIR)/$(B)/libnccom-hang.so NCCOM_HANG_IN=ncclTopoPostset \
  NCCOM_HANG_FORWARD=$(CURDIR)/$(B)/libnccomring.so

.PHONY: postset-blocks postset-spins passes
postset-blocks:
	$(HANG) NCCOM_HANG_HOW=sleep $(B)/ringstage --quiet
postset-spins:
	$(HANG) NCCOM_HANG_HOW=spin $(B)/ringstage --quiet
passes:
	$(B)/ringstage --quiet
