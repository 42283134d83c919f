# SPDX-License-Identifier: MIT
# cmake/layers.cmake -- every source is compiled knowing its layer (doc/architecture.md), so a
# header that belongs to one layer refuses to be included from another with an #error: a
# backend that includes core/internal.h fails to build, whatever path it spells.
#
# The library's folders (base/, ports/, backends/, core/) share one object library, so their
# layer is a property of each source, set here by folder: HPSHM_LAYER_BASE, _PORTS, _BACKENDS,
# _CORE.  A folder with its own CMakeLists.txt (tools/, bench/, preload/, examples/, tests/)
# names its layer once for all its targets with add_compile_definitions().  Source properties
# belong to the directory that sets them, so this runs in the top-level CMakeLists.txt, where
# the library's targets are.
function(hpshm_mark_layers)
  file(GLOB_RECURSE sources RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS
       ${PROJECT_SOURCE_DIR}/base/*.c ${PROJECT_SOURCE_DIR}/ports/*.c
       ${PROJECT_SOURCE_DIR}/backends/*.c ${PROJECT_SOURCE_DIR}/core/*.c)
  foreach(source IN LISTS sources)
    string(REGEX MATCH "^[a-z]+" folder "${source}")
    string(TOUPPER "${folder}" layer)
    set_property(SOURCE ${source} APPEND PROPERTY COMPILE_DEFINITIONS HPSHM_LAYER_${layer})
  endforeach()
endfunction()
