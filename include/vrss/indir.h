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

/*
 * The table in effect when only queues 0 .. @width - 1 may be used: the
 * user's table with the buckets of every queue from @width up handed, the
 * highest queue first, one by one to the least loaded queue the table
 * uses below it (the primary queue when it uses none).  Built this way,
 * the table at width w differs from the one at w + 1 only in the buckets
 * of queue w, so growing or shrinking by one queue moves only the buckets
 * of the queue that joins or leaves and every other flow stays put, and
 * the default table stays balanced at every width.
 */
static inline void vrss_indir_effective(u32 *eff, const u32 *indir,
					unsigned int width)
{
	u32 ids[VRSS_INDIR_SIZE];	/* queues the table uses, ascending */
	u8 cnt[VRSS_INDIR_SIZE];	/* buckets on each of them */
	unsigned int nids = 0, i, j, k, best;

	for (i = 0; i < VRSS_INDIR_SIZE; i++) {
		eff[i] = indir[i];
		for (j = 0; j < nids && ids[j] < indir[i]; j++)
			;
		if (j < nids && ids[j] == indir[i]) {
			cnt[j]++;
			continue;
		}
		for (k = nids++; k > j; k--) {
			ids[k] = ids[k - 1];
			cnt[k] = cnt[k - 1];
		}
		ids[j] = indir[i];
		cnt[j] = 1;
	}

	if (!width)
		width = 1;
	for (k = nids; k-- > 0 && ids[k] >= width; ) {
		for (i = 0; i < VRSS_INDIR_SIZE; i++) {
			if (eff[i] != ids[k])
				continue;
			if (!k) {
				eff[i] = 0;
				continue;
			}
			for (best = 0, j = 1; j < k; j++)
				if (cnt[j] < cnt[best])
					best = j;
			eff[i] = ids[best];
			cnt[best]++;
		}
	}
}

#endif /* _VRSS_INDIR_H */
