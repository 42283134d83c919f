/*
 * ports/posix/sys.h -- the system calls backends make, through one overridable table.
 *
 * Backends and ports call hpshm__sys.mmap(...) rather than mmap(...), so a test can replace
 * one entry and make it fail with EPERM, ENOMEM, EINVAL or ENODEV without touching the
 * machine (SQLite's aSyscall[] idea).  The table starts out pointing at the real calls;
 * hpshm__sys_reset() puts them back.  Only tests write to it, and only while no segment is
 * being created.
 */
#ifndef HPSHM_PORTS_POSIX_SYS_H
#define HPSHM_PORTS_POSIX_SYS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <sys/types.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/statfs.h>

/*
 * The huge page size encoding shared by mmap, shmget and memfd_create: log2(size) << 26.
 * Computed here because libc headers define only some of the MAP_HUGE_* names (glibc 2.36
 * has no MAP_HUGE_2MB; musl cannot see <linux/memfd.h>).
 */
#define HPSHM__HUGE_SHIFT 26
#ifndef MAP_HUGETLB
#define MAP_HUGETLB 0x40000
#endif
#ifndef SHM_HUGETLB
#define SHM_HUGETLB 04000
#endif
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 0x0001U
#endif
#ifndef MFD_HUGETLB
#define MFD_HUGETLB 0x0004U
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef HUGETLBFS_MAGIC
#define HUGETLBFS_MAGIC 0x958458f6
#endif

/* log2(page_size) << 26, the size bits for MAP_/SHM_/MFD_HUGETLB; 0 if not a power of two. */
unsigned hpshm__huge_bits(size_t page_size);

struct hpshm__syscalls {
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
	int   (*munmap)(void *addr, size_t len);
	int   (*madvise)(void *addr, size_t len, int advice);
	int   (*shmget)(key_t key, size_t size, int flags);
	void *(*shmat)(int id, const void *addr, int flags);
	int   (*shmdt)(const void *addr);
	int   (*shmctl)(int id, int cmd, struct shmid_ds *buf);
	int   (*memfd_create)(const char *name, unsigned flags);
	int   (*open)(const char *path, int flags, mode_t mode);
	int   (*close)(int fd);
	int   (*ftruncate)(int fd, off_t len);
	int   (*fallocate)(int fd, int mode, off_t off, off_t len);
	int   (*unlink)(const char *path);
	int   (*fstatfs)(int fd, struct statfs *buf);
	int   (*flock)(int fd, int op);
	int   (*fstat)(int fd, struct stat *buf);
	ssize_t (*pread)(int fd, void *buf, size_t len, off_t off);
	int   (*fcntl)(int fd, int cmd, int arg);
	int   (*shm_open)(const char *name, int flags, mode_t mode);
	int   (*shm_unlink)(const char *name);
	int   (*kill)(pid_t pid, int sig);
	int   (*fchmod)(int fd, mode_t mode);
	int   (*linkat)(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags);
	char *(*secure_getenv)(const char *name); /* libc, not a system call: a test plays setuid with it */
};

extern struct hpshm__syscalls hpshm__sys;

/* Put every entry back to the real call. */
void hpshm__sys_reset(void);

#endif /* HPSHM_PORTS_POSIX_SYS_H */
