# Installs gleaner at the standard paths and packages it as .deb files
# (`cpack -G DEB` in the build directory, docs/install.md):
#   gleaner     the static binary, the systemd units, /etc/gleaner/gleaner.toml,
#               the manual and shell completions
#   gleaner-pg  gleaner-pg, the same with the PostgreSQL store (needs libpq5)
include(GNUInstallDirs)

set(package_files ${CMAKE_BINARY_DIR}/package)
add_custom_command(
  OUTPUT ${package_files}/gleaner.1.gz ${package_files}/gleaner.bash ${package_files}/_gleaner
         ${package_files}/gleaner.toml ${package_files}/gleaner-defaults.toml
  COMMAND ${CMAKE_COMMAND} -DGLEANER=$<TARGET_FILE:gleaner> -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DOUT=${package_files} -P ${PROJECT_SOURCE_DIR}/cmake/PackageFiles.cmake
  DEPENDS gleaner ${PROJECT_SOURCE_DIR}/cmake/PackageFiles.cmake
          ${PROJECT_SOURCE_DIR}/docs/configuration.md
  COMMENT "The manual, completions and default config from gleaner itself"
  VERBATIM)
add_custom_target(gleaner_package_files ALL DEPENDS ${package_files}/gleaner.1.gz)

install(TARGETS gleaner RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT gleaner)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/gleaner.service
              ${PROJECT_SOURCE_DIR}/deploy/systemd/gleaner-agent.service
              ${PROJECT_SOURCE_DIR}/deploy/systemd/gleaner-server.service
        DESTINATION lib/systemd/system COMPONENT gleaner)
install(FILES ${package_files}/gleaner.toml DESTINATION /etc/gleaner COMPONENT gleaner)
install(FILES ${package_files}/gleaner.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
        COMPONENT gleaner)
install(FILES ${package_files}/gleaner.bash DESTINATION share/bash-completion/completions
        RENAME gleaner COMPONENT gleaner)
install(FILES ${package_files}/_gleaner DESTINATION share/zsh/vendor-completions
        COMPONENT gleaner)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR}
        COMPONENT gleaner)
if(TARGET gleaner-pg)
  install(TARGETS gleaner-pg RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT gleaner-pg)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gleaner)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "gleaner maintainers <gleaner@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "puts idle GPUs to work")
set(CPACK_PACKAGE_DESCRIPTION
    "gleaner watches every NVIDIA GPU, judges which are truly idle, lends them to queued jobs and gives them back the moment their owners return.")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL gleaner)
if(TARGET gleaner-pg)
  list(APPEND CPACK_COMPONENTS_ALL gleaner-pg)
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_GLEANER_PACKAGE_NAME gleaner)
set(CPACK_DEBIAN_GLEANER_PACKAGE_DEPENDS "libc6 (>= 2.36)")
set(CPACK_DEBIAN_GLEANER_PACKAGE_RECOMMENDS "systemd")
set(CPACK_DEBIAN_GLEANER-PG_PACKAGE_NAME gleaner-pg)
set(CPACK_DEBIAN_GLEANER-PG_PACKAGE_DEPENDS "libc6 (>= 2.36), libpq5, gleaner (= ${PROJECT_VERSION})")
# The config is the admin's once installed: an upgrade keeps their edits.
file(WRITE ${CMAKE_BINARY_DIR}/package-control/conffiles "/etc/gleaner/gleaner.toml\n")
set(CPACK_DEBIAN_GLEANER_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/package-control/conffiles)
include(CPack)
