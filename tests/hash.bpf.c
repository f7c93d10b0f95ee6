/* SPDX-License-Identifier: MIT */
/*
 * The label hash as the BPF programs compute it: <vitals/hash.h>, compiled
 * for the BPF target with the headers every probe includes, run on values
 * user space passes in (tests/check_hash_bpf.c, BPF_PROG_TEST_RUN).
 */
#include <vitals/probe.bpf.h>

/* The program's context: in, and out as the test run copies it back. */
struct hash_run {
	__u64 mix_in, mix_out;
	__u64 label;
	__u32 exe_id, uid;
	__u64 label_out;
	__u64 k0, k1, keyed_in, keyed_out; /* vitals_hash_keyed */
};

SEC("syscall")
int
hash_run(struct hash_run *r)
{
	r->mix_out = vitals_hash_mix64(r->mix_in);
	r->label_out = vitals_hash_label(r->label, r->exe_id, r->uid);
	r->keyed_out = vitals_hash_keyed(r->k0, r->k1, r->keyed_in);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
