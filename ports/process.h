/* SPDX-License-Identifier: MIT */
/*
 * ports/process.h -- this program as a process, for the tool and the benchmark that start
 * copies of themselves: where it runs from, dying with its parent, an address far from what
 * a fresh process maps.
 *
 * Internal: not installed.  Starting and waiting for children, and the handles they inherit,
 * are the core's too and so in port.h; what only a program that re-executes itself needs is
 * here.  Implemented by ports/<os>/program.c (doc/architecture.md).
 */
#ifndef HPSHM_PORTS_PROCESS_H
#define HPSHM_PORTS_PROCESS_H

#include <stddef.h>
#include <stdint.h>

/* The file this program runs from, for starting copies of it: 0, or HPSHM_EUNAVAILABLE. */
int hpshm__os_program_path(char *buf, size_t len);
/* Have the OS kill this process when its parent dies: 0, or HPSHM_ENOTSUP. */
int hpshm__os_die_with_parent(void);
/*
 * Where hpshm would put a re-attachable segment of len bytes aligned to align: free in this
 * process now and far from where the OS puts libraries, heaps and stacks (port.h's
 * hpshm__port_pick_address()), so a program that starts copies of itself by exec can place
 * memory they map at the same address where their own loader is unlikely to be.  Nothing
 * is reserved.  0, or an error code.
 */
int hpshm__os_far_address(size_t len, size_t align, void **out);
/*
 * When process pid started, in the OS's own unit, 0 if unknown: port.h's function, declared
 * here too (the same prototype) for a program whose copies must know their parent by more
 * than a pid, which a later process may have taken over.
 */
uint64_t hpshm__port_process_start(long long pid);

#ifdef _WIN32
/*
 * This program's arguments in UTF-8, from its UTF-16 command line (GetCommandLineW(), split
 * by CommandLineToArgvW()): the C runtime hands main() an argv in the ANSI code page, where
 * every character the code page lacks (U+6570 in a directory's name) arrives as '?'.  Called
 * first thing in main(); *argc and *argv then name one block from malloc() (the array, then
 * the strings), which free(*argv) releases.  0, or HPSHM_ENOMEM (argc and argv unchanged).
 */
int hpshm__os_args_utf8(int *argc, char ***argv);
#endif

#endif /* HPSHM_PORTS_PROCESS_H */
