/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for core/kernel/kaddr.c: the keyed hash (SipHash-2-4's own
 * vector), kernel frames and arguments as stored against a made-up
 * kallsyms and /proc/modules, and the host key file (made 0600, kept
 * across starts, replaced when others could read it).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vitals/hash.h>
#include <vitals/vitals.h>

#include "kaddr.h"
#include "module.h"
#include "testutil.h"

/* The kernel of the fixture: text [_text, _etext), two modules, BPF. */
#define K_TEXT 0xffffffff81000000ULL
#define K_ETEXT 0xffffffff82000000ULL
#define K_EXT4 0xffffffffc00ff000ULL /* ext4's base, /proc/modules */
#define K_BPF 0xffffffffc0300010ULL /* a BPF program: in no image */

static const char kallsyms[] = "ffffffff81000000 T _text\n"
			       "ffffffff81001000 T _stext\n"
			       "ffffffff81002000 T start_kernel\n"
			       "ffffffff81ffff00 D some_data\n"
			       "ffffffff82000000 T _etext\n"
			       "ffffffffc0100000 t ext4_foo\t[ext4]\n"
			       "ffffffffc0110000 t ext4_bar\t[ext4]\n"
			       "ffffffffc0200000 t xfs_foo\t[xfs]\n"
			       "ffffffffc0300000 t bpf_prog_1234_x\t[bpf]\n";

static const char modules[] = "ext4 1048576 1 - Live 0xffffffffc00ff000\n"
			      "xfs 8192 0 - Live 0xffffffffc0200000 (O)\n";

static void
load_fixture(const char *syms)
{
	const char *ks = testutil_path(testutil_dir, "kallsyms");
	const char *mods = testutil_path(testutil_dir, "modules");

	testutil_write_file(ks, syms);
	testutil_write_file(mods, modules);
	kaddr_set_key(1, 2);
	kaddr_load(ks, mods);
}

/* The module path of stored frame f, or "" if it names none. */
static const char *
frame_image(uint64_t f)
{
	const struct vitals_module *m;

	if (VITALS_UFRAME_MODULE(f) < 0 ||
	    (m = module_of((uint32_t)VITALS_UFRAME_MODULE(f))) == NULL)
		return "";
	return m->path;
}

/* SipHash-2-4 of bytes 00..07 under key 00..0f, its top bit cleared. */
START_TEST(test_siphash_vector)
{
	ck_assert_uint_eq(vitals_hash_keyed(0x0706050403020100ULL,
			      0x0f0e0d0c0b0a0908ULL, 0x0706050403020100ULL),
	    0x93f5f5799a932462ULL >> 1);
	ck_assert_uint_ne(
	    vitals_hash_keyed(1, 2, 3), vitals_hash_keyed(1, 3, 3));
}
END_TEST

/* Frames by (image, offset): the kernel's from _text, a module's from its base. */
START_TEST(test_frames)
{
	static const struct {
		uint64_t addr;
		const char *image;
		uint64_t off;
	} cases[] = {
		{ K_TEXT + 0x2010, KADDR_KERNEL, 0x2010 },
		{ K_ETEXT - 1, KADDR_KERNEL, K_ETEXT - 1 - K_TEXT },
		{ 0xffffffffc0100000ULL, "[kernel:ext4]", 0x1000 },
		{ 0xffffffffc0110010ULL, "[kernel:ext4]", 0x11010 },
		{ 0xffffffffc0200040ULL, "[kernel:xfs]", 0x40 },
	};
	uint64_t lo, hi, f;
	size_t i;

	load_fixture(kallsyms);
	kaddr_text(&lo, &hi);
	ck_assert_uint_eq(lo, K_TEXT);
	ck_assert_uint_eq(hi, K_ETEXT);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		f = kaddr_frame(cases[i].addr);
		ck_assert_msg(f < VITALS_KADDR_MIN, "case %zu: %#llx", i,
		    (unsigned long long)f);
		ck_assert_str_eq(frame_image(f), cases[i].image);
		ck_assert_uint_eq(VITALS_UFRAME_OFFSET(f), cases[i].off);
		/* The same frame, the same value: one registry entry. */
		ck_assert_uint_eq(kaddr_frame(cases[i].addr), f);
		ck_assert_uint_eq(kaddr_value(cases[i].addr), f);
	}
	/* In no image (a BPF program): keyed, no module. */
	f = kaddr_frame(K_BPF);
	ck_assert_int_eq(VITALS_UFRAME_MODULE(f), -1);
	ck_assert_uint_eq(f, kaddr_hide(K_BPF) & VITALS_UFRAME_OFF_MASK);
	ck_assert_uint_ne(f, K_BPF & VITALS_UFRAME_OFF_MASK);
}
END_TEST

