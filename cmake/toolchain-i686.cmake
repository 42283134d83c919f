# SPDX-License-Identifier: MIT
# cmake/toolchain-i686.cmake -- 32-bit x86 with Debian's gcc-i686-linux-gnu: size_t and
# pointers of 32 bits, 64-bit integers aligned to 4 bytes in structures.
#
#   cmake -S . -B build-i686 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-i686.cmake
#
# How the tests run: natively where the kernel runs 32-bit programs (CONFIG_IA32_EMULATION,
# not switched off): the programs then run through the target's own dynamic loader,
# /usr/i686-linux-gnu/lib/ld-linux.so.2, with its libraries.  Some kernels are built with
# IA32 emulation but refuse 32-bit programs at run time (ia32_emulation=0, or a hypervisor
# that lacks the 32-bit entry), and exec gives ENOEXEC: the programs then run under
# qemu-i386, like the other foreign targets.  Which one is used is decided here, by running
# the loader once, and printed.
set(CMAKE_SYSTEM_PROCESSOR i686)
set(HPSHM_CROSS_TRIPLE i686-linux-gnu)
set(HPSHM_CROSS_QEMU qemu-i386)
set(hpshm_i686_loader /usr/${HPSHM_CROSS_TRIPLE}/lib/ld-linux.so.2)
if(NOT DEFINED HPSHM_CROSS_EMULATOR)
  execute_process(COMMAND ${hpshm_i686_loader} --version
                  RESULT_VARIABLE hpshm_i686_native OUTPUT_QUIET ERROR_QUIET)
  if(hpshm_i686_native EQUAL 0)
    set(HPSHM_CROSS_EMULATOR ${hpshm_i686_loader} --library-path /usr/${HPSHM_CROSS_TRIPLE}/lib)
    set(hpshm_i686_how "natively through ${hpshm_i686_loader}")
  else()
    set(hpshm_i686_how "under ${HPSHM_CROSS_QEMU}, linked statically: this kernel does not run 32-bit programs")
    set(hpshm_i686_static ON)
  endif()
  if(NOT hpshm_i686_reported)
    message(STATUS "i686: tests run ${hpshm_i686_how}")
    set(hpshm_i686_reported 1)
  endif()
endif()
# qemu-i386 7.2 runs a dynamically linked i686 program until it forks: the child then spins
# before its first system call, and every test process is a fork.  Static programs fork
# fine, so under qemu the programs are linked statically (the libraries are built as usual):
# HPSHM_STATIC_PROGRAMS makes the examples link the static library, and leaves out the
# LD_PRELOAD interposer, which no static program loads (its suite says so as a skip).  A
# project whose programs never fork may keep them dynamic with -DHPSHM_CROSS_DYNAMIC=ON
# (tests/install_client.sh does, for a client linked to the shared library).
if((hpshm_i686_static OR (DEFINED HPSHM_CROSS_EMULATOR AND HPSHM_CROSS_EMULATOR MATCHES "qemu"))
   AND NOT HPSHM_CROSS_DYNAMIC)
  set(CMAKE_EXE_LINKER_FLAGS_INIT -static)
  set(HPSHM_STATIC_PROGRAMS ON)
endif()
include(${CMAKE_CURRENT_LIST_DIR}/cross-linux-gnu.cmake)
