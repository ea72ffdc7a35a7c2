# mk/install.mk - make install / make uninstall / make test-install (issue 11).
# Included at the end of the Makefile (needs LIB, PRELOAD, ABI_TOOL, ...).
#
#   make install PREFIX=/opt/nccomring DESTDIR=/tmp/stage
#
# PREFIX/lib:     libnccomring.so.0 (the library, its SONAME) and the
#                 libnccomring.so link; libnccomring-preload.so.0 and its link;
#                 pkgconfig/nccomring.pc; cmake/nccomring/ (find_package)
# PREFIX/include: nccom_ring.h
# PREFIX/bin:     ringstage (RUNPATH $ORIGIN/../lib), nccom-abi and nccom-rings
#
# The version comes from NCCOMRING_VERSION in include/nccom_ring.h. The CMake
# package finds everything relative to itself, so the tree can be moved; the
# .pc file names PREFIX (pkg-config's convention). CMakeLists.txt installs the
# same set from the same templates (mk/*.in).

PREFIX  ?= /usr/local
DESTDIR ?=
NCCOMRING_VERSION := $(shell sed -n 's/^\#define NCCOMRING_VERSION "\([^"]*\)".*/\1/p' include/nccom_ring.h)
NCCOMRING_MAJOR   := $(shell sed -n 's/^\#define NCCOMRING_VERSION_MAJOR \([0-9][0-9]*\).*/\1/p' include/nccom_ring.h)
INSTALL_DIR  := $(BUILD)/install
I_ROOT       := $(DESTDIR)$(PREFIX)
I_LIB        := $(I_ROOT)/lib
I_CMAKE      := $(I_LIB)/cmake/nccomring
# What install puts, relative to PREFIX (uninstall removes exactly these).
INSTALLED := lib/libnccomring.so.0 lib/libnccomring.so \
  lib/libnccomring-preload.so.0 lib/libnccomring-preload.so \
  include/nccom_ring.h lib/pkgconfig/nccomring.pc \
  lib/cmake/nccomring/nccomringConfig.cmake lib/cmake/nccomring/nccomringConfigVersion.cmake \
  bin/ringstage bin/nccom-abi bin/nccom-rings
# The package's own directory, which uninstall removes once empty. Shared
# ones (bin, include, lib, lib/pkgconfig, lib/cmake) are the system's, not
# ours to remove even when empty.
INSTALLED_DIRS := lib/cmake/nccomring

SUBST_VERSION = sed -e 's|@VERSION@|$(NCCOMRING_VERSION)|g' -e 's|@MAJOR@|$(NCCOMRING_MAJOR)|g'

# The installed ringstage finds the library in ../lib, wherever the tree is.
$(INSTALL_DIR)/ringstage: tests/c/ringstage/main.c $(COMMON) $(COMMON_H) $(LIB) $(BUILD)/$(SONAME)
	@mkdir -p $(INSTALL_DIR)
	$(CC) $(CSTD) $(INCLUDES) $(XML_CFLAGS) -o $@ tests/c/ringstage/main.c $(COMMON) \
	  $(LIB) -Wl,-rpath,'$$ORIGIN/../lib' $(XML_LIBS)
$(INSTALL_DIR)/nccomringConfig.cmake: mk/nccomringConfig.cmake.in include/nccom_ring.h
	@mkdir -p $(INSTALL_DIR)
	$(SUBST_VERSION) $< > $@
$(INSTALL_DIR)/nccomringConfigVersion.cmake: mk/nccomringConfigVersion.cmake.in include/nccom_ring.h
	@mkdir -p $(INSTALL_DIR)
	$(SUBST_VERSION) $< > $@

.PHONY: install uninstall test-install
## install: library, shim, header, .pc, CMake package, tools into PREFIX (/usr/local)
install: $(LIB) $(PRELOAD) $(ABI_TOOL) $(RINGS_TOOL) $(INSTALL_DIR)/ringstage \
         $(INSTALL_DIR)/nccomringConfig.cmake $(INSTALL_DIR)/nccomringConfigVersion.cmake
	@test -n "$(NCCOMRING_VERSION)" || { echo "include/nccom_ring.h defines no NCCOMRING_VERSION"; exit 1; }
	install -d $(I_LIB)/pkgconfig $(I_CMAKE) $(I_ROOT)/include $(I_ROOT)/bin
	install -m 755 $(LIB) $(I_LIB)/libnccomring.so.0
	ln -sf libnccomring.so.0 $(I_LIB)/libnccomring.so
	install -m 755 $(PRELOAD) $(I_LIB)/libnccomring-preload.so.0
	ln -sf libnccomring-preload.so.0 $(I_LIB)/libnccomring-preload.so
	install -m 644 include/nccom_ring.h $(I_ROOT)/include/nccom_ring.h
	$(SUBST_VERSION) -e 's|@PREFIX@|$(PREFIX)|g' mk/nccomring.pc.in > $(I_LIB)/pkgconfig/nccomring.pc
	chmod 644 $(I_LIB)/pkgconfig/nccomring.pc
	install -m 644 $(INSTALL_DIR)/nccomringConfig.cmake $(INSTALL_DIR)/nccomringConfigVersion.cmake $(I_CMAKE)/
	install -m 755 $(INSTALL_DIR)/ringstage $(I_ROOT)/bin/ringstage
	install -m 755 $(ABI_TOOL) $(I_ROOT)/bin/nccom-abi
	install -m 755 $(RINGS_TOOL) $(I_ROOT)/bin/nccom-rings
	@echo "installed libnccomring $(NCCOMRING_VERSION) into $(I_ROOT)"

## uninstall: remove exactly what install put into PREFIX
uninstall:
	rm -f $(addprefix $(I_ROOT)/,$(INSTALLED))
	@for d in $(INSTALLED_DIRS); do \
	  if [ -d "$(I_ROOT)/$$d" ]; then rmdir "$(I_ROOT)/$$d" 2>/dev/null && echo "rmdir $(I_ROOT)/$$d" || true; fi; \
	done

# Into an empty temporary PREFIX: a C program through pkg-config, a CMake
# project through find_package, a CMake project that add_subdirectory's this
# repository beside its own targets `expected` and `conformance`, then
# uninstall leaves the folder empty (tests/install/check.sh).
test-install: $(LIB) $(PRELOAD) $(ABI_TOOL) $(RINGS_TOOL) $(INSTALL_DIR)/ringstage
	sh tests/install/check.sh "$(CURDIR)" "$(MAKE)"
