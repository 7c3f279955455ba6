# Writes what the packages install beside the binary, from the binary and
# the docs themselves, so they never drift from them (run at build time):
#   cmake -DGLEANER=build/gleaner -DSOURCE_DIR=. -DOUT=build/package -P PackageFiles.cmake
#   gleaner.1.gz      the manual: every command's --help
#   gleaner.bash      bash completion of commands and their options
#   _gleaner          zsh completion (through bash's)
#   gleaner.toml      every setting of docs/configuration.md, commented, at its default
file(MAKE_DIRECTORY "${OUT}")

execute_process(COMMAND "${GLEANER}" --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GLEANER} --help failed")
endif()
execute_process(COMMAND "${GLEANER}" --version OUTPUT_VARIABLE version_line
                OUTPUT_STRIP_TRAILING_WHITESPACE)

# The commands: the lines under "Subcommands:", two spaces in.
string(REGEX REPLACE ".*\nSubcommands:\n" "" listing "${top}")
string(REGEX MATCHALL "\n?  [a-z][a-z-]*" names "\n${listing}")
set(commands "")
foreach(n IN LISTS names)
  string(STRIP "${n}" n)
  list(APPEND commands "${n}")
endforeach()

# roff needs backslashes doubled and no line starting with . or '.
function(roff text out)
  string(REPLACE "\\" "\\\\" text "${text}")
  # (CMake's ^ matches wherever a search resumes: anchor on newlines only.)
  string(REGEX REPLACE "\n([.'])" "\n\\\\&\\1" text "\n${text}")
  string(SUBSTRING "${text}" 1 -1 text)
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

roff("${top}" top_roff)
set(man ".TH GLEANER 1 \"\" \"${version_line}\" \"gleaner\"
.SH NAME
gleaner \\- puts idle GPUs to work
.SH SYNOPSIS
.B gleaner
.I command
[\\fIoptions\\fR]
.SH DESCRIPTION
.nf
${top_roff}
.fi
.SH COMMANDS
")
set(bash_cases "")
foreach(command IN LISTS commands)
  execute_process(COMMAND "${GLEANER}" ${command} --help OUTPUT_VARIABLE help)
  roff("${help}" help_roff)
  string(APPEND man ".SS ${command}\n.nf\n${help_roff}\n.fi\n")
  string(REGEX MATCHALL "--[a-z][a-z0-9-]*" options "${help}")
  list(REMOVE_DUPLICATES options)
  list(JOIN options " " options)
  string(APPEND bash_cases "    ${command}) words=\"${options}\" ;;\n")
endforeach()
string(APPEND man ".SH SEE ALSO
The documentation in /usr/share/doc/gleaner, and the project's docs/.
")
# Debian wants the best compression and no time stamp in the gzip header.
function(gzip_file name)
  execute_process(COMMAND gzip -9nf "${OUT}/${name}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip ${OUT}/${name} failed")
  endif()
endfunction()

file(WRITE "${OUT}/gleaner.1" "${man}")
gzip_file(gleaner.1)
# gleaner-pg takes the same commands.
file(WRITE "${OUT}/gleaner-pg.1" ".so man1/gleaner.1\n")
gzip_file(gleaner-pg.1)

# A native package's changelog: this release.
string(TIMESTAMP changelog_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" version "${version_line}")
file(WRITE "${OUT}/changelog" "gleaner (${version}) unstable; urgency=medium

  * ${version_line}.
    The changes are in the project's history (git log).

 -- ${MAINTAINER}  ${changelog_date}
")
gzip_file(changelog)

# Debian's machine-readable copyright format.
file(WRITE "${OUT}/copyright" "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: gleaner
Comment: The binaries also hold what they link statically, each under its
 own licence: the C and C++ runtimes, SQLite, OpenSSL, CLI11, nlohmann/json,
 and in the dashboard uPlot.

Files: *
Copyright: 2026 the gleaner developers
License: see-upstream
 The licence is that of the source tree this package was built from.
")

list(JOIN commands " " command_words)
file(WRITE "${OUT}/gleaner.bash" "# bash completion for gleaner (written at build time from its --help)
_gleaner_complete() {
  local cur=\"\${COMP_WORDS[COMP_CWORD]}\" words
  if [ \"\$COMP_CWORD\" -eq 1 ]; then
    words=\"${command_words} --help --version --data-dir --server --token\"
  else
    case \"\${COMP_WORDS[1]}\" in
${bash_cases}    *) words=\"\" ;;
    esac
  fi
  COMPREPLY=(\$(compgen -W \"\$words\" -- \"\$cur\"))
}
complete -o default -F _gleaner_complete gleaner
")
file(WRITE "${OUT}/_gleaner" "#compdef gleaner
# zsh completion for gleaner: bash's, through zsh's bashcompinit.
autoload -U +X bashcompinit && bashcompinit
source /usr/share/bash-completion/completions/gleaner
")

# The config: the defaults block of docs/configuration.md, every line
# commented out, so the file states the defaults and changes nothing.
file(READ "${SOURCE_DIR}/docs/configuration.md" doc)
string(FIND "${doc}" "```toml\n" start)
if(start LESS 0)
  message(FATAL_ERROR "docs/configuration.md has no ```toml block of defaults")
endif()
math(EXPR start "${start} + 8")
string(SUBSTRING "${doc}" ${start} -1 rest)
string(FIND "${rest}" "```" end)
string(SUBSTRING "${rest}" 0 ${end} defaults)
file(WRITE "${OUT}/gleaner-defaults.toml" "${defaults}")
string(REPLACE "\n" "\n# " commented "# ${defaults}")
string(REPLACE "\n# \n" "\n\n" commented "${commented}")
string(REPLACE "\n# \n" "\n\n" commented "${commented}")
string(REGEX REPLACE "\n# $" "\n" commented "${commented}")
file(WRITE "${OUT}/gleaner.toml" "# gleaner's configuration (docs/configuration.md). Every setting is shown at
# its default, commented out: uncomment and change what this site needs.
# Only root may be able to change this file or its directory.

${commented}")
