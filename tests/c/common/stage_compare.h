/*
 * stage_compare.h - compares two ring stages (cluster.h) output by output.
 *
 * Used by the proof hosts (tests/c/standin, tests/c/dlopen) to show that two
 * implementations of the four entry points, run over the same cluster,
 * produced the same results and return codes.
 */
#ifndef NCCOMRING_TESTS_STAGE_COMPARE_H
#define NCCOMRING_TESTS_STAGE_COMPARE_H

#include "cluster.h"

/* Compares a and b (two stage_run results over the same cluster): the
 * failure (result code and which call on which rank) when either failed;
 * otherwise, for every rank, its 960-byte fragment, every byte of its
 * ncclComm except the userRanks/devUserRanks pointers (so prev/next of all 32
 * channels, nChannels, nNodes, node, kangaRing, ...), userRanks of every
 * channel (nRanks ints, or both NULL), the nChannels/nNodes out-parameters,
 * its nodesFirstRank array and its netDev of every channel. Prints each
 * difference (at most 20) to stderr prefixed with what, and returns the
 * number of differences. */
int stage_compare(const char *what, const char *nameA, const struct stage *a, const char *nameB,
                  const struct stage *b);

#endif
