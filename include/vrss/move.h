/* SPDX-License-Identifier: GPL-2.0 */
/*
 * In-order bucket moves: the pure parts of the protocol move.c runs (see
 * there, and Documentation/networking/vrss.rst, "In-order moves").
 * Pure C, shared by the module and the host-side unit tests.
 *
 * A bucket's state is one 64-bit word:
 *
 *   queue (bits 32-47), tail (bits 0-31), no flag
 *	its frames go to that queue.  0 is the primary (inline); on a spread
 *	queue, tail is that ring's position just after the bucket's last
 *	frame.
 *   PENDING | queue
 *	leaving the primary for that queue; bits 0-31 count the frames that
 *	went inline meanwhile.
 *   PARKED | queue | tail
 *	leaving that (spread) queue for the one the table names; its new
 *	frames wait on a list of its own until the ring has passed tail.
 *   DELIVERING | cpu
 *	its parked frames are going up inline on that CPU; then it is on
 *	the primary (state 0).
 *
 * Ring positions are u32 that count frames and wrap: a ring has passed a
 * bucket's tail when its head is not behind it, which a signed difference
 * tells only while the two are less than 2^31 apart.  A bucket that stays
 * idle on a busy ring would fall behind that far (2^31 frames of other
 * buckets: under an hour at a million frames a second) and then look
 * undrained forever, so the load work refreshes idle buckets' tails every
 * interval (vrss_bucket_refresh()): none is older than an interval.
 */
#ifndef _VRSS_MOVE_H
#define _VRSS_MOVE_H

#include <linux/types.h>

#define VRSS_BUCKET_PENDING	((u64)1 << 63)
#define VRSS_BUCKET_PARKED	((u64)1 << 62)
#define VRSS_BUCKET_DELIVERING	((u64)1 << 61)
#define VRSS_BUCKET_FLAGS	(VRSS_BUCKET_PENDING | VRSS_BUCKET_PARKED | \
				 VRSS_BUCKET_DELIVERING)

static inline u64 vrss_bucket_pack(u32 queue, u32 tail)
{
	return (u64)queue << 32 | tail;
}

static inline u32 vrss_bucket_queue(u64 state)
{
	return (state >> 32) & 0xffff;
}

static inline u32 vrss_bucket_tail(u64 state)
{
	return (u32)state;
}

/* Has a ring whose consumer published @head passed position @tail? */
static inline bool vrss_ring_passed(u32 head, u32 tail)
{
	return (s32)(head - tail) >= 0;
}

/*
 * May bucket state @state, on (or parked leaving) a spread queue whose
 * head is @head, leave it?  Every frame the bucket put on the ring must
 * be in the stack.
 */
static inline bool vrss_bucket_drained(u64 state, u32 head)
{
	return vrss_ring_passed(head, vrss_bucket_tail(state));
}

/*
 * An idle bucket on a spread queue whose head is @head: once the ring
 * has passed its tail, head will do as its tail (every frame it sent is
 * before either), which keeps it within an interval's frames of the
 * ring's positions.  Any other state (moving, inline, not yet drained:
 * frames are in flight, so it is not far behind) stays as it is.
 */
static inline u64 vrss_bucket_refresh(u64 state, u32 head)
{
	if (state & VRSS_BUCKET_FLAGS || !vrss_bucket_queue(state) ||
	    !vrss_bucket_drained(state, head))
		return state;
	return vrss_bucket_pack(vrss_bucket_queue(state), head);
}

#endif /* _VRSS_MOVE_H */
