/* SPDX-License-Identifier: GPL-2.0 */
/* xorshift64: reproducible pseudo-random traces for the unit tests. */
#ifndef _VRSS_TEST_XORSHIFT_H
#define _VRSS_TEST_XORSHIFT_H

#include <linux/types.h>

static inline u32 xorshift_next(u64 *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return (u32)(*state >> 16);
}

#endif
