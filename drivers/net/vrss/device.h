/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vrss: device mode (device.c), where the lower's own RSS indirection
 * table steers and vrss0's queues are the lower's rings.
 */
#ifndef _VRSS_DEVICE_H
#define _VRSS_DEVICE_H

#include "vrss.h"

/* From the receive path: the lower's table is vrss's, frames go up inline. */
static inline bool vrss_device_held(const struct vrss_dev *vd)
{
	/* Pairs with vrss_device_take()'s release: the rings, the table. */
	return smp_load_acquire(&vd->dm.state) == VRSS_DEVICE_HELD;
}

void vrss_device_stray(struct vrss_dev *vd);

/*
 * Device mode, a frame of bucket @b on the lower's ring @ring, not held:
 * if the table no longer sends the bucket there, it came late (the device moved
 * it before that ring handed up all it held), or the device does not
 * follow the table.
 */
static inline void vrss_device_check_ring(struct vrss_dev *vd, unsigned int b,
					  unsigned int ring)
{
	if (unlikely(READ_ONCE(vd->dm.ring_of[b]) != ring) && !READ_ONCE(vd->dm.hold[b]))
		vrss_device_stray(vd);
}

bool vrss_device_hold(struct vrss_dev *vd, struct sk_buff *skb, unsigned int b,
		      unsigned int ring);
void vrss_device_init(struct vrss_dev *vd);
void vrss_device_uninit(struct vrss_dev *vd);
int vrss_device_set_mode(struct vrss_dev *vd, enum vrss_mode mode,
			 const char **why);
bool vrss_device_wanted(struct vrss_dev *vd);
void vrss_device_take(struct vrss_dev *vd);
void vrss_device_release(struct vrss_dev *vd);
void vrss_device_steer_changed(struct vrss_dev *vd);
unsigned int vrss_device_rings(struct vrss_dev *vd);

#endif /* _VRSS_DEVICE_H */
