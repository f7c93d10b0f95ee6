/* SPDX-License-Identifier: MIT */
/*
 * tracefs lookups for the BPF layer: find (or mount) tracefs, test that a
 * tracepoint exists, and read field offsets from its format file so BPF
 * programs need no kernel headers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracefs.h"

static const char *const tracefs_dirs[] = { "/sys/kernel/tracing",
	"/sys/kernel/debug/tracing", NULL };

static int
tracefs_populated(const char *dir)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/events", dir);
	return access(p, F_OK) == 0;
}

const char *
tracefs_dir(void)
{
	int i;

	for (i = 0; tracefs_dirs[i] != NULL; i++)
		if (tracefs_populated(tracefs_dirs[i]))
			return tracefs_dirs[i];
	if (mount("nodev", tracefs_dirs[0], "tracefs", 0, NULL) == 0 &&
	    tracefs_populated(tracefs_dirs[0]))
		return tracefs_dirs[0];
	if (errno == 0)
		errno = ENOENT;
	return NULL;
}

int
tracefs_has(const char *category, const char *event)
{
	const char *dir;
	char p[512];

	if ((dir = tracefs_dir()) == NULL)
		return 0;
	snprintf(p, sizeof(p), "%s/events/%s/%s/id", dir, category, event);
	return access(p, F_OK) == 0;
}

/* Parse one "field:TYPE NAME[N];\toffset:O;\tsize:S;" line for NAME. */
static int
tracefs_line(const char *line, const char *field, uint32_t *off, uint32_t *size)
{
	const char *semi, *end, *name, *o, *s;
	size_t flen = strlen(field);

	if ((line = strstr(line, "field:")) == NULL ||
	    (semi = strchr(line, ';')) == NULL)
		return 0;
	end = semi;
	for (name = line; name < semi; name++)
		if (*name == '[') {
			end = name;
			break;
		}
	name = end;
	while (name > line && name[-1] != ' ' && name[-1] != '\t' &&
	    name[-1] != '*')
		name--;
	if ((size_t)(end - name) != flen || strncmp(name, field, flen) != 0)
		return 0;
	if ((o = strstr(semi, "offset:")) == NULL ||
	    (s = strstr(semi, "size:")) == NULL)
		return 0;
	*off = (uint32_t)strtoul(o + 7, NULL, 10);
	*size = (uint32_t)strtoul(s + 5, NULL, 10);
	return 1;
}

int
tracefs_field(const char *category, const char *event, const char *field,
    uint32_t *off, uint32_t *size)
{
	const char *dir;
	char p[512], line[512];
	FILE *f;
	int found = 0;

	if ((dir = tracefs_dir()) == NULL)
		return -errno;
	snprintf(p, sizeof(p), "%s/events/%s/%s/format", dir, category, event);
	if ((f = fopen(p, "r")) == NULL)
		return errno == ENOENT ? -ENOENT : -errno;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = tracefs_line(line, field, off, size);
	fclose(f);
	return found ? 0 : -ENOENT;
}
