# What `cmake --install BUILD --prefix P` puts under P, beside the attune executable (bin/) and the
# plugins (lib/attune/plugins/), which their own CMakeLists install:
#   share/attune/{stacks,skill,workflows}  the data the executable reads (DefaultDataDir)
#   include/attune/*.h                     the plugin API (attune::api)
#   include/attune/support/*.h             the support library's headers (attune::support)
#   include/attune/agentkit/*.h            what agent plugins share (attune::agentkit)
#   lib/libattune_api.a, lib/libattune_support.a, lib/libattune_agentkit.a
#   lib/cmake/attune/                      the CMake package: find_package(attune) gives
#                                          attune::api, attune::support, attune::agentkit and
#                                          attune_add_plugin
# docs/plugins.md "Building a plugin out of tree" is the user's side of this.
include(CMakePackageConfigHelpers)

set(ATTUNE_INSTALL_CMAKEDIR lib/cmake/attune)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/stacks ${PROJECT_SOURCE_DIR}/skill ${PROJECT_SOURCE_DIR}/workflows
  DESTINATION share/attune)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/include/attune DESTINATION include
  FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/support/include/attune DESTINATION include
  FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/agentkit/include/attune DESTINATION include
  FILES_MATCHING PATTERN "*.h")
install(TARGETS attune_api attune_support attune_agentkit EXPORT attuneTargets ARCHIVE DESTINATION lib)
install(EXPORT attuneTargets NAMESPACE attune:: DESTINATION ${ATTUNE_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/attuneConfig.cmake.in
  "${PROJECT_BINARY_DIR}/cmake/attuneConfig.cmake"
  INSTALL_DESTINATION ${ATTUNE_INSTALL_CMAKEDIR})
# 0.x: a minor version may change the plugin ABI (kAbiVersion), so only the same minor matches.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cmake/attuneConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES
  "${PROJECT_BINARY_DIR}/cmake/attuneConfig.cmake"
  "${PROJECT_BINARY_DIR}/cmake/attuneConfigVersion.cmake"
  ${PROJECT_SOURCE_DIR}/cmake/AttunePlugin.cmake
  DESTINATION ${ATTUNE_INSTALL_CMAKEDIR})

# The dashboard's pages (`attune serve`, report.html) and the charting library that
# tools/setup.d/61-web.sh installed into web/vendor/ (only the files the pages load).
install(FILES ${PROJECT_SOURCE_DIR}/web/index.html ${PROJECT_SOURCE_DIR}/web/app.js
  ${PROJECT_SOURCE_DIR}/web/app.css DESTINATION share/attune/web)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/web/vendor/node_modules/uplot/dist/
  DESTINATION share/attune/web/vendor/node_modules/uplot/dist OPTIONAL
  FILES_MATCHING PATTERN "uPlot.iife.min.js" PATTERN "uPlot.min.css")
install(FILES ${PROJECT_SOURCE_DIR}/web/vendor/node_modules/uplot/LICENSE
  DESTINATION share/attune/web/vendor/node_modules/uplot OPTIONAL)
