/* SPDX-License-Identifier: MIT */
/*
 * signal vital, in the kernel: every signal is counted once, when the
 * receiving thread takes it (signal:signal_deliver), under the receiver's
 * exe and uid with the signal number as label.  signal:signal_generate,
 * which runs in the sender's context, only notes who sent what to whom so
 * a sampled delivery can name its sender.
 */
#include <vitals/probe.bpf.h>

/* Probe parameter (set by signal.c): 1 when signal_generate records senders. */
#define SIGNAL_P_SENDER 0

/* signal_generate results after which the signal is pending. */
#define SIGNAL_DELIVERED 0
#define SIGNAL_LOSE_INFO 4

/* si_code values and signals that tell a signal was raised in task context. */
#define SIGNAL_SI_USER 0
#define SIGNAL_SI_KERNEL 0x80
#define SIGNAL_SI_QUEUE (-1)
#define SIGNAL_SI_MESGQ (-3)
#define SIGNAL_SI_TKILL (-6)
#define SIGNAL_SI_DETHREAD (-7)
#define SIGNAL_FAULTS \
	((1u << 4) | (1u << 5) | (1u << 7) | (1u << 8) | (1u << 11) | \
	    (1u << 31)) /* SIGILL SIGTRAP SIGBUS SIGFPE SIGSEGV SIGSYS */
#define SIGNAL_SIGCHLD 17

struct kernel_siginfo {
	int si_code;
} __attribute__((preserve_access_index));

struct sigaction {
	void *sa_handler;
} __attribute__((preserve_access_index));

struct k_sigaction {
	struct sigaction sa;
} __attribute__((preserve_access_index));

/*
 * Per task that signals were sent to: the sender of each pending signal
 * (1-64), plus one; 0 = none (consumed, or not seen).
 */
struct signal_senders {
	__u32 pid[64];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct signal_senders);
} signal_senders SEC(".maps");

/*
 * Whether the task running signal_generate is the signal's sender: it is
 * for kill(), sigqueue(), tgkill() and the like, a child's exit or stop
 * (SIGCHLD) and a fault; it is not for what the kernel raises from
 * interrupt context (timers, I/O readiness, SI_KERNEL), whose sender is
 * recorded as 0.  info is also SEND_SIG_NOINFO (0, SI_USER) or
 * SEND_SIG_PRIV (1, SI_KERNEL).
 */
static __always_inline int
signal_from_task(__u32 sig, const struct kernel_siginfo *info)
{
	int code;

	if ((__u64)info <= 1)
		return info == 0;
	code = info->si_code;
	if (code == SIGNAL_SI_USER || code == SIGNAL_SI_QUEUE ||
	    code == SIGNAL_SI_MESGQ || code == SIGNAL_SI_TKILL ||
	    code == SIGNAL_SI_DETHREAD)
		return 1;
	if (code <= 0 || code >= SIGNAL_SI_KERNEL || sig > 31)
		return 0;
	return sig == SIGNAL_SIGCHLD || ((1u << sig) & SIGNAL_FAULTS) != 0;
}

/*
 * Sender context: note the sender on the task the signal is sent to (for
 * a process-wide signal, usually the group leader).  Results other than
 * pending-now are not kept.
 */
SEC("tp_btf/signal_generate")
int
vitals_signal_generate(__u64 *ctx)
{
	struct kernel_siginfo *info = (struct kernel_siginfo *)ctx[1];
	struct task_struct *t = (struct task_struct *)ctx[2];
	struct signal_senders *v;
	__u32 sig = (__u32)ctx[0], pid = 0;
	int res = (int)ctx[4];

	if (t == 0 || sig - 1 >= 64 ||
	    (res != SIGNAL_DELIVERED && res != SIGNAL_LOSE_INFO))
		return 0;
	v = bpf_task_storage_get(
	    &signal_senders, t, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (v == 0)
		return 0;
	if (signal_from_task(sig, info))
		pid = bpf_get_current_pid_tgid() >> 32;
	v->pid[(sig - 1) & 63] = pid + 1;
	return 0;
}

/* Take the sender of sig noted on task t: 1 and *pid, or 0. */
static __always_inline int
signal_take(struct task_struct *t, __u32 sig, __u32 *pid)
{
	struct signal_senders *v;
	__u32 i = (sig - 1) & 63;

	v = bpf_task_storage_get(&signal_senders, t, 0, 0);
	if (v == 0 || v->pid[i] == 0)
		return 0;
	*pid = v->pid[i] - 1;
	v->pid[i] = 0;
	return 1;
}

/*
 * The sender of the signal being delivered: noted on this thread, or on
 * its group leader for a process-wide one.  0 when unknown.
 */
static __always_inline __u32
signal_sender_of(__u32 sig)
{
	struct task_struct *me = bpf_get_current_task_btf(), *leader;
	__u32 pid = 0;

	if (sig - 1 >= 64 || signal_take(me, sig, &pid))
		return pid;
	leader = me->group_leader;
	if (leader != 0 && leader != me)
		signal_take(leader, sig, &pid);
	return pid;
}

SEC("tp_btf/signal_deliver")
int
vitals_signal_deliver(__u64 *ctx)
{
	struct vitals_bpf_cfg *c = vitals_bpf_cfg();
	struct kernel_siginfo *info = (struct kernel_siginfo *)ctx[1];
	struct k_sigaction *ka = (struct k_sigaction *)ctx[2];
	struct vitals_bpf_rec *r;
	struct task_struct *task = vitals_bpf_task();
	__u64 pt = vitals_bpf_pid_tgid(task);
	__u32 sig = (__u32)ctx[0], sender;

	if (c == 0 || !vitals_bpf_wanted(c, pt))
		return 0;
	sender = c->param[SIGNAL_P_SENDER] ? signal_sender_of(sig) : 0;
	r = vitals_bpf_count(c, 0, sig, 1, pt, vitals_bpf_current_exe(pt >> 32),
	    vitals_bpf_uid(task));
	if (r == 0)
		return 0;
	/* SIGKILL of a dying group comes without siginfo: SI_USER (0). */
	vitals_bpf_rec_args(r, sig, info != 0 ? (__u64)(__s64)info->si_code : 0,
	    sender, pt >> 32, ka != 0 ? (__u64)ka->sa.sa_handler : 0);
	vitals_bpf_submit_tp(ctx, r, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
