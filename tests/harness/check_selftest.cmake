# SPDX-License-Identifier: MIT
# check_selftest.cmake -- run one harness self-test program and judge its output.
#
#   cmake -DPROG=<program> [-DARGS=a|b] [-DEMULATOR=x|y] -DRC=zero|nonzero [-DLAST=<line>]
#         [-DEXPECT1..4=<regex>] [-DREJECT1..2=<regex>] -P check_selftest.cmake
#
# The self-tests fail on purpose, so CTest cannot judge them by their exit status alone: this
# script checks the status, that the last line of output is exactly LAST (the runner's closing
# line), that every EXPECTn regex matches some line and that no REJECTn regex matches any.
# Each regex is matched against one line at a time, so ^ and $ anchor to the line.  Lists are
# separated by '|' because ';' would be split by add_test.
foreach(v PROG RC)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_selftest.cmake: -D${v}=... is required")
  endif()
endforeach()
set(cmd)
if(EMULATOR)
  string(REPLACE "|" ";" emu "${EMULATOR}")
  list(APPEND cmd ${emu})
endif()
list(APPEND cmd "${PROG}")
if(ARGS)
  string(REPLACE "|" ";" args "${ARGS}")
  list(APPEND cmd ${args})
endif()

# One variable for both streams: CMake then keeps the order in which the lines came.
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
message("${out}")

set(problems "")
if(RC STREQUAL "zero" AND NOT rc STREQUAL "0")
  string(APPEND problems "  exit status ${rc}, expected 0\n")
elseif(RC STREQUAL "nonzero" AND (rc STREQUAL "0" OR NOT rc MATCHES "^[0-9]+$"))
  string(APPEND problems "  exit status '${rc}', expected a non-zero status\n")
endif()

# The output as a list of lines; a ';' in a line would split it, so it becomes ',' first.
string(REPLACE ";" "," lines "${out}")
string(REGEX REPLACE "\n+$" "" lines "${lines}")
string(REPLACE "\n" ";" lines "${lines}")
list(LENGTH lines n)
set(last "")
if(n GREATER 0)
  list(GET lines -1 last)
endif()
if(DEFINED LAST AND NOT last STREQUAL LAST)
  string(APPEND problems "  last line '${last}', expected '${LAST}'\n")
endif()

function(any_line_matches re result)
  set(hit FALSE)
  foreach(line IN LISTS lines)
    if(line MATCHES "${re}")
      set(hit TRUE)
      break()
    endif()
  endforeach()
  set(${result} ${hit} PARENT_SCOPE)
endfunction()

foreach(i 1 2 3 4)
  if(DEFINED EXPECT${i})
    any_line_matches("${EXPECT${i}}" hit)
    if(NOT hit)
      string(APPEND problems "  no line matches '${EXPECT${i}}'\n")
    endif()
  endif()
endforeach()
foreach(i 1 2)
  if(DEFINED REJECT${i})
    any_line_matches("${REJECT${i}}" hit)
    if(hit)
      string(APPEND problems "  a line matches '${REJECT${i}}', which must not appear\n")
    endif()
  endif()
endforeach()

if(problems)
  message(FATAL_ERROR "harness self-test ${PROG}:\n${problems}")
endif()
