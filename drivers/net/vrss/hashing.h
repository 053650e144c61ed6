/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vrss: receive hashing's lifecycle (hashing.c): rxhash on and off, a new
 * key or new hash fields, and the drain that makes them wait for every
 * bucket to come home.  The polls' side is inline.
 */
#ifndef _VRSS_HASHING_H
#define _VRSS_HASHING_H

#include "vrss.h"

static inline bool vrss_hashing_draining(enum vrss_hashing_state state)
{
	return state == VRSS_HASHING_DRAIN_ON || state == VRSS_HASHING_DRAIN_OFF;
}

/*
 * A ring's head moved, or parked frames went up: a drain, if one waits
 * for the buckets to come home, tries again now.  Once per try: the
 * polls of a busy ring would otherwise requeue the work (a timer and the
 * pool's lock) for every batch they hand up.  The caller ordered what it
 * changed before this, with a full barrier; the try clears hs.kicked
 * before it reads, with one (vrss_hashing_step()): a wake that sees a try
 * still to come is seen by it.
 */
static inline void vrss_hashing_wake(struct vrss_dev *vd)
{
	if (likely(!vrss_hashing_draining(READ_ONCE(vd->hs.state))) ||
	    READ_ONCE(vd->hs.kicked))
		return;
	if (!xchg(&vd->hs.kicked, true))
		mod_delayed_work(system_highpri_wq, &vd->hs.work, 0);
}

/* What ethtool changes that hashes frames: NULL or -1 leave it as it is. */
struct vrss_hashing_change {
	const u32 *indir;	/* the user's table (needs no drain) */
	const u8 *key;
	int ports;		/* VRSS_FLOW_* bits hashing ports (-N) */
};

void vrss_hashing_init(struct vrss_dev *vd);
void vrss_hashing_uninit(struct vrss_dev *vd);
void vrss_hashing_open(struct vrss_dev *vd);
void vrss_hashing_stop(struct vrss_dev *vd);
int vrss_hashing_set(struct vrss_dev *vd, bool on);
int vrss_hashing_change(struct vrss_dev *vd, const struct vrss_hashing_change *c);

#endif /* _VRSS_HASHING_H */
