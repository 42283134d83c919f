/*
 * ports/posix/posix.h -- what ports/posix/ offers the OS folders beside it (ports/linux/, and the
 * generic port in ports/posix/generic.c), so each OS writes only what it does differently.
 *
 * Internal to ports/: neither the core nor the backends include it.  Everything here is
 * POSIX.1-2008 and compiles with _POSIX_C_SOURCE=200809L alone.
 */
#ifndef HPSHM_PORTS_POSIX_POSIX_H
#define HPSHM_PORTS_POSIX_POSIX_H

#include <stddef.h>
#include <stdint.h>

/*
 * 64 unpredictable bits the POSIX way: from /dev/urandom, or, where it cannot be read (a
 * chroot, a sandbox), mixed from the clock and the pid: a nonce needs to be unlikely to
 * repeat, not secret.  An OS with a system call for it (Linux getrandom) tries that first.
 */
uint64_t hpshm__posix_random64(void);

/*
 * Touch every page of [addr, addr+len), step bytes apart, reading each byte and writing it
 * back unchanged, under a SIGBUS handler that turns a page the kernel cannot supply into an
 * error: 0; 1 with *bad the offset that raised SIGBUS; or -1 with errno set if the handler
 * could not be installed.  The last resort of every populate: an OS with a call that fails
 * cleanly (Linux fallocate, MADV_POPULATE_WRITE) uses that first.
 */
int hpshm__posix_touch(void *addr, size_t len, size_t step, size_t *bad);

#endif /* HPSHM_PORTS_POSIX_POSIX_H */
