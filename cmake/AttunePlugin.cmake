# attune_add_plugin and the warnings every attune target uses. One definition for both users:
#   - this tree (included by AttuneHelpers.cmake), and
#   - plugins built out of tree against an installed attune (installed beside attuneConfig.cmake,
#     which includes it after it has imported attune::api and attune::support).
# It must therefore only use what both have: the targets attune::api and attune::support, and the
# optional variables ATTUNE_WERROR and ATTUNE_PLUGIN_OUTPUT_DIR.
include_guard(GLOBAL)

# Warnings for every attune target. -Werror only with ATTUNE_WERROR (CI turns it on; a user's
# newer compiler must not fail their build over a new warning).
function(attune_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(ATTUNE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# attune_add_plugin(NAME KIND ENTRY entry.cc SOURCES a.cc b.cc [LIBS x y])
#   KIND: stack, launcher or agent. ENTRY is the file with the ATTUNE_PLUGIN line.
# Builds:
#   attune_<kind>_<name>_lib  a static library of the plugin's code (for unit tests), and
#   attune_<kind>_<name>      the MODULE loaded by the host (attune_<kind>_<name>.so), into
#                             ${ATTUNE_PLUGIN_OUTPUT_DIR} (default: <build>/plugins).
# The module exports only the Boost.DLL alias (-fvisibility=hidden). `cmake --install` puts it into
# <prefix>/lib/attune/plugins, where an attune installed in the same prefix finds it.
function(attune_add_plugin name kind)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;ENTRY" ${ARGN})
  if(NOT ARG_ENTRY)
    message(FATAL_ERROR "attune_add_plugin(${name}): ENTRY <file.cc> (the file with ATTUNE_PLUGIN) is required")
  endif()
  if(NOT kind MATCHES "^(stack|launcher|agent)$")
    message(FATAL_ERROR "attune_add_plugin(${name} ${kind}): the kind must be stack, launcher or agent")
  endif()
  set(out_dir "${ATTUNE_PLUGIN_OUTPUT_DIR}")
  if(NOT out_dir)
    set(out_dir "${CMAKE_BINARY_DIR}/plugins")
  endif()
  set(lib attune_${kind}_${name}_lib)
  set(mod attune_${kind}_${name})
  # The code goes into a static library that the module links whole: unit tests link the same
  # library. Position-independent because it ends up in a shared object.
  add_library(${lib} STATIC ${ARG_SOURCES})
  target_link_libraries(${lib} PUBLIC attune::api attune::support ${ARG_LIBS})
  target_include_directories(${lib} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  set_target_properties(${lib} PROPERTIES POSITION_INDEPENDENT_CODE ON
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  attune_set_warnings(${lib})
  add_library(${mod} MODULE ${ARG_ENTRY})
  target_link_libraries(${mod} PRIVATE ${lib})
  set_target_properties(${mod} PROPERTIES
    PREFIX "" CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
    LIBRARY_OUTPUT_DIRECTORY "${out_dir}")
  attune_set_warnings(${mod})
  install(TARGETS ${mod} LIBRARY DESTINATION lib/attune/plugins)
  set_property(GLOBAL APPEND PROPERTY ATTUNE_PLUGINS ${mod})
endfunction()
