/* SPDX-License-Identifier: MIT */
/*
 * The user-space half of the in-kernel sketch, for probes whose BPF
 * programs count events with <vitals/probe.bpf.h>.  A tracepoint probe is
 * declared with VITALS_BPF_PROBE() (at the end): its vitals, tracepoints,
 * skeleton, options and hooks for what is its own, and the core runs it.
 * Underneath (and for a probe that drives itself): the probe opens its BPF
 * object (e.g. from a bpftool skeleton), hands it to vitals_bpf_prepare()
 * before loading, then calls vitals_bpf_load() and vitals_bpf_attach(),
 * and calls vitals_bpf_flush() from its flush callback.  The layer sizes
 * the maps from the sketch configuration, writes t and the filters,
 * drains the ring buffer of sampled events into the core's sample store,
 * reads and clears the HCA half of the closing epoch, and reports the
 * programs' kernel run time as collector CPU.
 */
#ifndef VITALS_BPF_H
#define VITALS_BPF_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <vitals/vitals.h>
#include <vitals/bpf_shared.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bpf_object;
struct vitals_bpf; /* one BPF object's sketches; owned by the probe */

/*
 * Called for each sampled event before the core keeps it, so a probe can
 * turn the record's raw fields into the event it stores (e.g. derive a
 * label from the stack).  Return 0 to keep the event, non-zero to drop it.
 */
typedef int (*vitals_bpf_fixup_fn)(
    void *arg, const struct vitals_bpf_rec *r, struct vitals_event *ev);

/* What a probe asks of the layer; strings are borrowed for the call. */
struct vitals_bpf_spec {
	uint32_t
	    nvitals; /* vitals counted by the object, <= VITALS_BPF_MAX_VITALS */
	uint32_t pid; /* count only this process; 0 = all */
	const char *vitals
	    [VITALS_BPF_MAX_VITALS]; /* vital names, index = the programs' vital */
	const char *units[VITALS_BPF_MAX_VITALS]; /* their weight units */
	const char *comm; /* count only comms with this prefix; NULL = all */
	const char
	    *cgroup; /* count only this cgroup v2 directory; NULL = all */
	uint64_t
	    ringbuf_bytes; /* ring buffer size, a power of two; 0 = 64 KiB */
	uint32_t stack_depth; /* frames kept per side; 0 = the sketch's */
	/*
	 * Bit i set: args[i] may hold a kernel address, stored as a kernel
	 * frame is (text: an offset in its image) or keyed, never raw.
	 * Kernel frames are always; labels are the programs' to keep free
	 * of raw addresses (vitals_bpf_ktext, vitals_bpf_khide).
	 */
	uint32_t kargs;
	vitals_bpf_fixup_fn fixup; /* or NULL */
	void *fixup_arg;
};

/* The options every BPF probe offers; embed as a member of its config. */
struct vitals_bpf_opts {
	int64_t pid; /* count only this process; 0 = all */
	char *comm; /* count only comms with this prefix; NULL = all */
	char *cgroup; /* count only this cgroup v2 directory; NULL = all */
	uint64_t ringbuf; /* ring buffer bytes */
};

/* Option table entries for a struct vitals_bpf_opts member of TYPE. */
#define VITALS_BPF_OPTIONS(TYPE, M) \
	{ "pid", VITALS_OPT_INT, offsetof(TYPE, M.pid), "0", \
		"count only this process id (0: every process)", 0, 4194304 }, \
	    { "comm", VITALS_OPT_STRING, offsetof(TYPE, M.comm), NULL, \
		    "count only threads whose name starts with this", 0, 0 }, \
	    { "cgroup", VITALS_OPT_STRING, offsetof(TYPE, M.cgroup), NULL, \
		    "count only this cgroup v2 directory (e.g. " \
		    "/sys/fs/cgroup/system.slice/ssh.service)", \
		    0, 0 }, \
	{ \
		"ringbuf", VITALS_OPT_SIZE, offsetof(TYPE, M.ringbuf), "64K", \
		    "ring buffer for sampled events (a power of two)", 4096, \
		    1073741824 \
	}

/*
 * Check the common options' values beyond the table's bounds: the ring
 * buffer must be a power of two (0 stands for the default).  The cgroup
 * is looked up only when the probe starts: it may not exist yet.
 * Returns 0, or -EINVAL with the reason in why.
 */
