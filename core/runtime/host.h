/* SPDX-License-Identifier: MIT */
/*
 * The host: runs plugin instances on one libevent loop, gives them the
 * SDK's services (timers, watches, findings, logging), closes an epoch at
 * each boundary (probes flush, filters run, outputs write), and handles
 * SIGTERM/SIGINT (write the partial epoch, exit) and SIGHUP (reload).
 */
#ifndef VITALS_HOST_H
#define VITALS_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "loader.h"

struct host;

/*
 * Create a host for configuration c (ownership passes to the host) using
 * the plugins of loader l (borrowed; must outlive the host).  Returns NULL
 * only when memory runs out (c is then freed).
 */
struct host *host_new(struct config *c, struct loader *l);

/* Stop every instance and free the host; accepts NULL. */
void host_free(struct host *h);

/*
 * Check a configuration against the plugins without starting anything:
 * names exist and sit in the right section, options have the right types
 * and bounds, and each plugin's check callback accepts their values; for
 * disabled plugins too; data_dir exists or can be made, and may be
 * written (as root: no one else may write it or a directory above it,
 * see safefile_dir_check).  Unless quiet, probes that cannot run here and a
 * file that would run no probe or no output are reported as warnings
 * (the daemon, which checks before it starts, reports them as it
 * starts).  Returns 0, or -EINVAL with "FILE:LINE:COL: message" in err
 * ("FILE:LINE:COL: plugin 'NAME': reason" at the plugin's entry when its
 * check refuses).
 */
int host_check(const struct config *c, struct loader *l, int quiet, char *err,
    size_t errlen);

/*
 * Start every enabled instance of the configuration.  A probe that is
 * unavailable here is skipped with a warning; any other failure stops
 * the instances started so far and returns a negative errno with the
 * reason in err.
 */
int host_start(struct host *h, char *err, size_t errlen);

/*
 * Run the loop until SIGTERM/SIGINT, or until max_epochs epochs have been
 * closed (0 = no limit).  Returns 0 on a clean stop.
 */
int host_run(struct host *h, uint64_t max_epochs);

/* Re-read the configuration file and apply it; 0 or a negative errno. */
int host_reload(struct host *h);

#endif /* VITALS_HOST_H */
