/* SPDX-License-Identifier: MIT */
/*
 * socket vital, in the kernel: bytes a socket sends or receives
 * (sock:sock_send_length / sock_recv_length), counted under the peer they
 * go to or come from.  A connected socket names its peer.  One that is
 * not (UDP sendto) names it only in the packet, so the IPv4 header is read
 * as the packet leaves (net:net_dev_queue, in the sender's thread) and
 * handed to the send event that follows; what such a socket receives is
 * labelled by its local port (UDP copies most datagrams out with no
 * tracepoint that shows the packet).
 */
#include <vitals/probe.bpf.h>

#define SOCKET_AF_INET 2
#define SOCKET_AF_INET6 10
#define SOCKET_MSG_PEEK 2
#define SOCKET_IPPROTO_TCP 6
#define SOCKET_IPPROTO_UDP 17
#define SOCKET_IPPROTO_UDPLITE 136

/* op, and bit 63 of the label. */
#define SOCKET_SEND 0
#define SOCKET_RECV 1

/*
 * Label layout: bits 0-31 the peer (IPv4 address in host order, an IPv6
 * address folded to 32 bits, or the family for other sockets), 32-47 the
 * peer's port (the local port when the peer is unknown), 48-55 the
 * protocol, 56-57 the kind below, 63 the direction.
 */
#define SOCKET_PEER_V4 0
#define SOCKET_PEER_V6 1
#define SOCKET_PEER_LOCAL 2 /* peer unknown: labelled by the local port */
#define SOCKET_PEER_OTHER 3 /* not an inet socket */

/* struct in6_addr, only ever read whole. */
struct socket_in6 {
	__u32 w[4];
};

struct sock_common {
	__u32 skc_daddr;
	__u16 skc_dport;
	__u16 skc_num;
	unsigned short skc_family;
	struct socket_in6 skc_v6_daddr;
} __attribute__((preserve_access_index));

struct sock {
	struct sock_common __sk_common;
	__u16 sk_protocol;
} __attribute__((preserve_access_index));

struct sk_buff {
	struct sock *sk;
	unsigned char *head;
	__u16 network_header;
} __attribute__((preserve_access_index));

/* The start of an IPv4 header and of the transport header after it (wire format). */
struct socket_ip4 {
	__u8 vihl;
	__u8 tos;
	__u16 len;
	__u16 id;
	__u16 frag;
	__u8 ttl;
	__u8 proto;
	__u16 csum;
	__u32 saddr;
	__u32 daddr;
};

/* A destination read from a packet, waiting for its sender's send event. */
struct socket_pending {
	__u32 tid; /* sending thread; 0 = consumed */
	__u32 addr; /* network order */
	__u16 port; /* network order */
	__u16 pad;
};

/*
 * Kept on the socket, so a packet leaving in softirq context (an ICMP
 * error the kernel sends while the sender's syscall runs) does not take
 * the place of the sender's own.
 */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct socket_pending);
} socket_pending SEC(".maps");

/* The destination of an IPv4 packet leaving this thread, into p; 0 or -1. */
static __always_inline int
socket_packet_dest(const struct sk_buff *skb, struct socket_pending *p)
{
	struct socket_ip4 ip;
	unsigned char *nh = skb->head + skb->network_header;
	__u16 ports[2] = { 0, 0 };

	if (bpf_probe_read_kernel(&ip, sizeof(ip), nh) < 0 ||
	    (ip.vihl >> 4) != 4)
		return -1;
	if (ip.proto == SOCKET_IPPROTO_UDP || ip.proto == SOCKET_IPPROTO_TCP ||
	    ip.proto == SOCKET_IPPROTO_UDPLITE) {
		/* Later fragments carry no ports and follow the first. */
		if (__builtin_bswap16(ip.frag) & 0x1fff)
			return -1;
		bpf_probe_read_kernel(
		    ports, sizeof(ports), nh + (ip.vihl & 15) * 4);
	}
	p->addr = ip.daddr;
	p->port = ports[1];
	p->tid = (__u32)bpf_get_current_pid_tgid();
	return 0;
}

