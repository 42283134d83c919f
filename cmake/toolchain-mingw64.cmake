# SPDX-License-Identifier: MIT
# cmake/toolchain-mingw64.cmake -- cross-build hpshm for 64-bit Windows with mingw-w64, and run its
# programs (ctest, the harness self-tests) under wine.
#
#   cmake -S . -B build-mingw -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-mingw64.cmake
#
# Debian: apt-get install --no-install-recommends mingw-w64 wine wine64 (scripts/test-windows.sh
# does it when they are missing).  The "win32" thread model of Debian's compiler (x86_64-w64-
# mingw32-gcc, GCC 12-win32) is the one used: hpshm needs no C++ and no POSIX threads.
# HPSHM_MINGW_PREFIX overrides the tools' prefix (x86_64-w64-mingw32).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

if(DEFINED ENV{HPSHM_MINGW_PREFIX})
  set(hpshm_mingw "$ENV{HPSHM_MINGW_PREFIX}")
else()
  set(hpshm_mingw x86_64-w64-mingw32)
endif()
set(CMAKE_C_COMPILER ${hpshm_mingw}-gcc)
set(CMAKE_RC_COMPILER ${hpshm_mingw}-windres)
set(CMAKE_AR ${hpshm_mingw}-ar CACHE FILEPATH "archiver")
set(CMAKE_RANLIB ${hpshm_mingw}-ranlib CACHE FILEPATH "ranlib")

# Libraries and headers come from the mingw-w64 sysroot only; programs (the build's own tools)
# from the build machine.
set(CMAKE_FIND_ROOT_PATH /usr/${hpshm_mingw})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# ctest and add_test() run the .exe files through wine.  WINEDEBUG=-all and a persistent
# wineserver belong to the caller (scripts/test-windows.sh), not to each test.
find_program(HPSHM_WINE NAMES wine wine64)
if(HPSHM_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${HPSHM_WINE})
endif()

# The programs link libgcc statically, so wine needs no libgcc_s_seh-1.dll from the
# compiler's directory: a missing DLL shows up under wine as exit code 53 and no output.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static-libgcc")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static-libgcc")
