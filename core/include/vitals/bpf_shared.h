/* SPDX-License-Identifier: MIT */
/*
 * Layouts shared by a probe's BPF programs and the user-space BPF layer
 * (<vitals/bpf.h>): the parameters user space writes, the record a sampled
 * event sends up, and the exe id both sides compute.  Plain C over the
 * kernel's fixed-width types so it compiles for both targets.
 */
#ifndef VITALS_BPF_SHARED_H
#define VITALS_BPF_SHARED_H

#include <linux/types.h>

/* Vitals one BPF object may count. */
#define VITALS_BPF_MAX_VITALS 4
/* Tracepoint fields whose offsets user space resolves for a program. */
#define VITALS_BPF_MAX_FIELDS 16
/* Probe-specific parameters (thresholds and the like). */
#define VITALS_BPF_MAX_PARAMS 8
/* Frames a record carries per side. */
#define VITALS_BPF_STACK 16
#define VITALS_BPF_COMM_LEN 16
/* Mapped files a record can place its user frames in. */
#define VITALS_BPF_UFILES 6

/*
 * Written by user space, read by every program on every event.  The epoch
 * index selects which half of the HCA and first-sighting maps is live; user
 * space flips it at each boundary and then reads the other half.  Each
 * vital has a region of both maps in each half, hca_off (in 1024s of
 * entries from the maps' start; the maps may be shared with other
 * probes' objects); of it, the half's HCA uses the first 2^(5 + low
 * nibble of hca_log) counters and its first-sighting bits the first
 * 2^(10 + high nibble) words.  User space sizes and places a half's
 * region while the programs count in the other one.  The first 64 bytes
 * are what every event reads.  User space checks an object's layout of
 * this struct against its own (by BTF) and refuses another.
 */
struct vitals_bpf_cfg {
	__u32 epoch; /* epochs flipped so far; the live half is epoch & 1 */
	__u32 self_tgid; /* vitalsd: never counted */
	__u32 tgid; /* count only this process; 0 = all */
	__u16 nvitals; /* vitals in this object */
	__u16 full; /* bit v set: vital v's sample store is full, count only */
	__u64 cgroup; /* count only this cgroup id; 0 = all */
	char comm
	    [VITALS_BPF_COMM_LEN]; /* count only comms with this prefix; "" = all */
	/* By half and vital: the regions and the sizes. */
	__u16 hca_off[2][VITALS_BPF_MAX_VITALS];
	__u8 hca_log[2][VITALS_BPF_MAX_VITALS];
	__u64 shift[VITALS_BPF_MAX_VITALS]; /* t = 2^shift in force */
	__u64 floor[VITALS_BPF_MAX_VITALS]; /* counters below are not sampled */
	__u64
	    dropped[VITALS_BPF_MAX_VITALS]; /* samples lost: ring buffer full */
	__u32 field_off[VITALS_BPF_MAX_FIELDS]; /* tracepoint field offsets */
	__u32 field_size[VITALS_BPF_MAX_FIELDS]; /* and sizes; 0 = absent */
	__u64 param[VITALS_BPF_MAX_PARAMS]; /* probe-specific */
	/*
	 * Kernel addresses in labels (vitals_bpf_ktext, vitals_bpf_khide): the
	 * host's key for vitals_hash_keyed() and the kernel's text, [_text,
	 * _etext), or 0s where kallsyms hides it.
	 */
	__u64 kkey[2];
	__u64 ktext_lo, ktext_hi;
};

/*
 * An executable file mapping a record's user frames fall in, as the
 * kernel found it (bpf_find_vma): frame addr is at file offset
 * addr - start + off of the file (dev, ino).
 */
struct vitals_bpf_ufile {
	__u64 start, end; /* the mapping, [start, end) */
	__u64 off; /* file offset of start */
	__u64 ino; /* the file's inode number */
	__u32 dev; /* and device, kernel-encoded (major << 20 | minor) */
	__u32 kind; /* the BPF side's (VITALS__UF_*); 0 as sent */
};

/*
 * The layout of struct vitals_bpf_rec, its first word: user space drops a
 * record of another layout (a probe built against another SDK) with a
 * complaint.  "vr" and the layout's number, so that a record from before
 * the field, which starts with a time, does not pass.  Layouts 1 to 3
 * ended at ustack, code_end and ufile, and were told apart by their length.
 */
#define VITALS_BPF_REC_VERSION 0x76720004U