static inline int
vitals_bpf_opts_check(const struct vitals_bpf_opts *o, char *why, size_t len)
{
	if (o->ringbuf != 0 &&
	    ((o->ringbuf & (o->ringbuf - 1)) != 0 || o->ringbuf < 4096)) {
		snprintf(why, len,
		    "ring buffer size %llu: not a power of two "
		    ">= 4096",
		    (unsigned long long)o->ringbuf);
		return -EINVAL;
	}
	return 0;
}

/*
 * The check callback (struct vitals_plugin.check) of a probe whose config
 * block starts with its struct vitals_bpf_opts and holds nothing else to
 * check.
 */
static inline int
vitals_bpf_check(const void *config, char *why, size_t len)
{
	return vitals_bpf_opts_check(
	    (const struct vitals_bpf_opts *)config, why, len);
}

/* Fill the filter fields of a spec from the common options. */
static inline void
vitals_bpf_spec_opts(struct vitals_bpf_spec *s, const struct vitals_bpf_opts *o)
{
	s->pid = (uint32_t)o->pid;
	s->comm = o->comm;
	s->cgroup = o->cgroup;
	s->ringbuf_bytes = o->ringbuf;
}

/*
 * Open the vitals of spec for ctx and size the object's vitals maps
 * (HCA, first-sighting bits, ring buffer) before it is loaded.  Returns 0
 * and sets *out (free with vitals_bpf_free), or a negative errno after
 * vitals_error().
 */
int vitals_bpf_prepare(struct vitals_ctx *ctx, struct bpf_object *obj,
    const struct vitals_bpf_spec *spec, struct vitals_bpf **out);

/*
 * Resolve tracepoint field `field` of category:event from the tracefs
 * format file into slot i of the programs' field table
 * (vitals_bpf_field() on the BPF side).  Returns 0, -ENOENT if the
 * tracepoint or field does not exist, or another negative errno.
 */
int vitals_bpf_set_field(struct vitals_bpf *b, uint32_t i, const char *category,
    const char *event, const char *field);

/* Set probe-specific parameter i (cfg param[i]) for the programs. */
void vitals_bpf_set_param(struct vitals_bpf *b, uint32_t i, uint64_t value);

/*
 * After the object is loaded (and usually attached): map the sketch,
 * write the parameters and start draining samples.  Returns 0 or a
 * negative errno after vitals_error().
 */
int vitals_bpf_start(struct vitals_bpf *b);

/*
 * Load the prepared object's programs and vitals_bpf_start(): what a probe
 * does between vitals_bpf_prepare() and attaching.  Returns 0 or a
 * negative errno after vitals_error().
 */
int vitals_bpf_load(struct vitals_bpf *b);

/*
 * Attach every loaded tracepoint program of the object (tp, raw_tp,
 * tp_btf); perf_event programs are left to the probe, which knows the
 * events.  The links are destroyed by vitals_bpf_free().  Returns 0 or a
 * negative errno after vitals_error() naming the program's section.
 */
int vitals_bpf_attach(struct vitals_bpf *b);

/*
 * At the epoch boundary (the probe's flush): drain samples, flip the live
 * HCA half, hand the closed half to the core and clear it, and add the
 * programs' kernel run time.  Returns 0 or a negative errno.
 */
int vitals_bpf_flush(struct vitals_bpf *b);

/* Stop draining and free the layer's state (not the object); accepts NULL. */
void vitals_bpf_free(struct vitals_bpf *b);

/*
 * Whether BPF probes can run here: privilege (root, or CAP_BPF with
 * CAP_PERFMON), kernel BTF, tracefs (mounted if need be), and each
 * "category:event" tracepoint in the NULL-terminated list.  Returns 0, or
 * a negative errno with the reason in why.
 */
int vitals_bpf_available(const char *const *tracepoints, char *why, size_t len);

/*
 * Address range [*lo, *hi) of kernel function `name` from /proc/kallsyms,
 * e.g. a tracepoint's __traceiter_ function: it heads the kernel stacks a
 * program takes while another tracer shares the tracepoint, so probes can
 * drop that frame.  Returns 0, or -ENOENT if absent or if addresses are
 * hidden (kptr_restrict).
 */
int vitals_bpf_ksym_range(const char *name, uint64_t *lo, uint64_t *hi);

