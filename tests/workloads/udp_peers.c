/* SPDX-License-Identifier: MIT */
/*
 * Workload: sends one 1-byte UDP datagram to each of PEERS addresses
 * 127.1.0.0 + i, port 9, in rounds of ROUND_MS milliseconds for SECONDS,
 * from one unconnected socket: PEERS labels of the socket vital in every
 * epoch that holds a whole round (the HCA's sizing and coverage with many
 * labels).  It prints each round's start and end (CLOCK_REALTIME, as the
 * epochs' times), the first UDP_PEERS_ROUNDS of them.
 */
#include "wl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define UDP_PEERS_USAGE "[SECONDS [PEERS [ROUND_MS]]]"
#define UDP_PEERS_BASE 0x7f010000U /* 127.1.0.0 */
#define UDP_PEERS_PORT 9
#define UDP_PEERS_ROUNDS 1024

/* Nanoseconds of CLOCK_REALTIME. */
static uint64_t
udp_peers_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Sleep until monotonic time t (ns). */
static void
udp_peers_until(uint64_t t)
{
	uint64_t now = wl_now_ns();
	struct timespec ts;

	if (now >= t)
		return;
	ts.tv_sec = (time_t)((t - now) / 1000000000ULL);
	ts.tv_nsec = (long)((t - now) % 1000000000ULL);
	nanosleep(&ts, NULL);
}

int
main(int argc, char **argv)
{
	double secs = wl_seconds(argc, argv, UDP_PEERS_USAGE);
	long peers = wl_int_arg(argc, argv, 2, "PEERS", 1, 1000000, 5000);
	long round_ms = wl_int_arg(argc, argv, 3, "ROUND_MS", 1, 10000, 250);
	static uint64_t span[UDP_PEERS_ROUNDS][2];
	uint64_t start, deadline, next, sent = 0, rounds = 0, r;
	struct sockaddr_in to;
	char b = 0;
	long i;
	int fd;

	if ((fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		wl_die("socket");
	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	to.sin_port = htons(UDP_PEERS_PORT);
	start = next = wl_now_ns();
	deadline = start + (uint64_t)(secs * 1e9);
	while (wl_now_ns() < deadline) {
		next += (uint64_t)round_ms * 1000000ULL;
		if (rounds < UDP_PEERS_ROUNDS)
			span[rounds][0] = udp_peers_real_ns();
		for (i = 0; i < peers; i++) {
			to.sin_addr.s_addr =
			    htonl(UDP_PEERS_BASE + (uint32_t)i);
			if (sendto(fd, &b, 1, 0, (struct sockaddr *)&to,
				sizeof(to)) == 1)
				sent++;
			else if (errno != EINTR && errno != ENOBUFS &&
			    errno != EAGAIN && errno != ECONNREFUSED)
				wl_die("sendto");
		}
		if (rounds < UDP_PEERS_ROUNDS)
			span[rounds][1] = udp_peers_real_ns();
		rounds++;
		udp_peers_until(next);
	}
	printf("{\"workload\":\"udp_peers\",\"seconds\":%g,\"peers\":%ld,"
	       "\"rounds\":%llu,\"datagrams\":%llu,\"base\":%u,\"port\":%d,"
	       "\"start_ns\":%llu,\"end_ns\":%llu,\"pid\":%d,\"rounds_ns\":[",
	    secs, peers, (unsigned long long)rounds, (unsigned long long)sent,
	    UDP_PEERS_BASE, UDP_PEERS_PORT, (unsigned long long)start,
	    (unsigned long long)wl_now_ns(), (int)getpid());
	/* The line goes on: the rounds, then its end. */
	for (r = 0; r < rounds && r < UDP_PEERS_ROUNDS; r++)
		printf("%s[%llu,%llu]", r ? "," : "",
		    (unsigned long long)span[r][0],
		    (unsigned long long)span[r][1]);
	printf("]}\n");
	close(fd);
	return 0;
}