SEC("tp_btf/net_dev_queue")
int
vitals_socket_xmit(__u64 *ctx)
{
	struct sk_buff *skb = (struct sk_buff *)ctx[0];
	struct sock *sk = skb->sk;
	struct socket_pending p = {}, *q;

	/* Only unconnected sockets: the others name their peer. */
	if (sk == 0 || sk->__sk_common.skc_daddr != 0 ||
	    socket_packet_dest(skb, &p) < 0)
		return 0;
	q = bpf_sk_storage_get(
	    &socket_pending, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
	if (q != 0)
		*q = p;
	return 0;
}

/* The destination a packet of this thread named for sk, consumed; 0 or -1. */
static __always_inline int
socket_take_pending(struct sock *sk, __u32 tid, __u32 *addr, __u16 *port)
{
	struct socket_pending *p;

	if ((p = bpf_sk_storage_get(&socket_pending, sk, 0, 0)) == 0 ||
	    p->tid != tid)
		return -1;
	p->tid = 0;
	*addr = p->addr;
	*port = p->port;
	return 0;
}

/* The peer of an inet6 socket: its kind, *addr (host order or folded). */
static __always_inline __u32
socket_peer6(struct sock *sk, __u32 *addr)
{
	__u32 a[4] = { 0, 0, 0, 0 };

	bpf_probe_read_kernel(a, sizeof(a), &sk->__sk_common.skc_v6_daddr);
	if (a[0] == 0 && a[1] == 0 && a[2] == __builtin_bswap32(0xffff)) {
		*addr = __builtin_bswap32(a[3]);
		return *addr != 0 ? SOCKET_PEER_V4 : SOCKET_PEER_LOCAL;
	}
	*addr = __builtin_bswap32(a[0] ^ a[1] ^ a[2] ^ a[3]);
	return (a[0] | a[1] | a[2] | a[3]) != 0 ? SOCKET_PEER_V6
						: SOCKET_PEER_LOCAL;
}

/*
 * The peer of sk for a send or receive by thread tid: its kind, *addr
 * (host order, or folded, or the family) and *port (host order; the local
 * port when the peer is unknown).
 */
static __always_inline __u32
socket_peer(struct sock *sk, __u32 dir, __u32 tid, __u32 *addr, __u32 *port)
{
	__u32 family = sk->__sk_common.skc_family, kind, pa = 0;
	__u16 pp = 0;

	if (family == SOCKET_AF_INET) {
		*addr = __builtin_bswap32(sk->__sk_common.skc_daddr);
		kind = *addr != 0 ? SOCKET_PEER_V4 : SOCKET_PEER_LOCAL;
	} else if (family == SOCKET_AF_INET6) {
		kind = socket_peer6(sk, addr);
	} else {
		*addr = family;
		*port = 0;
		return SOCKET_PEER_OTHER;
	}
	if (kind != SOCKET_PEER_LOCAL) {
		*port = __builtin_bswap16(sk->__sk_common.skc_dport);
	} else if (dir == SOCKET_SEND &&
	    socket_take_pending(sk, tid, &pa, &pp) == 0) {
		kind = SOCKET_PEER_V4;
		*addr = __builtin_bswap32(pa);
		*port = __builtin_bswap16(pp);
	} else {
		*addr = 0;
		*port = sk->__sk_common.skc_num;
	}
	return kind;
}

static __always_inline int
socket_count(__u64 *ctx, __u32 dir)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct sock *sk = (struct sock *)ctx[0];
	struct vitals_bpf_rec *r;
	struct task_struct *task = vitals_bpf_task();
	__u64 pt = vitals_bpf_pid_tgid(task), label;
	__u32 proto, kind, addr = 0, port = 0;
	int ret = (int)ctx[1];

	if (ret <= 0 || (dir == SOCKET_RECV && ((int)ctx[2] & SOCKET_MSG_PEEK)))
		return 0;
	if (c == 0 || sk == 0 || !vitals_bpf_wanted(c, pt))
		return 0;
	proto = sk->sk_protocol;
	kind = socket_peer(sk, dir, (__u32)pt, &addr, &port);
	label = addr | (__u64)port << 32 | (__u64)(proto & 0xff) << 48 |
	    (__u64)kind << 56 | (__u64)dir << 63;
	r = vitals_bpf_count(c, 0, label, (__u64)ret, pt,
	    vitals_bpf_current_exe(pt >> 32), vitals_bpf_uid(task));
	if (r == 0)
		return 0;
	r->op = dir;
	r->args[0] = kind == SOCKET_PEER_V4 ? addr : 0;
	r->args[1] = kind == SOCKET_PEER_LOCAL ? 0 : port;
	r->args[2] = proto;
	r->args[3] =
	    (__u64)sk->__sk_common.skc_family << 16 | sk->__sk_common.skc_num;
	vitals_bpf_submit_tp(ctx, r, 1);
	return 0;
}

SEC("tp_btf/sock_send_length")
int
vitals_socket_send(__u64 *ctx)
{
	return socket_count(ctx, SOCKET_SEND);
}

SEC("tp_btf/sock_recv_length")
int
vitals_socket_recv(__u64 *ctx)
{
	return socket_count(ctx, SOCKET_RECV);
}

char LICENSE[] SEC("license") = "GPL";
