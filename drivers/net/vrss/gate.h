/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vrss: the load gate (gate.c).  Its per-frame side is inline: every
 * hashed frame reads it (rx.c).
 */
#ifndef _VRSS_GATE_H
#define _VRSS_GATE_H

#include "vrss.h"

/*
 * A waiting gate woken, once, on this CPU: by a frame (rx.c), a bucket
 * that starts parking (move.c: the work's tick is the backstop of parked
 * frames) or a reconfiguration.  gate.arm is set only while it waits.
 */
static inline void vrss_gate_wake(struct vrss_dev *vd)
{
	if (atomic_read(&vd->gate.arm) != VRSS_GATE_ARM_NONE &&
	    atomic_xchg(&vd->gate.arm, VRSS_GATE_ARM_NONE) != VRSS_GATE_ARM_NONE)
		queue_work(system_highpri_wq, &vd->gate.kick);
}

/*
 * @due is still ahead, by no more than the longest interval.  Unlike
 * time_before(), which reads a gap of 2^31 jiffies or more (25 days at
 * HZ 1000 with a 32-bit jiffies) as ahead: a guest whose traffic pauses
 * for a month still samples on its next frames.
 */
static inline bool vrss_gate_ahead(unsigned long due)
{
	return due - jiffies - 1 < msecs_to_jiffies(VRSS_INTERVAL_MS_MAX);
}

/* Every hashed frame: while paced, a jiffies compare. */
static inline void vrss_gate_frame(struct vrss_dev *vd)
{
	int arm = atomic_read(&vd->gate.arm);

	if (arm == VRSS_GATE_ARM_NONE)
		return;
	if (arm == VRSS_GATE_ARM_DUE) {
		/* ARM_DUE before gate_due; pairs with vrss_gate_pace(). */
		smp_rmb();
		if (vrss_gate_ahead(READ_ONCE(vd->gate.due)))
			return;
		/* Read by the work (vrss_gate_stale_at()), after the xchg. */
		WRITE_ONCE(vd->gate.woke, jiffies);
	}
	vrss_gate_wake(vd);
}

int vrss_gate_init(struct vrss_dev *vd);
void vrss_gate_uninit(struct vrss_dev *vd);
void vrss_gate_start_locked(struct vrss_dev *vd);
void vrss_gate_stop(struct vrss_dev *vd);
bool vrss_gate_running(const struct vrss_dev *vd);
bool vrss_gate_fresh(const struct vrss_dev *vd);
void vrss_gate_reconfig(struct vrss_dev *vd);
int vrss_gate_set_knob(struct vrss_dev *vd, enum vrss_knob knob,
		       unsigned int val);

#endif /* _VRSS_GATE_H */
