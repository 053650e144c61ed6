/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vrss: load-gated virtual receive side scaling for KVM guests.
 * Definitions shared by the module's files.
 */
#ifndef _VRSS_H
#define _VRSS_H

#define VRSS_DRV_NAME		"vrss"
#define VRSS_DRV_VERSION	"0.1.0"

#endif /* _VRSS_H */