/*
 * Open one perf event per online CPU for a sampling probe: software
 * cpu-clock when hw is 0, or the hardware event `config` (PERF_TYPE_HARDWARE)
 * when hw is 1, sampling at freq_hz.  fds gets one descriptor per CPU, -1
 * for offline ones.  Returns the number of CPUs (entries in fds, at most
 * max), or a negative errno (-ENOENT: no such event, e.g. no PMU).
 */
int vitals_perf_open(
    int hw, uint64_t config, uint64_t freq_hz, int *fds, int max);

/* ---- A tracepoint probe from a descriptor ---- */

/* Tracepoints a descriptor may list. */
#define VITALS_BPF_MAX_TRACEPOINTS 8

/*
 * A bpftool skeleton as the core drives it, filled by VITALS_BPF_PROBE()
 * from NAME.skel.h's NAME_bpf__open(), __load() and __destroy().  The
 * core attaches the programs itself (vitals_bpf_attach()), to name the
 * one that fails and to leave perf_event programs to the probe.
 */
struct vitals_bpf_skeleton {
	void *(*open)(void); /* the skeleton, or NULL with errno set */
	int (*load)(void *skel); /* load it: 0 or a negative errno */
	void (*destroy)(void *skel); /* free it and its object; accepts NULL */
	struct bpf_object *(*object)(void *skel); /* its BPF object */
};

/* One vital a probe's programs count, at their index in the descriptor. */
struct vitals_bpf_vital {
	const char *name; /* the vital, e.g. "syscall" */
	const char *unit; /* its weight's unit, e.g. "calls" */
};

struct vitals_bpf_instance;

/*
 * A BPF probe, declared: what the core needs to run it, and hooks for
 * what is the probe's own.  Static, filled by VITALS_BPF_PROBE(); fields
 * are only appended (size says which the probe was built with).  Hooks
 * that return int return 0 or a negative errno, after vitals_error() when
 * they have an instance.
 */
struct vitals_bpf_probe {
	uint32_t size; /* sizeof(struct vitals_bpf_probe) built with */
	uint32_t state_size; /* bytes of instance->priv, zeroed; 0 = none */
	/* The vitals, by the programs' index; a NULL name ends the list. */
	struct vitals_bpf_vital vitals[VITALS_BPF_MAX_VITALS];
	/* "category:event" tracepoints the probe needs; NULL ends the list. */
	const char *tracepoints[VITALS_BPF_MAX_TRACEPOINTS + 1];
	struct vitals_bpf_skeleton skel;
	/* The probe's own options' values (plugin check); the common after. */
	int (*check)(const void *config, char *why, size_t len);
	/* Whether it can run here, beyond BPF itself and the tracepoints. */
	int (*available)(char *why, size_t len);
	/*
	 * Opened, before the maps are sized and the object is loaded: choose
	 * vitals (instance->spec), programs (bpf_program__set_autoload), set
	 * param[] and read-only data.
	 */
	int (*setup)(struct vitals_bpf_instance *p);
	/* Loaded, tracepoint programs attached: attach others (perf events). */
	int (*attach)(struct vitals_bpf_instance *p);
	/* Free what setup and attach took, first; also after a failed init. */
	void (*fini)(struct vitals_bpf_instance *p);
	/* Each sample, with the instance as arg (see vitals_bpf_fixup_fn). */
	vitals_bpf_fixup_fn fixup;
};

/*
 * One running probe, as the core hands it to the hooks; owned by the core,
 * valid from setup until fini.  Fields are only appended.
 */
struct vitals_bpf_instance {
	const struct vitals_bpf_probe *probe; /* its descriptor */
	struct vitals_ctx *ctx; /* for vitals_error() and the like */
	const void *config; /* starts with struct vitals_bpf_opts */
	void *skel; /* the opened skeleton: struct NAME_bpf * */
	struct vitals_bpf *bpf; /* the layer, from after setup */
	struct vitals_bpf_spec spec; /* vitals and filters; setup may edit */
	uint64_t param[VITALS_BPF_MAX_PARAMS]; /* the programs' cfg param[] */
	void *priv; /* the probe's state_size bytes */
};

/*
 * The options every BPF probe takes, alone: the table of a probe whose
 * config block is a struct vitals_bpf_opts (one with options of its own
 * starts its table with VITALS_BPF_OPTIONS()).
 */
extern const struct vitals_option vitals_bpf_options[];

