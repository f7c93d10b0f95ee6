/* SPDX-License-Identifier: MIT */
/*
 * The arithmetic of the peer filter (filters/peer.c), apart so that
 * tests/check_peer.c can check it on known values: histograms over a
 * common range, the symmetric KL divergence, the majority divergence
 * and the k-of-(2k-1) window rule of Kasick et al. (FAST'10).  Not
 * installed.
 */
#ifndef VITALS_FILTER_PEER_H
#define VITALS_FILTER_PEER_H

#include <stdint.h>

/*
 * Pseudo-samples spread over the bins of a histogram so that no
 * probability is 0 (each bin gets PEER_PSEUDO / nbins): one sample's
 * worth, whatever the bins and window, so that thresholds do not depend
 * on them much.
 */
#define PEER_PSEUDO 1.0

/*
 * Histogram of x[0..n) over [lo, hi) in nbins bins (values outside are
 * clamped into the end bins), turned into probabilities p[0..nbins) with
 * PEER_PSEUDO / nbins added to each count, and their logarithms into logp.
 */
void peer_hist(const double *x, uint32_t n, double lo, double hi,
    uint32_t nbins, double *p, double *logp);

/*
 * Symmetric KL divergence D'(P||Q) = (D(P||Q) + D(Q||P)) / 2 of two
 * histograms from peer_hist: sum (p - q)(log p - log q) / 2.
 */
double peer_skl(const double *p, const double *logp, const double *q,
    const double *logq, uint32_t nbins);

/*
 * The divergence that decides "above the threshold with more than half
 * of its peers": the (floor(n/2) + 1)-th largest of d[0..n) (reordered).
 * A host is anomalous in a window when this exceeds the threshold.  0
 * when n is 0.
 */
double peer_majority(float *d, uint32_t n);

/*
 * Push one window's verdict (anomalous or not) into history bits h (bit 0
 * the newest) keeping the last 2k - 1; returns the new bits.
 */
uint32_t peer_push(uint32_t h, int anomalous, uint32_t k);

/* Whether at least k of the last 2k - 1 windows in h were anomalous. */
int peer_kofn(uint32_t h, uint32_t k);

/*
 * Moving average of x[0..n) in place over `width` points (trailing, the
 * first points over those there are); width <= 1 leaves x as is.
 */
void peer_smooth(double *x, uint32_t n, uint32_t width);

#endif /* VITALS_FILTER_PEER_H */
