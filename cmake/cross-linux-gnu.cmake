# SPDX-License-Identifier: MIT
# cmake/cross-linux-gnu.cmake -- what the toolchain files for Debian's cross compilers share.
#
# Included by cmake/toolchain-<arch>.cmake after it sets HPSHM_CROSS_TRIPLE (the GNU triple of
# Debian's gcc-<triple> package, e.g. aarch64-linux-gnu) and HPSHM_CROSS_QEMU (the qemu-user
# program that runs the target's code on this machine).  The target's C library lives in
# /usr/<triple> (Debian's libc6-dev-<arch>-cross), which is where headers and libraries are
# looked up, and what qemu is told with -L so the target's dynamic loader is found there.
#
# Programs are run by CTest through CMAKE_CROSSCOMPILING_EMULATOR.  A program that a test
# starts by exec (the hpshm tool, the re-attach child) cannot be run by the kernel directly:
# without binfmt_misc it refuses a foreign ELF with ENOEXEC.  tests/CMakeLists.txt therefore
# hands such tests a small script that starts the program through the same emulator
# (hpshm_test_program()).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${HPSHM_CROSS_TRIPLE}-gcc)
set(HPSHM_CROSS_SYSROOT /usr/${HPSHM_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH ${HPSHM_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# A project that finds an installed hpshm outside the sysroot (tests/install_client.sh) sets
# this one to BOTH on its command line.
if(NOT CMAKE_FIND_ROOT_PATH_MODE_PACKAGE)
  set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
endif()
# pkg-config must not hand the host's libraries (Criterion, APR) to a target build.
set(ENV{PKG_CONFIG_LIBDIR} ${HPSHM_CROSS_SYSROOT}/lib/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")

if(NOT DEFINED HPSHM_CROSS_EMULATOR)
  find_program(hpshm_qemu ${HPSHM_CROSS_QEMU} NO_CMAKE_FIND_ROOT_PATH)
  if(NOT hpshm_qemu)
    message(FATAL_ERROR "${HPSHM_CROSS_QEMU} not found: install qemu-user (scripts/deps.sh cross)")
  endif()
  # -p 2097152: qemu-user places every mapping it chooses the address of on a multiple of
  # its host page size, 4KiB by default, and the kernel refuses a hugetlb mapping there
  # (EINVAL).  With 2MiB, mappings of 2MiB pages reach the kernel as the program asked, and
  # the tests see huge pages granted and verified, or refused for the kernel's own reasons.
  set(HPSHM_CROSS_EMULATOR ${hpshm_qemu} -p 2097152 -L ${HPSHM_CROSS_SYSROOT})
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR ${HPSHM_CROSS_EMULATOR})
