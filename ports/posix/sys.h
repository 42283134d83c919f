/* SPDX-License-Identifier: MIT */
/*
 * ports/posix/sys.h -- the POSIX system calls backends and ports make, through one overridable
 * table.
 *
 * Backends and ports call hpshm__posix_sys.mmap(...) rather than mmap(...), so a test can replace
 * one entry and make it fail with EPERM, ENOMEM, EINVAL or ENODEV without touching the
 * machine (SQLite's aSyscall[] idea).  The table starts out pointing at the real calls;
 * hpshm__posix_sys_reset() puts them back.  Only tests write to it, and only while no segment is
 * being created.
 *
 * Only calls every POSIX system has are here: ports/posix/ compiles with
 * _POSIX_C_SOURCE=200809L and nothing more.  The one call outside POSIX.1-2008 is flock():
 * the liveness of named segments rests on its semantics (a lock shared by every descriptor of
 * one open file, kept across fork and exec), which fcntl() locks lack, and every Unix hpshm
 * targets has it (4.2BSD, Linux, macOS, the BSDs).  Calls of one OS (memfd_create,
 * fallocate, fstatfs, madvise, getrandom on Linux) are in that OS's table
 * (ports/linux/linux.h: hpshm__linux_sys).
 */
#ifndef HPSHM_PORTS_POSIX_SYS_H
#define HPSHM_PORTS_POSIX_SYS_H

#include <stdio.h>
#include <sys/types.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>

struct passwd;

struct hpshm__syscalls {
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
	int   (*munmap)(void *addr, size_t len);
	int   (*shmget)(key_t key, size_t size, int flags);
	void *(*shmat)(int id, const void *addr, int flags);
	int   (*shmdt)(const void *addr);
	int   (*shmctl)(int id, int cmd, struct shmid_ds *buf);
	int   (*open)(const char *path, int flags, mode_t mode);
	int   (*close)(int fd);
	int   (*ftruncate)(int fd, off_t len);
	int   (*unlink)(const char *path);
	int   (*flock)(int fd, int op);
	int   (*fstat)(int fd, struct stat *buf);
	int   (*stat)(const char *path, struct stat *buf);
	ssize_t (*pread)(int fd, void *buf, size_t len, off_t off);
	int   (*fcntl)(int fd, int cmd, int arg);
	int   (*shm_open)(const char *name, int flags, mode_t mode);
	int   (*shm_unlink)(const char *name);
	int   (*kill)(pid_t pid, int sig);
	int   (*fchmod)(int fd, mode_t mode);
	int   (*linkat)(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags);
	FILE *(*fopen)(const char *path, const char *mode); /* close-on-exec: see hpshm__port_fopen() */
	ssize_t (*readlink)(const char *path, char *buf, size_t len);
	/* ENOSYS in a static glibc program that links no NSS (ports/posix/sys.c) */
	int   (*getpwuid_r)(uid_t uid, struct passwd *pw, char *buf, size_t len, struct passwd **res);
	/* the *at() calls remove() makes relative to a directory it opened once (backends/named_remove.c) */
	int   (*openat)(int dirfd, const char *path, int flags, mode_t mode);
	int   (*mkdirat)(int dirfd, const char *path, mode_t mode);
	int   (*renameat)(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);
	int   (*unlinkat)(int dirfd, const char *path, int flags);
	int   (*fstatat)(int dirfd, const char *path, struct stat *buf, int flags);
};

extern struct hpshm__syscalls hpshm__posix_sys;

/* Put every entry back to the real call. */
void hpshm__posix_sys_reset(void);

#endif /* HPSHM_PORTS_POSIX_SYS_H */
