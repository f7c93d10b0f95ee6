/* SPDX-License-Identifier: MIT */
/*
 * socket probe: bytes sent and received, by peer (address, port,
 * protocol).  BPF programs on sock:sock_send_length/sock_recv_length keep
 * the sketch in the kernel; one on net:net_dev_queue reads where an
 * unconnected socket (UDP sendto) sends from the packet.
 */
#include <stdbool.h>
#include <stddef.h>

#include <vitals/bpf.h>

#include "socket.skel.h"

struct socket_config {
	struct vitals_bpf_opts bpf;
	int receive; /* count received bytes too */
	int peers; /* read unconnected sockets' destinations from packets */
};

/* Where an unconnected socket's destination is read (optional). */
static const char *const socket_peer_tracepoints[] = { "net:net_dev_queue",
	NULL };

static const struct vitals_option socket_options[] = {
	VITALS_BPF_OPTIONS(struct socket_config, bpf),
	{ "receive", VITALS_OPT_BOOL, offsetof(struct socket_config, receive),
	    "true", "count received bytes too (op 1), not only sent ones", 0,
	    0 },
	{ "peers", VITALS_OPT_BOOL, offsetof(struct socket_config, peers),
	    "true",
	    "name the IPv4 destination of unconnected sockets' sends "
	    "(UDP sendto) from the packet (net:net_dev_queue); false labels "
	    "them by local port, as their receives always are",
	    0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

/* Leave out the programs the options turn off, before the object loads. */
static int
socket_setup(struct vitals_bpf_instance *p)
{
	const struct socket_config *cf = p->config;
	struct socket_bpf *skel = p->skel;
	char why[256];
	int peers = cf->peers;

	if (peers &&
	    vitals_bpf_available(socket_peer_tracepoints, why, sizeof(why)) <
		0) {
		vitals_log(p->ctx, VITALS_LOG_WARN,
		    "unconnected sockets' "
		    "sends are labelled by local port: %s",
		    why);
		peers = 0;
	}
	if (!cf->receive)
		bpf_program__set_autoload(
		    skel->progs.vitals_socket_recv, false);
	if (!peers)
		bpf_program__set_autoload(
		    skel->progs.vitals_socket_xmit, false);
	return 0;
}

VITALS_BPF_PROBE(socket, "0.1.0",
    "socket bytes by peer address, port and "
    "protocol (sock:sock_send_length/sock_recv_length: every family and "
    "call, where the paper hooked socket reads and writes in the file "
    "layer; in-kernel sketch)",
    struct socket_config, socket_options, .vitals = { { "socket", "bytes" } },
    .tracepoints = { "sock:sock_send_length", "sock:sock_recv_length" },
    .setup = socket_setup);
