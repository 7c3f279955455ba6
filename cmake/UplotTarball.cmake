# Unpacks uPlot from its npm tarball, for builds without a network or without
# npm (distribution packages): run at build time,
#   cmake -DTARBALL=uplot-1.6.32.tgz -DINTEGRITY=sha512-... -DOUT=dir -P UplotTarball.cmake
# INTEGRITY is ui/package-lock.json's; a tarball that does not match it is
# refused, so an offline build embeds exactly what `npm ci` would.
if(NOT INTEGRITY MATCHES "^sha512-([A-Za-z0-9+/]+=*)$")
  message(FATAL_ERROR "ui/package-lock.json gives no sha512 integrity for uplot: ${INTEGRITY}")
endif()
set(base64 "${CMAKE_MATCH_1}")

# Base64 to hex, four characters (three bytes) at a time.
set(alphabet "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
string(REGEX REPLACE "=+$" "" digits "${base64}")
string(LENGTH "${digits}" length)
set(hex "")
set(bits 0)
set(count 0)
math(EXPR last "${length} - 1")
foreach(i RANGE ${last})
  string(SUBSTRING "${digits}" ${i} 1 c)
  string(FIND "${alphabet}" "${c}" value)
  math(EXPR bits "(${bits} << 6) | ${value}")
  math(EXPR count "${count} + 6")
  if(count GREATER_EQUAL 8)
    math(EXPR count "${count} - 8")
    math(EXPR byte "(${bits} >> ${count}) & 255")
    math(EXPR bits "${bits} & ((1 << ${count}) - 1)")
    math(EXPR byte_hex "${byte}" OUTPUT_FORMAT HEXADECIMAL)
    string(SUBSTRING "${byte_hex}" 2 -1 byte_hex)
    string(LENGTH "${byte_hex}" n)
    if(n EQUAL 1)
      set(byte_hex "0${byte_hex}")
    endif()
    string(APPEND hex "${byte_hex}")
  endif()
endforeach()
string(TOLOWER "${hex}" expected)

if(NOT EXISTS "${TARBALL}")
  message(FATAL_ERROR "GLEANER_UPLOT_TARBALL=${TARBALL}: no such file (docs/ui.md, Building offline)")
endif()
file(SHA512 "${TARBALL}" actual)
if(NOT actual STREQUAL expected)
  message(FATAL_ERROR "${TARBALL} is not the uplot that ui/package-lock.json pins: its sha512 "
                      "is ${actual}, the lockfile's ${expected}")
endif()
file(REMOVE_RECURSE "${OUT}")
file(ARCHIVE_EXTRACT INPUT "${TARBALL}" DESTINATION "${OUT}")
# npm tarballs hold package/...; newer than the lockfile from now on.
file(TOUCH "${OUT}/package/dist/uPlot.iife.min.js" "${OUT}/package/dist/uPlot.min.css"
     "${OUT}/package/LICENSE")
