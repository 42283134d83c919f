# SPDX-License-Identifier: MIT
# man/generate.cmake -- fill a man page template with the parts the built tool prints.
#
#   cmake -DTOOL=bin/hpshm -DTEMPLATE=man/hpshm.1.in -DOUTPUT=hpshm.1 -DVERSION=0.2.0 -P generate.cmake
#
# A line "@HPSHM_MANUAL" + part + "@" of the template is replaced by `hpshm __manual part`
# (tools/manual.c): the commands with their options, the configuration keys, the providers.
# The rest is written by hand.  A part the tool does not know fails the build.
cmake_minimum_required(VERSION 3.16) # policies of the project, so "@VERSION@" is plain text
file(READ "${TEMPLATE}" text)
string(REGEX MATCHALL "@HPSHM_MANUAL [a-z]+@" parts "${text}")
list(REMOVE_DUPLICATES parts)
foreach(marker IN LISTS parts)
  string(REGEX REPLACE "@HPSHM_MANUAL ([a-z]+)@" "\\1" part "${marker}")
  execute_process(COMMAND "${TOOL}" __manual ${part}
    OUTPUT_VARIABLE roff RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${TOOL} __manual ${part} failed (${rc}): ${err}")
  endif()
  string(REGEX REPLACE "\n$" "" roff "${roff}")
  string(REPLACE "${marker}" "${roff}" text "${text}")
endforeach()
string(REPLACE "@VERSION@" "${VERSION}" text "${text}")
file(WRITE "${OUTPUT}" "${text}")
