/* SPDX-License-Identifier: MIT */
/*
 * sd_notify's protocol by hand (core/runtime/notify.h): a datagram to
 * the AF_UNIX socket named by $NOTIFY_SOCKET, a path or, after '@', an
 * abstract name.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"

int
notify_send(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n, len = strlen(state);
	socklen_t salen;
	ssize_t w;
	int fd, r;

	if (path == NULL || *path == '\0')
		return 0;
	if ((path[0] != '/' && path[0] != '@') ||
	    (n = strlen(path)) >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n +
	    (path[0] == '/'));
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return -errno;
	w = sendto(fd, state, len, MSG_NOSIGNAL, (struct sockaddr *)&sa, salen);
	r = w < 0 ? -errno : (size_t)w == len ? 1 : -EIO;
	close(fd);
	return r;
}