/* Arguments: user values as they are, kernel pointers keyed and stable. */
START_TEST(test_values)
{
	const uint64_t heap = 0xffff888012345678ULL;
	uint64_t h;

	load_fixture(kallsyms);
	ck_assert_uint_eq(kaddr_value(0), 0);
	ck_assert_uint_eq(kaddr_value(0x7ffd12345678ULL), 0x7ffd12345678ULL);
	h = kaddr_value(heap);
	ck_assert_uint_lt(h, 1ULL << 63);
	ck_assert_uint_eq(h, vitals_hash_keyed(1, 2, heap));
	ck_assert_uint_eq(kaddr_value(heap), h);
	ck_assert_uint_ne(kaddr_value(heap + 64), h);
	/* Another key, another value: none without the key. */
	kaddr_set_key(3, 4);
	ck_assert_uint_ne(kaddr_value(heap), h);
}
END_TEST

/* Addresses hidden (kptr_restrict): no image, every address keyed. */
START_TEST(test_hidden)
{
	uint64_t lo, hi, f;

	load_fixture("0000000000000000 T _text\n"
		     "0000000000000000 T _etext\n");
	kaddr_text(&lo, &hi);
	ck_assert_uint_eq(lo, 0);
	ck_assert_uint_eq(hi, 0);
	f = kaddr_frame(K_TEXT + 0x2010);
	ck_assert_int_eq(VITALS_UFRAME_MODULE(f), -1);
	ck_assert_uint_eq(
	    f, kaddr_hide(K_TEXT + 0x2010) & VITALS_UFRAME_OFF_MASK);
}
END_TEST

/*
 * An address in no image reads kallsyms again only once the modules file
 * lists another module: a BPF program's frames, which no read of
 * kallsyms places, read it every 10 s before (150 ms of CPU each).
 */
START_TEST(test_reload)
{
	static const char btrfs[] = "ffffffffc0400000 t btrfs_foo\t[btrfs]\n";
	const char *ks = testutil_path(testutil_dir, "kallsyms");
	const char *mods = testutil_path(testutil_dir, "modules");
	char syms[sizeof(kallsyms) + sizeof(btrfs)], both[256];
	uint64_t f;

	load_fixture(kallsyms);
	kaddr_reload_every(0);
	/* kallsyms has a module the modules file does not list: not read. */
	snprintf(syms, sizeof(syms), "%s%s", kallsyms, btrfs);
	testutil_write_file(ks, syms);
	f = kaddr_frame(0xffffffffc0400010ULL);
	ck_assert_int_eq(VITALS_UFRAME_MODULE(f), -1);
	/* The module loaded: read again, and the address is placed. */
	snprintf(both, sizeof(both),
	    "%sbtrfs 4096 0 - Live 0xffffffffc0400000\n", modules);
	testutil_write_file(mods, both);
	f = kaddr_frame(0xffffffffc0400010ULL);
	ck_assert_str_eq(frame_image(f), "[kernel:btrfs]");
	ck_assert_uint_eq(VITALS_UFRAME_OFFSET(f), 0x10);
	kaddr_reload_every(10 * 1000 * 1000 * 1000ULL);
}
END_TEST

START_TEST(test_key_file)
{
	const char *path = testutil_path(testutil_dir, KADDR_KEY_FILE);
	uint64_t k1[2], k2[2], k3[2];
	char err[256];
	struct stat st;

	ck_assert_int_eq(kaddr_init(testutil_dir, err, sizeof(err)), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	ck_assert_uint_eq(st.st_uid, geteuid());
	ck_assert_int_eq(st.st_size, 16);
	kaddr_key(k1);
	/* A restart reads the same key: keyed values do not change. */
	kaddr_set_key(7, 7);
	ck_assert_int_eq(kaddr_init(testutil_dir, err, sizeof(err)), 0);
	kaddr_key(k2);
	ck_assert_uint_eq(k1[0], k2[0]);
	ck_assert_uint_eq(k1[1], k2[1]);
	/* Readable by its group: the key may be known, a new one is made. */
	ck_assert_int_eq(chmod(path, 0640), 0);
	ck_assert_int_eq(kaddr_init(testutil_dir, err, sizeof(err)), 0);
	kaddr_key(k3);
	ck_assert(k3[0] != k1[0] || k3[1] != k1[1]);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
}
END_TEST

/* No data dir: a clear error, and a key of this process all the same. */
START_TEST(test_key_no_dir)
{
	uint64_t k[2];
	char err[256] = "";

	ck_assert_int_lt(kaddr_init("/proc/no/such/dir", err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "/proc/no/such"));
	kaddr_key(k);
	ck_assert(k[0] != 0 || k[1] != 0);
}
END_TEST

static Suite *
kaddr_suite(void)
{
	Suite *s = suite_create("kaddr");
	TCase *t = tcase_create("kaddr");

	tcase_add_checked_fixture(t, testutil_dir_setup, testutil_dir_teardown);
	tcase_add_test(t, test_siphash_vector);
	tcase_add_test(t, test_frames);
	tcase_add_test(t, test_values);
	tcase_add_test(t, test_hidden);
	tcase_add_test(t, test_reload);
	tcase_add_test(t, test_key_file);
	tcase_add_test(t, test_key_no_dir);
	suite_add_tcase(s, t);
	return s;
}

int
main(void)
{
	return testutil_run(kaddr_suite());
}