/*
 * The plugin callbacks of a descriptor-built probe (VITALS_BPF_PROBE()
 * wires them).  available: BPF (vitals_bpf_available) with the
 * descriptor's tracepoints, then its hook.  check: its hook, then the
 * common options.  init: check, open the skeleton, setup, size the maps,
 * write param[], load, attach the tracepoint programs, then the attach
 * hook; *state is the instance.  fini (accepts NULL) and flush take it.
 */
int vitals_bpf_probe_available(
    const struct vitals_bpf_probe *p, char *why, size_t len);
int vitals_bpf_probe_check(const struct vitals_bpf_probe *p, const void *config,
    char *why, size_t len);
int vitals_bpf_probe_init(const struct vitals_bpf_probe *p,
    struct vitals_ctx *ctx, const void *config, void **state);
void vitals_bpf_probe_fini(void *state);
int vitals_bpf_probe_flush(void *state);

/*
 * The plugin descriptor `vitals_plugin` of a BPF probe named NAME (the
 * plugin, a string) whose skeleton is SKEL.skel.h (SKEL_bpf__*), of
 * version VERSION and description DESC, with config block CONFIG (a type
 * starting with struct vitals_bpf_opts) and option table OPTIONS; the
 * rest are designated initializers of its struct vitals_bpf_probe.  It
 * defines static SKEL_vitals_* functions and the descriptor
 * SKEL_vitals_probe.
 */
#define VITALS_BPF_PROBE_NAMED( \
    NAME, SKEL, VERSION, DESC, CONFIG, OPTIONS, ...) \
	static void *SKEL##_vitals_open(void) \
	{ \
		return SKEL##_bpf__open(); \
	} \
	static int SKEL##_vitals_load(void *s) \
	{ \
		return SKEL##_bpf__load((struct SKEL##_bpf *)s); \
	} \
	static void SKEL##_vitals_destroy(void *s) \
	{ \
		SKEL##_bpf__destroy((struct SKEL##_bpf *)s); \
	} \
	static struct bpf_object *SKEL##_vitals_object(void *s) \
	{ \
		return ((struct SKEL##_bpf *)s)->obj; \
	} \
	static const struct vitals_bpf_probe SKEL##_vitals_probe = { \
		.size = sizeof(struct vitals_bpf_probe), \
		.skel = { SKEL##_vitals_open, SKEL##_vitals_load, \
		    SKEL##_vitals_destroy, SKEL##_vitals_object }, \
		__VA_ARGS__ \
	}; \
	static int SKEL##_vitals_available(char *why, size_t len) \
	{ \
		return vitals_bpf_probe_available( \
		    &SKEL##_vitals_probe, why, len); \
	} \
	static int SKEL##_vitals_init( \
	    struct vitals_ctx *ctx, const void *config, void **state) \
	{ \
		return vitals_bpf_probe_init( \
		    &SKEL##_vitals_probe, ctx, config, state); \
	} \
	static int SKEL##_vitals_check( \
	    const void *config, char *why, size_t len) \
	{ \
		return vitals_bpf_probe_check( \
		    &SKEL##_vitals_probe, config, why, len); \
	} \
	_Static_assert(sizeof(CONFIG) >= sizeof(struct vitals_bpf_opts), \
	    "a BPF probe's config block starts with struct vitals_bpf_opts"); \
	const struct vitals_plugin vitals_plugin = { \
		.abi_major = VITALS_ABI_MAJOR, \
		.abi_minor = VITALS_ABI_MINOR, \
		.kind = VITALS_PLUGIN_PROBE, \
		.config_size = sizeof(CONFIG), \
		.name = NAME, \
		.version = VERSION, \
		.description = DESC, \
		.options = OPTIONS, \
		.available = SKEL##_vitals_available, \
		.init = SKEL##_vitals_init, \
		.fini = vitals_bpf_probe_fini, \
		.flush = vitals_bpf_probe_flush, \
		.check = SKEL##_vitals_check, \
	}

/* VITALS_BPF_PROBE_NAMED() of plugin NAME with skeleton NAME.skel.h. */
#define VITALS_BPF_PROBE(NAME, VERSION, DESC, CONFIG, OPTIONS, ...) \
	VITALS_BPF_PROBE_NAMED( \
	    #NAME, NAME, VERSION, DESC, CONFIG, OPTIONS, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* VITALS_BPF_H */
