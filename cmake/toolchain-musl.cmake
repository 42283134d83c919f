# SPDX-License-Identifier: MIT
# cmake/toolchain-musl.cmake -- x86_64 with the musl C library (Debian's musl-tools:
# musl-gcc, a wrapper of the system gcc).  musl differs from glibc in its header constants
# (it defines MAP_HUGE_2MB, glibc 2.36 does not), its error texts (compare errno values,
# never strings) and what it declares; musl-gcc cannot see <linux/*.h> at all.  The programs
# run natively; musl has no Criterion, so the suites use the in-tree harness.
#
#   cmake -S . -B build-musl -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-musl.cmake
#
# CMAKE_SYSTEM_NAME is set so that CMake treats this as a cross build: the host's
# pkg-config packages (Criterion, APR) are glibc's and must not be linked.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER musl-gcc)
# Debian's musl-dev keeps the headers in /usr/include/x86_64-linux-musl and the libraries in
# /usr/lib/x86_64-linux-musl; musl-gcc's specs file points the compiler there.
set(CMAKE_FIND_ROOT_PATH /usr/lib/x86_64-linux-musl /usr/include/x86_64-linux-musl)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# A project that finds an installed hpshm outside the sysroot (tests/install_client.sh) sets
# this one to BOTH on its command line.
if(NOT CMAKE_FIND_ROOT_PATH_MODE_PACKAGE)
  set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
endif()
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/x86_64-linux-musl/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
