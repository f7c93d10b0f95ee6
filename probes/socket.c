/* SPDX-License-Identifier: MIT */
/*
 * socket probe: bytes sent and received, by peer (address, port,
 * protocol).  BPF programs on sock:sock_send_length/sock_recv_length keep
 * the sketch in the kernel; one on net:net_dev_queue reads where an
 * unconnected socket (UDP sendto) sends from the packet.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vitals/bpf.h>
#include <vitals/vitals.h>

#include "socket.skel.h"

struct socket_config {
	struct vitals_bpf_opts bpf;
	int receive; /* count received bytes too */
	int peers;   /* read unconnected sockets' destinations from packets */
};

struct socket_state {
	struct socket_bpf *skel;
	struct vitals_bpf *bpf;
};

static const char *const socket_tracepoints[] = {
	"sock:sock_send_length", "sock:sock_recv_length", NULL
};

/* Where an unconnected socket's destination is read (optional). */
static const char *const socket_peer_tracepoints[] = {
	"net:net_dev_queue", NULL
};

static const struct vitals_option socket_options[] = {
	VITALS_BPF_OPTIONS(struct socket_config, bpf),
	{ "receive", VITALS_OPT_BOOL, offsetof(struct socket_config, receive),
	  "true", "count received bytes too (op 1), not only sent ones", 0, 0 },
	{ "peers", VITALS_OPT_BOOL, offsetof(struct socket_config, peers),
	  "true", "name the IPv4 destination of unconnected sockets' sends "
	  "(UDP sendto) from the packet (net:net_dev_queue); false labels "
	  "them by local port, as their receives always are", 0, 0 },
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

static int
socket_available(char *why, size_t len)
{
	return vitals_bpf_available(socket_tracepoints, why, len);
}

static void
socket_fini(void *state)
{
	struct socket_state *s = state;

	if (s == NULL)
		return;
	vitals_bpf_free(s->bpf);
	socket_bpf__destroy(s->skel);
	free(s);
}

/* Leave out the programs the options turn off, before the object loads. */
static void
socket_select(struct vitals_ctx *ctx, const struct socket_config *cf,
    struct socket_bpf *skel)
{
	char why[256];
	int peers = cf->peers;

	if (peers && vitals_bpf_available(socket_peer_tracepoints, why,
	    sizeof(why)) < 0) {
		vitals_log(ctx, VITALS_LOG_WARN, "unconnected sockets' sends "
		    "are labelled by local port: %s", why);
		peers = 0;
	}
	if (!cf->receive)
		bpf_program__set_autoload(skel->progs.vitals_socket_recv, false);
	if (!peers)
		bpf_program__set_autoload(skel->progs.vitals_socket_xmit, false);
}

static int
socket_init(struct vitals_ctx *ctx, const void *config, void **state)
{
	const struct socket_config *cf = config;
	struct vitals_bpf_spec spec = {
		.nvitals = 1,
		.vitals = { "socket" },
		.units = { "bytes" },
	};
	struct socket_state *s;
	int r;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -ENOMEM;
	vitals_bpf_spec_opts(&spec, &cf->bpf);
	if ((s->skel = socket_bpf__open()) == NULL) {
		r = -errno;
		vitals_error(ctx, "cannot open the BPF object: %s", strerror(-r));
		goto fail;
	}
	socket_select(ctx, cf, s->skel);
	if ((r = vitals_bpf_prepare(ctx, s->skel->obj, &spec, &s->bpf)) < 0)
		goto fail;
	if ((r = vitals_bpf_load(s->bpf)) < 0 ||
	    (r = vitals_bpf_attach(s->bpf)) < 0)
		goto fail;
	*state = s;
	return 0;
fail:
	socket_fini(s);
	return r;
}

static int
socket_flush(void *state)
{
	struct socket_state *s = state;

	return vitals_bpf_flush(s->bpf);
}

const struct vitals_plugin vitals_plugin = {
	.abi_major = VITALS_ABI_MAJOR,
	.abi_minor = VITALS_ABI_MINOR,
	.kind = VITALS_PLUGIN_PROBE,
	.config_size = sizeof(struct socket_config),
	.name = "socket",
	.version = "0.1.0",
	.description = "socket bytes by peer address, port and protocol "
	    "(sock:sock_send_length/sock_recv_length: every family and call, "
	    "where the paper hooked socket reads and writes in the file layer; "
	    "in-kernel sketch)",
	.options = socket_options,
	.available = socket_available,
	.init = socket_init,
	.fini = socket_fini,
	.flush = socket_flush,
	/* vitals_bpf_prepare() checks the same in init. */
	.check = vitals_bpf_check,
};
