/* SPDX-License-Identifier: MIT */
/*
 * The label hash (and the keyed hash that keeps kernel pointers out of
 * labels) on the BPF side gives the known values user space gives
 * (tests/check_hash.c): tests/hash.bpf.c runs <vitals/hash.h> as clang
 * compiled it for the BPF target, through BPF_PROG_TEST_RUN.  Needs root
 * (or CAP_BPF); skips otherwise.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hash.skel.h"
#include "hash_vectors.h"

#define SKIP 77

/* As tests/hash.bpf.c has it. */
struct hash_run {
	__u64 mix_in, mix_out;
	__u64 label;
	__u32 exe_id, uid;
	__u64 label_out;
	__u64 k0, k1, keyed_in, keyed_out; /* vitals_hash_keyed */
};

/* Run the program on r; 0 or a negative errno. */
static int
run(int fd, struct hash_run *r)
{
	LIBBPF_OPTS(
	    bpf_test_run_opts, o, .ctx_in = r, .ctx_size_in = sizeof(*r));
	int e = bpf_prog_test_run_opts(fd, &o);

	return e < 0 ? -errno : 0;
}

int
main(void)
{
	struct hash_run r;
	struct hash_bpf *skel;
	unsigned i, bad = 0;
	int fd, e;

	if (geteuid() != 0) {
		printf("SKIP: not root: cannot load BPF programs\n");
		return SKIP;
	}
	libbpf_set_print(NULL);
	if ((skel = hash_bpf__open_and_load()) == NULL) {
		printf(
		    "SKIP: cannot load the BPF program: %s\n", strerror(errno));
		return SKIP;
	}
	fd = bpf_program__fd(skel->progs.hash_run);
	for (i = 0; i < HASH_NMIX + HASH_NLABEL; i++) {
		memset(&r, 0, sizeof(r));
		if (i < HASH_NMIX)
			r.mix_in = hash_mix_vecs[i].in;
		else {
			r.label = hash_label_vecs[i - HASH_NMIX].label;
			r.exe_id = hash_label_vecs[i - HASH_NMIX].exe_id;
			r.uid = hash_label_vecs[i - HASH_NMIX].uid;
		}
		if ((e = run(fd, &r)) < 0) {
			hash_bpf__destroy(skel);
			printf("SKIP: BPF_PROG_TEST_RUN: %s\n", strerror(-e));
			return SKIP;
		}
		if (i < HASH_NMIX && r.mix_out != hash_mix_vecs[i].out) {
			printf("FAIL: BPF mix64(%#llx) = %#llx, want %#llx\n",
			    r.mix_in, r.mix_out, hash_mix_vecs[i].out);
			bad++;
		} else if (i >= HASH_NMIX &&
		    r.label_out != hash_label_vecs[i - HASH_NMIX].out) {
			printf("FAIL: BPF label hash(%#llx, %u, %u) = %#llx, "
			       "want %#llx\n",
			    r.label, r.exe_id, r.uid, r.label_out,
			    hash_label_vecs[i - HASH_NMIX].out);
			bad++;
		}
	}
	/* SipHash-2-4's vector (key 00..0f, bytes 00..07), top bit cleared. */
	memset(&r, 0, sizeof(r));
	r.k0 = r.keyed_in = 0x0706050403020100ULL;
	r.k1 = 0x0f0e0d0c0b0a0908ULL;
	if (run(fd, &r) == 0 && r.keyed_out != 0x93f5f5799a932462ULL >> 1) {
		printf("FAIL: BPF keyed hash = %#llx, want %#llx\n",
		    r.keyed_out, 0x93f5f5799a932462ULL >> 1);
		bad++;
	}
	hash_bpf__destroy(skel);
	if (bad)
		return 1;
	printf("PASS: the BPF side's label and keyed hashes give the %zu "
	       "known values\n",
	    HASH_NMIX + HASH_NLABEL + 1);
	return 0;
}
