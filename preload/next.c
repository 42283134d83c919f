/* SPDX-License-Identifier: MIT */
/*
 * preload/next.c -- the C library's definitions of the calls the interposer takes over.
 *
 * What is not taken goes on to the next definition, found with dlsym(RTLD_NEXT) once, by
 * the set-up, at load.  Until then, and whenever dlsym found nothing, mmap, munmap and
 * mremap make the system call directly: dlsym may allocate, and the allocator may map, so
 * a lookup on their path could come back here.  The SysV calls have no such caller and
 * look their next definition up when first needed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "preload.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

enum next_sym { NEXT_MMAP, NEXT_MUNMAP, NEXT_MREMAP, NEXT_SHMGET, NEXT_SHMAT, NEXT_SHMCTL, NEXT_COUNT };

static const char *const next_names[NEXT_COUNT] = { "mmap", "munmap", "mremap", "shmget", "shmat", "shmctl" };
static _Atomic(void *) next_syms[NEXT_COUNT];

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);
typedef int (*shmget_fn)(key_t, size_t, int);
typedef void *(*shmat_fn)(int, const void *, int);
typedef int (*shmctl_fn)(int, int, struct shmid_ds *);

/* The next definition, or NULL.  resolve: look it up now if not yet known. */
static void *next_sym(enum next_sym which, int resolve)
{
	void *p = atomic_load_explicit(&next_syms[which], memory_order_acquire);

	if (!p && resolve) {
		preload_inside++; /* dlsym may allocate, and the allocator may map */
		p = dlsym(RTLD_NEXT, next_names[which]);
		preload_inside--;
		atomic_store_explicit(&next_syms[which], p, memory_order_release);
	}
	return p;
}

void *next_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *sym = next_sym(NEXT_MMAP, 0);
	mmap_fn f;

	if (sym) {
		memcpy(&f, &sym, sizeof(f));
		return f(addr, len, prot, flags, fd, off);
	}
#if defined(SYS_mmap2)
	/* 32-bit kernels take the offset in 4 KiB units. */
	if (off & 4095) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	return (void *)(intptr_t)syscall(SYS_mmap2, addr, len, prot, flags, fd, (long)(off >> 12));
#else
	return (void *)(intptr_t)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
#endif
}

int next_munmap(void *addr, size_t len)
{
	void *sym = next_sym(NEXT_MUNMAP, 0);
	munmap_fn f;

	if (sym) {
		memcpy(&f, &sym, sizeof(f));
		return f(addr, len);
	}
	return (int)syscall(SYS_munmap, addr, len);
}

void *next_mremap(void *old, size_t old_size, size_t new_size, int flags, void *new_addr)
{
	void *sym = next_sym(NEXT_MREMAP, 0);
	mremap_fn f;

	if (sym) {
		memcpy(&f, &sym, sizeof(f));
		return f(old, old_size, new_size, flags, new_addr);
	}
	return (void *)(intptr_t)syscall(SYS_mremap, old, old_size, new_size, flags, new_addr);
}

int next_shmget(key_t key, size_t size, int flags)
{
	void *sym = next_sym(NEXT_SHMGET, 1);
	shmget_fn f;

	if (!sym) {
		errno = ENOSYS;
		return -1;
	}
	memcpy(&f, &sym, sizeof(f));
	return f(key, size, flags);
}

void *next_shmat(int id, const void *addr, int flags)
{
	void *sym = next_sym(NEXT_SHMAT, 1);
	shmat_fn f;

	if (!sym) {
		errno = ENOSYS;
		return (void *)-1;
	}
	memcpy(&f, &sym, sizeof(f));
	return f(id, addr, flags);
}

int next_shmctl(int id, int cmd, struct shmid_ds *buf)
{
	void *sym = next_sym(NEXT_SHMCTL, 1);
	shmctl_fn f;

	if (!sym) {
		errno = ENOSYS;
		return -1;
	}
	memcpy(&f, &sym, sizeof(f));
	return f(id, cmd, buf);
}

void next_resolve_all(void)
{
	for (int i = NEXT_MMAP; i < NEXT_COUNT; i++)
		(void)next_sym((enum next_sym)i, 1);
}
