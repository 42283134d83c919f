# SPDX-License-Identifier: MIT
# cmake/toolchain-s390x.cmake -- IBM Z, 64-bit and big-endian, with Debian's
# gcc-s390x-linux-gnu; the tests run under qemu-s390x (qemu-user).  The big-endian target:
# tokens, headers and JSON must mean there what they mean on x86_64.
#
#   cmake -S . -B build-s390x -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-s390x.cmake
#
# scripts/test-cross.sh s390x installs what it needs and runs the suites.
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(HPSHM_CROSS_TRIPLE s390x-linux-gnu)
set(HPSHM_CROSS_QEMU qemu-s390x)
include(${CMAKE_CURRENT_LIST_DIR}/cross-linux-gnu.cmake)
