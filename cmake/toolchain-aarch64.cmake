# SPDX-License-Identifier: MIT
# cmake/toolchain-aarch64.cmake -- 64-bit Arm, little-endian, with Debian's
# gcc-aarch64-linux-gnu; the tests run under qemu-aarch64 (qemu-user).
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64.cmake
#
# scripts/test-cross.sh aarch64 installs what it needs and runs the suites.
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(HPSHM_CROSS_TRIPLE aarch64-linux-gnu)
set(HPSHM_CROSS_QEMU qemu-aarch64)
include(${CMAKE_CURRENT_LIST_DIR}/cross-linux-gnu.cmake)
