/* SPDX-License-Identifier: MIT */
/*
 * The service manager's readiness protocol (sd_notify(3)), without
 * libsystemd: one datagram to $NOTIFY_SOCKET per state change, so a
 * Type=notify unit is started once the probes are attached and the loop
 * runs, and sees reloads and the stop.
 */
#ifndef VITALS_NOTIFY_H
#define VITALS_NOTIFY_H

/*
 * Send state ("READY=1", "RELOADING=1", "STOPPING=1", "STATUS=...",
 * newline-separated) to $NOTIFY_SOCKET.  Nothing without that variable.
 * Returns 1 when sent, 0 when there is no socket to send to, or a
 * negative errno.
 */
int notify_send(const char *state);

#endif /* VITALS_NOTIFY_H */
