/* SPDX-License-Identifier: MIT */
/*
 * A BPF probe run from its descriptor (struct vitals_bpf_probe,
 * <vitals/bpf.h>): the available, check, init, fini and flush callbacks
 * every tracepoint probe used to carry its own copy of, around the hooks
 * for what is the probe's own.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include <vitals/bpf.h>

/* A config block that is the common options alone. */
struct bpf_probe_config {
	struct vitals_bpf_opts bpf;
};

const struct vitals_option vitals_bpf_options[] = {
	VITALS_BPF_OPTIONS(struct bpf_probe_config, bpf),
	{ NULL, 0, 0, NULL, NULL, 0, 0 }
};

/* Whether descriptor p, as its probe was built, has member m. */
#define BPF_PROBE_HAS(p, m) \
	((p)->size >= offsetof(struct vitals_bpf_probe, m) + sizeof((p)->m))

/* The hook m of p, or NULL if p was built without it or leaves it out. */
#define BPF_PROBE_HOOK(p, m) (BPF_PROBE_HAS(p, m) ? (p)->m : NULL)

int
vitals_bpf_probe_available(
    const struct vitals_bpf_probe *p, char *why, size_t len)
{
	int (*available)(char *, size_t) = BPF_PROBE_HOOK(p, available);
	int r;

	if ((r = vitals_bpf_available(p->tracepoints, why, len)) < 0)
		return r;
	return available != NULL ? available(why, len) : 0;
}

int
vitals_bpf_probe_check(
    const struct vitals_bpf_probe *p, const void *config, char *why, size_t len)
{
	int (*check)(const void *, char *, size_t) = BPF_PROBE_HOOK(p, check);
	int r;

	if (check != NULL && (r = check(config, why, len)) != 0)
		return r;
	return vitals_bpf_opts_check(config, why, len);
}

/* The instance's spec: the descriptor's vitals, the common options. */
static void
bpf_probe_spec(struct vitals_bpf_instance *in)
{
	const struct vitals_bpf_probe *p = in->probe;
	struct vitals_bpf_spec *s = &in->spec;
	uint32_t i;

	for (i = 0; i < VITALS_BPF_MAX_VITALS && p->vitals[i].name != NULL;
	     i++) {
		s->vitals[i] = p->vitals[i].name;
		s->units[i] = p->vitals[i].unit;
	}
	s->nvitals = i;
	vitals_bpf_spec_opts(s, in->config);
	s->fixup = BPF_PROBE_HOOK(p, fixup);
	s->fixup_arg = in;
}

/* Open the skeleton, let the probe set it up, and size the maps. */
static int
bpf_probe_prepare(struct vitals_bpf_instance *in)
{
	const struct vitals_bpf_probe *p = in->probe;
	int (*setup)(struct vitals_bpf_instance *) = BPF_PROBE_HOOK(p, setup);
	uint32_t i;
	int r;

	if ((in->skel = p->skel.open()) == NULL) {
		r = errno != 0 ? -errno : -ENOMEM;
		vitals_error(
		    in->ctx, "cannot open the BPF object: %s", strerror(-r));
		return r;
	}
	if (setup != NULL && (r = setup(in)) < 0)
		return r;
	r = vitals_bpf_prepare(
	    in->ctx, p->skel.object(in->skel), &in->spec, &in->bpf);
	if (r < 0)
		return r;
	for (i = 0; i < VITALS_BPF_MAX_PARAMS; i++)
		vitals_bpf_set_param(in->bpf, i, in->param[i]);
	return 0;
}

/* Load the programs, start the layer, attach them. */
static int
bpf_probe_start(struct vitals_bpf_instance *in)
{
	const struct vitals_bpf_probe *p = in->probe;
	int (*attach)(struct vitals_bpf_instance *) = BPF_PROBE_HOOK(p, attach);
	int r;

	if ((r = p->skel.load(in->skel)) < 0) {
		vitals_error(
		    in->ctx, "cannot load the BPF programs: %s", strerror(-r));
		return r;
	}
	if ((r = vitals_bpf_start(in->bpf)) < 0 ||
	    (r = vitals_bpf_attach(in->bpf)) < 0)
		return r;
	return attach != NULL ? attach(in) : 0;
}

int
vitals_bpf_probe_init(const struct vitals_bpf_probe *p, struct vitals_ctx *ctx,
    const void *config, void **state)
{
	struct vitals_bpf_instance *in;
	char why[512] = "";
	int r;

	if ((r = vitals_bpf_probe_check(p, config, why, sizeof(why))) != 0) {
		vitals_error(ctx, "%s", why[0] != '\0' ? why : strerror(-r));
		return r;
	}
	if ((in = calloc(1, sizeof(*in))) == NULL)
		return -ENOMEM;
	in->probe = p;
	in->ctx = ctx;
	in->config = config;
	if (p->state_size > 0 &&
	    (in->priv = calloc(1, p->state_size)) == NULL) {
		free(in);
		return -ENOMEM;
	}
	bpf_probe_spec(in);
	if ((r = bpf_probe_prepare(in)) < 0 || (r = bpf_probe_start(in)) < 0) {
		vitals_bpf_probe_fini(in);
		return r;
	}
	*state = in;
	return 0;
}

void
vitals_bpf_probe_fini(void *state)
{
	struct vitals_bpf_instance *in = state;
	void (*fini)(struct vitals_bpf_instance *);

	if (in == NULL)
		return;
	if ((fini = BPF_PROBE_HOOK(in->probe, fini)) != NULL)
		fini(in);
	vitals_bpf_free(in->bpf);
	in->probe->skel.destroy(in->skel);
	free(in->priv);
	free(in);
}

int
vitals_bpf_probe_flush(void *state)
{
	struct vitals_bpf_instance *in = state;

	return vitals_bpf_flush(in->bpf);
}