/* A sampled event, as the ring buffer carries it. */
struct vitals_bpf_rec {
	__u32 version; /* VITALS_BPF_REC_VERSION */
	__u32 vital; /* index in the object */
	__u64 ts_ns; /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 label; /* the label hashed */
	__u64 weight; /* the event's weight */
	__u64 count; /* the counter after this event */
	__u32 slot; /* HCA slot */
	__u32 exe_id; /* vitals_bpf_exe_id() of the process's executable */
	__u32 uid;
	__u32 pid; /* tgid */
	__u32 tid;
	__u32 op; /* vital-specific */
	__u32 epoch; /* HCA half it was counted in */
	__u32 fresh; /* 1 if sampled as a first sighting */
	__u32 nkstack; /* frames in kstack */
	__u32 nustack; /* frames in ustack */
	char comm[VITALS_BPF_COMM_LEN];
	__u64 args[4]; /* vital-specific */
	__u64 kstack[VITALS_BPF_STACK];
	__u64 ustack[VITALS_BPF_STACK];
	/*
	 * The process's executable text (mm start_code, end_code), 0 if not
	 * known: user space places user frames in it once the process is
	 * gone and /proc no longer has its mappings.
	 */
	__u64 code_start, code_end;
	/*
	 * The files the user frames lie in, so they are placed without
	 * /proc (gone processes, libraries too); nufiles 0 if not looked up.
	 */
	__u32 nufiles;
	__u32 pad;
	struct vitals_bpf_ufile ufile[VITALS_BPF_UFILES];
};

/*
 * Whether len bytes at data, from the ring buffer, are a whole record of
 * this layout (for user space, which drops others).
 */
static inline int
vitals_bpf_rec_valid(const void *data, __u64 len)
{
	return len >= sizeof(struct vitals_bpf_rec) &&
	    *(const __u32 *)data == VITALS_BPF_REC_VERSION;
}

/*
 * Weight counted on one CPU for one vital's label but not yet added to
 * its HCA counter, in one half (epoch & 1) of the map: see
 * vitals_bpf_count() in sketch.bpf.h.  At a boundary user space adds the
 * ended epoch's (the half it reads) to that half's counters.
 */
struct vitals_bpf_pend {
	__u64 weight; /* not yet added */
	__u32 slot; /* to this counter of the vital's HCA half */
	__u32 epoch; /* the cfg epoch it was counted in */
};

/* The last event of one vital counted on a CPU (see vitals_bpf_exe_slot). */
struct vitals_bpf_last {
	__u64 label; /* its label, */
	__u64 h; /* hash, */
	__u32 exe; /* exe id, */
	__u32 uid; /* uid, */
	__u32
	    epoch; /* and the cfg epoch its first-sighting bits were set in, */
	__u32
	    below; /* or it was counted in untested (under the floor, store full) */
	__u64 chk; /* of the fields above (vitals__last_chk) */
	__u64 base; /* its counter after this CPU last added to it */
	struct vitals_bpf_pend pend[2]; /* by half */
};

/*
 * Per CPU (a one-entry per-CPU array map, vitals_exe_cache): the last
 * process seen and its exe id, so most events skip the walk, and per
 * vital the last label counted with its hash, so a label counted again
 * on the same CPU skips the hash and, in the same epoch, the
 * first-sighting test (per vital: kmem's allocations and frees
 * alternate), and adds to its counter only now and then.  The first 64
 * bytes are what the busiest programs read on every event
 * (vitals_bpf_me() in sketch.bpf.h), and last[0]'s fields up to its
 * first half's pending weight fill the next 64.
 */
struct vitals_bpf_exe_slot {
	__u64 task; /* the task vitals_bpf_me() filled it for; 0 = none */
	__u64 cred; /* and that task's credentials then */
	__u32 tgid;
	__u32 exe_id;
	__u32 uid; /* of cred, valid while task is set */
	__u32 pad;
	__u64
	    stack_top; /* mm->start_stack: user stack depths are taken from it */
	__u64 code_start,
	    code_end; /* mm->start_code, end_code: the exe's text */
	__u64
	    mmap_base; /* mm->mmap_base: shared libraries are mapped below it */
	struct vitals_bpf_last last[VITALS_BPF_MAX_VITALS];
	__u64 mm; /* vitals__task_key(): exec replaces the mm, not the tgid */
	__u64 exec_id; /* the task's self_exec_id: which exec of the tgid */
};

/*
 * The exe id: a 32-bit mix of the executable's inode number, which both
 * the kernel (mm->exe_file) and user space (stat of /proc/PID/exe) see.
 */
static inline __u32
vitals_bpf_exe_id(__u64 ino)
{
	__u64 x = ino * 0x9e3779b97f4a7c15ULL;

	x ^= x >> 29;
	return (__u32)(x ^ (x >> 32)) | 1;
}

#endif /* VITALS_BPF_SHARED_H */
