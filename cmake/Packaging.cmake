# Installs gleaner at the standard paths and packages it as .deb files
# (`cpack -G DEB` in the build directory, docs/install.md):
#   gleaner     the static binary, the systemd units, /etc/gleaner/gleaner.toml,
#               the manual and shell completions
#   gleaner-pg  gleaner-pg, the same with the PostgreSQL store (needs libpq5)
include(GNUInstallDirs)

# Whoever builds the packages maintains them: a site's packagers put their
# own address here (lintian refuses one at localhost).
set(GLEANER_PACKAGE_MAINTAINER "gleaner maintainers <gleaner@localhost>"
    CACHE STRING "The Maintainer of the .deb packages: Name <address>")

set(package_files ${CMAKE_BINARY_DIR}/package)
add_custom_command(
  OUTPUT ${package_files}/gleaner.1.gz ${package_files}/gleaner-pg.1.gz
         ${package_files}/gleaner.bash ${package_files}/_gleaner
         ${package_files}/gleaner.toml ${package_files}/gleaner-defaults.toml
         ${package_files}/changelog.gz ${package_files}/copyright
  COMMAND ${CMAKE_COMMAND} -DGLEANER=$<TARGET_FILE:gleaner> -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
          -DOUT=${package_files} -DMAINTAINER=${GLEANER_PACKAGE_MAINTAINER}
          -P ${PROJECT_SOURCE_DIR}/cmake/PackageFiles.cmake
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
# Debian's policy: every package carries its copyright and changelog.
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${package_files}/copyright
              ${package_files}/changelog.gz
        DESTINATION share/doc/gleaner COMPONENT gleaner)
if(TARGET gleaner-pg)
  install(TARGETS gleaner-pg RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT gleaner-pg)
  install(FILES ${package_files}/gleaner-pg.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
          COMPONENT gleaner-pg)
  install(FILES ${package_files}/copyright ${package_files}/changelog.gz
          DESTINATION share/doc/gleaner-pg COMPONENT gleaner-pg)
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gleaner)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${GLEANER_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "puts idle GPUs to work")
# CPack writes the synopsis, then each line here indented (a lone "." marks
# a paragraph break).
set(description_body
    "gleaner watches every NVIDIA GPU and every process on it, judges which GPUs\n"
    "are truly idle, with evidence and history, lends them to a durable queue of\n"
    "jobs and gives them back the moment their owners return. It prices idle and\n"
    "harvested GPU-hours against renting cloud GPUs.\n.\n")
string(JOIN "" description_body ${description_body})
set(CPACK_DEBIAN_GLEANER_DESCRIPTION
    "${description_body}This package has the static gleaner, its systemd units and its manual.")
set(CPACK_COMPONENT_GLEANER-PG_DESCRIPTION_SUMMARY "puts idle GPUs to work, with a PostgreSQL store")
set(CPACK_DEBIAN_GLEANER-PG_DESCRIPTION
    "${description_body}This package has gleaner-pg, which can also keep its state in\nPostgreSQL, for a cluster's coordinators.")
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
# The static gleaner loads on glibc 2.28 and newer (cmake/OldGlibc.cmake);
# gleaner-pg links this system's libpq, so it needs this system's glibc.
set(CPACK_DEBIAN_GLEANER_PACKAGE_DEPENDS "libc6 (>= 2.28)")
set(CPACK_DEBIAN_GLEANER_PACKAGE_RECOMMENDS "systemd")
set(CPACK_DEBIAN_GLEANER-PG_PACKAGE_NAME gleaner-pg)
set(CPACK_DEBIAN_GLEANER-PG_PACKAGE_DEPENDS "libc6 (>= 2.36), libpq5, gleaner (= ${PROJECT_VERSION})")
# The config is the admin's once installed: an upgrade keeps their edits.
file(WRITE ${CMAKE_BINARY_DIR}/package-control/conffiles "/etc/gleaner/gleaner.toml\n")
# The config may name secrets (a store's password file, tokens): root's
# alone, as the policy API treats it. dpkg installs a conffile with the
# package's mode (0644, which Debian's policy asks of the package itself),
# so the mode is set after each install or upgrade, unless the admin chose
# another. $DPKG_ROOT: dpkg --root without a chroot.
file(WRITE ${CMAKE_BINARY_DIR}/package-control/postinst [=[#!/bin/sh
set -e
config="$DPKG_ROOT/etc/gleaner/gleaner.toml"
if [ "$1" = configure ] && [ -f "$config" ] && [ ! -L "$config" ] &&
  [ "$(stat -c %a "$config")" = 644 ]; then
  chmod 0600 "$config"
fi
]=])
file(CHMOD ${CMAKE_BINARY_DIR}/package-control/postinst
     PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
                 WORLD_EXECUTE)
set(CPACK_DEBIAN_GLEANER_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/package-control/conffiles
                                               ${CMAKE_BINARY_DIR}/package-control/postinst)
include(CPack)
