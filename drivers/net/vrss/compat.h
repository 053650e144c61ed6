/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Differences between the kernels vrss builds for (Debian's 6.1 and 6.12).
 * Every version or feature #if of the module lives here, nowhere else.
 * The VRSS_HAVE_* macros come from probes of the kernel headers in Kbuild,
 * which also catch features Debian backported into an older series.
 */
#ifndef _VRSS_COMPAT_H
#define _VRSS_COMPAT_H

#include <linux/netdevice.h>

/* 6.12 made lockless transmit a device flag instead of a feature bit. */
static inline void vrss_compat_set_lltx(struct net_device *dev)
{
#ifdef VRSS_HAVE_DEV_LLTX
	dev->lltx = true;
#else
	dev->features |= NETIF_F_LLTX;
#endif
}

#endif /* _VRSS_COMPAT_H */
