/* SPDX-License-Identifier: MIT */
/*
 * Workload: writes blocks of 4 KiB, 16 KiB, ... 1 MiB in turn to a file,
 * fsync after each (the diskio and blocking vitals).  The file lives in
 * DIR, default a fresh directory under /var/tmp (not tmpfs), and is
 * removed at exit; writes wrap at 64 MiB so the file stays bounded.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FSYNC_WRITER_MIN (4u << 10)
#define FSYNC_WRITER_MAX (1u << 20)
#define FSYNC_WRITER_WRAP (64ull << 20)

static int
fsync_writer_block(int fd, const char *buf, size_t len, off_t off)
{
	ssize_t n;

	while (len > 0) {
		n = pwrite(fd, buf, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n, len -= (size_t)n, off += n;
	}
	return fsync(fd);
}

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, "[SECONDS [DIR]]");
	char dir[PATH_MAX], path[PATH_MAX + 32];
	unsigned long long bytes = 0, fsyncs = 0;
	size_t len = FSYNC_WRITER_MIN;
	uint64_t deadline;
	int fd, own = argc < 3;
	off_t off = 0;
	char *buf;

	if (own) {
		strcpy(dir, "/var/tmp/vitals-fsync.XXXXXX");
		if (!mkdtemp(dir))
			wl_die("mkdtemp /var/tmp/vitals-fsync.XXXXXX");
	} else if (snprintf(dir, sizeof(dir), "%s", argv[2]) >=
	    (int)sizeof(dir)) {
		fprintf(stderr, "%s: directory name too long\n", argv[0]);
		return 2;
	}
	snprintf(
	    path, sizeof(path), "%s/vitals-fsync-%d.dat", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		wl_die(path);
	if (!(buf = malloc(FSYNC_WRITER_MAX)))
		wl_die("malloc");
	memset(buf, 0xa5, FSYNC_WRITER_MAX);
	deadline = wl_now_ns() + (uint64_t)(secs * 1e9);
	do {
		if (fsync_writer_block(fd, buf, len, off) < 0)
			wl_die(path);
		bytes += len, fsyncs++;
		off = (off_t)((off + (off_t)len) % FSYNC_WRITER_WRAP);
		len = len == FSYNC_WRITER_MAX ? FSYNC_WRITER_MIN : len * 4;
	} while (wl_now_ns() < deadline);
	close(fd);
	unlink(path);
	if (own)
		rmdir(dir);
	printf("{\"workload\":\"fsync_writer\",\"seconds\":%g,\"bytes\":%llu,"
	       "\"fsyncs\":%llu,\"dir\":",
	    secs, bytes, fsyncs);
	wl_json_str(stdout, dir);
	printf(",\"pid\":%d}\n", (int)getpid());
	free(buf);
	return 0;
}
