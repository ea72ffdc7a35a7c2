# tests/c/proofs.cmake - issue #3's proofs for the CMake build: LD_PRELOAD
# over a stand-in libnccom, dlopen next to the reference model, C++ hosts.
# Included from the top-level CMakeLists.txt after nccomring::nccomring and
# nccomring_cluster are defined and after enable_testing():
#
#   include(tests/c/proofs.cmake)
#
# The same checks as `make test-proofs` (mk/proofs.mk), registered as ctest
# tests proofs_*.

get_filename_component(NCCOMRING_PROOFS_ROOT "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
set(_proofs ${NCCOMRING_PROOFS_ROOT}/tests/c)
set(_proofs_warnings -Wall -Wextra -Werror)
set(_proofs_common ${_proofs}/common/cluster.c ${_proofs}/common/graph_xml.c
                   ${_proofs}/common/linked.c ${_proofs}/common/stage_compare.c)

enable_language(CXX)
find_program(NCCOMRING_SH sh REQUIRED)

# The C reference model (build/libnccomref.so in the Makefile).
if(NOT TARGET nccomring_ref)
  add_library(nccomring_ref SHARED ${_proofs}/refmodel/refmodel.c)
  set_target_properties(nccomring_ref PROPERTIES OUTPUT_NAME nccomref C_STANDARD 11
                        C_EXTENSIONS OFF)
  target_compile_definitions(nccomring_ref PRIVATE _GNU_SOURCE)
  target_compile_options(nccomring_ref PRIVATE ${_proofs_warnings})
  target_link_options(nccomring_ref PRIVATE
                      -Wl,--version-script=${_proofs}/refmodel/exports.map)
  target_link_libraries(nccomring_ref PRIVATE ${CMAKE_DL_LIBS} pthread)
endif()

# ---- LD_PRELOAD proof (tests/c/standin) ----

# Default -fPIC shared build, no -Bsymbolic: internal calls go through the PLT.
add_library(nccomring_standin SHARED ${_proofs}/standin/standin.c
                                     ${_proofs}/standin/standin_driver.c)
set_target_properties(nccomring_standin PROPERTIES OUTPUT_NAME nccom-standin)
target_include_directories(nccomring_standin PRIVATE ${NCCOMRING_PROOFS_ROOT}/include
                                                     ${_proofs}/common)
target_compile_options(nccomring_standin PRIVATE ${_proofs_warnings})

# The negative control: the same stand-in linked -Bsymbolic, in a directory
# of its own (same file name and SONAME).
add_library(nccomring_standin_symbolic SHARED ${_proofs}/standin/standin.c
                                              ${_proofs}/standin/standin_driver.c)
set_target_properties(nccomring_standin_symbolic PROPERTIES
  OUTPUT_NAME nccom-standin
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/standin-symbolic)
target_include_directories(nccomring_standin_symbolic PRIVATE ${NCCOMRING_PROOFS_ROOT}/include
                                                              ${_proofs}/common)
target_compile_options(nccomring_standin_symbolic PRIVATE ${_proofs_warnings})
target_link_options(nccomring_standin_symbolic PRIVATE -Wl,-Bsymbolic)

# Linked against the stand-in only (not nccomring_cluster: that one links
# libnccomring).
add_executable(nccomring_standin_host ${_proofs}/standin/standin_host.c ${_proofs_common})
set_target_properties(nccomring_standin_host PROPERTIES OUTPUT_NAME standin-host)
target_include_directories(nccomring_standin_host PRIVATE ${NCCOMRING_PROOFS_ROOT}/include ${_proofs}/common)
target_compile_options(nccomring_standin_host PRIVATE ${_proofs_warnings})
target_link_libraries(nccomring_standin_host PRIVATE nccomring_standin LibXml2::LibXml2 ${CMAKE_DL_LIBS})
add_dependencies(nccomring_standin_host nccomring_ref nccomring_standin_symbolic)

# Linked against libnccomring alone.
add_executable(nccomring_no_local_net ${_proofs}/standin/no_local_net.c)
set_target_properties(nccomring_no_local_net PROPERTIES OUTPUT_NAME no-local-net)
target_compile_options(nccomring_no_local_net PRIVATE ${_proofs_warnings})
target_link_libraries(nccomring_no_local_net PRIVATE nccomring::nccomring)

add_test(NAME proofs_ld_preload
         COMMAND ${NCCOMRING_SH} ${_proofs}/standin/check.sh
                 $<TARGET_FILE:nccomring_standin> $<TARGET_FILE:nccomring_standin_host>
                 $<TARGET_FILE:nccomring_no_local_net> $<TARGET_FILE:nccomring::nccomring>
                 $<TARGET_FILE:nccomring_ref>
                 $<TARGET_FILE_DIR:nccomring_standin_symbolic>)

# ---- dlopen proof (tests/c/dlopen) ----

add_executable(nccomring_dlopen_host ${_proofs}/dlopen/dlopen_host.c ${_proofs_common})
set_target_properties(nccomring_dlopen_host PROPERTIES OUTPUT_NAME dlopen-host)
target_include_directories(nccomring_dlopen_host PRIVATE ${NCCOMRING_PROOFS_ROOT}/include ${_proofs}/common)
target_compile_options(nccomring_dlopen_host PRIVATE ${_proofs_warnings})
target_link_libraries(nccomring_dlopen_host PRIVATE nccomring_ref LibXml2::LibXml2 ${CMAKE_DL_LIBS})
add_dependencies(nccomring_dlopen_host nccomring::nccomring) # dlopen'ed at run time, not linked
add_test(NAME proofs_dlopen
         COMMAND nccomring_dlopen_host $<TARGET_FILE:nccomring::nccomring>)

# ---- C++ hosts (tests/c/cxx) ----

add_executable(nccomring_cxx_host ${_proofs}/cxx/cxx_host.cpp)
set_target_properties(nccomring_cxx_host PROPERTIES OUTPUT_NAME cxx-host CXX_STANDARD 17
                      CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
target_compile_definitions(nccomring_cxx_host PRIVATE NCCOM_RING_CXX_LINKAGE)
target_compile_options(nccomring_cxx_host PRIVATE ${_proofs_warnings} -pedantic)
target_link_libraries(nccomring_cxx_host PRIVATE nccomring::nccomring)
set_target_properties(nccomring_cxx_host PROPERTIES ENABLE_EXPORTS ON) # its ncclTopoGetLocalNet (D19)
add_test(NAME proofs_cxx_host COMMAND nccomring_cxx_host)
# nm -u on the C++ host's object, c++filt, and the library's exports.
add_test(NAME proofs_cxx_names
         COMMAND ${NCCOMRING_SH} ${_proofs}/cxx/check_names.sh
                 $<TARGET_FILE:nccomring::nccomring> $<TARGET_OBJECTS:nccomring_cxx_host>)
