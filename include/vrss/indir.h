/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RSS indirection table: 128 buckets, each naming a queue.  Pure C,
 * shared by the module and the host-side unit tests.
 */
#ifndef _VRSS_INDIR_H
#define _VRSS_INDIR_H

#include <linux/types.h>

/* What Windows and most NICs use; a power of two, so the low bits index. */
#define VRSS_INDIR_SIZE	128

static inline unsigned int vrss_indir_bucket(u32 hash)
{
	return hash & (VRSS_INDIR_SIZE - 1);
}

/* Round robin over @n queues, as ethtool_rxfh_indir_default() gives. */
static inline void vrss_indir_fill_default(u32 *indir, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < VRSS_INDIR_SIZE; i++)
		indir[i] = i % n;
}

/* The highest queue a table names: it needs that many queues plus one. */
static inline u32 vrss_indir_max(const u32 *indir)
{
	u32 max = 0;
	unsigned int i;

	for (i = 0; i < VRSS_INDIR_SIZE; i++)
		if (indir[i] > max)
			max = indir[i];
	return max;
}

#endif /* _VRSS_INDIR_H */
