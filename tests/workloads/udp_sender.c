/* SPDX-License-Identifier: MIT */
/*
 * Workload: sends UDP datagrams of SIZE bytes to 127.0.0.1:PORT (default
 * 512 bytes to port 47999; port 0 picks a free one), received and drained
 * by a socket bound there in the same process (the socket vital).
 */
#include "wl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define UDP_SENDER_USAGE "[SECONDS [SIZE [PORT]]]"

/* Bind the receiver to 127.0.0.1:port; *sin gets the bound address. */
static int
udp_sender_receiver(long port, struct sockaddr_in *sin)
{
	socklen_t len = sizeof(*sin);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		wl_die("socket");
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)port);
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)sin, sizeof(*sin)) < 0) {
		fprintf(stderr,
		    "udp_sender: bind 127.0.0.1:%ld: %s "
		    "(pass another PORT, or 0 for any)\n",
		    port, strerror(errno));
		exit(1);
	}
	if (getsockname(fd, (struct sockaddr *)sin, &len) < 0)
		wl_die("getsockname");
	return fd;
}

/* Receive whatever is queued without blocking; returns the datagrams. */
static uint64_t
udp_sender_drain(int fd, char *buf, size_t size)
{
	uint64_t n = 0;

	while (recv(fd, buf, size, MSG_DONTWAIT) >= 0)
		n++;
	return n;
}

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, UDP_SENDER_USAGE);
	long size = wl_int_arg(argc, argv, 2, "SIZE", 1, 65507, 512);
	long port = wl_int_arg(argc, argv, 3, "PORT", 0, 65535, 47999);
	uint64_t deadline, sent = 0, received = 0;
	struct sockaddr_in to;
	int rfd, sfd;
	char *buf;

	rfd = udp_sender_receiver(port, &to);
	if ((sfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		wl_die("socket");
	if (!(buf = calloc(1, (size_t)size)))
		wl_die("calloc");
	deadline = wl_now_ns() + (uint64_t)(secs * 1e9);
	do {
		if (sendto(sfd, buf, (size_t)size, 0, (struct sockaddr *)&to,
			sizeof(to)) == size)
			sent++;
		else if (errno != EINTR && errno != ENOBUFS && errno != EAGAIN)
			wl_die("sendto");
		received += udp_sender_drain(rfd, buf, (size_t)size);
	} while (wl_now_ns() < deadline);
	printf("{\"workload\":\"udp_sender\",\"seconds\":%g,\"bytes\":%llu,"
	       "\"datagrams\":%llu,\"received\":%llu,\"size\":%ld,"
	       "\"addr\":\"127.0.0.1\",\"port\":%d,\"pid\":%d}\n",
	    secs, (unsigned long long)(sent * (uint64_t)size),
	    (unsigned long long)sent, (unsigned long long)received, size,
	    (int)ntohs(to.sin_port), (int)getpid());
	close(sfd);
	close(rfd);
	free(buf);
	return 0;
}
