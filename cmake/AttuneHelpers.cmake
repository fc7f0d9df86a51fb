# Helpers shared by every CMakeLists.txt in the tree: one adds a plugin, one adds a test.

# attune_set_warnings and attune_add_plugin: shared with plugins built out of tree (installed with
# the CMake package, docs/plugins.md "Building a plugin out of tree").
include(${CMAKE_CURRENT_LIST_DIR}/AttunePlugin.cmake)

# attune_add_test(NAME SOURCES a.cc [LIBS x] [LABELS l] [TIMEOUT s])
# A Catch2 v2 test executable registered with CTest. The default run skips tests tagged [.slow].
function(attune_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBS;LABELS;ARGS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE attune_test_main ${ARG_LIBS})
  target_compile_definitions(${name} PRIVATE
    ATTUNE_SHARED_DIR="${ATTUNE_SHARED_DIR}"
    ATTUNE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    ATTUNE_BINARY_DIR="${PROJECT_BINARY_DIR}"
    ATTUNE_PLUGIN_DIR="${ATTUNE_PLUGIN_OUTPUT_DIR}")
  attune_set_warnings(${name})
  add_test(NAME ${name} COMMAND ${name} ${ARG_ARGS})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT}
    ENVIRONMENT "ATTUNE_PLUGIN_PATH=${ATTUNE_PLUGIN_OUTPUT_DIR};ATTUNE_DATA_DIR=${PROJECT_SOURCE_DIR};ATTUNE_BIN=${PROJECT_BINARY_DIR}/bin/attune")
  if(ARG_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${ARG_LABELS}")
  endif()
endfunction()

# Adds a subdirectory when it exists (areas are filled in by separate work streams).
# ATTUNE_ONLY (a regex on the folder's path) restricts which areas are configured, for working on
# one area while another is half-written.
set(ATTUNE_ONLY "" CACHE STRING "Only configure areas whose path matches this regex (development aid)")
macro(attune_add_subdirectories)
  foreach(dir ${ARGN})
    set(_attune_dir "${CMAKE_CURRENT_SOURCE_DIR}/${dir}")
    if(ATTUNE_ONLY AND NOT _attune_dir MATCHES "${ATTUNE_ONLY}")
      continue()
    endif()
    if(EXISTS "${_attune_dir}/CMakeLists.txt")
      add_subdirectory(${dir})
    endif()
  endforeach()
endmacro()
