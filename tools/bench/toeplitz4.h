/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A variant of include/vrss/toeplitz.h's hash for the benchmark
 * (tools/bench/toeplitz.c) and its unit test: the module does not use it.
 */
#ifndef _VRSS_BENCH_TOEPLITZ4_H
#define _VRSS_BENCH_TOEPLITZ4_H

#include <vrss/toeplitz.h>

/*
 * The same hash from a table of nibbles: the contribution of each 4-bit
 * half of each input byte, 16 entries per nibble, 4.6 KB instead of 36 KB
 * (two loads and a shift per byte instead of one load).  Measured against
 * the byte table by tools/bench/toeplitz.sh; the module uses the byte
 * table.
 */
struct vrss_toeplitz4 {
	u32 lut[VRSS_TOEPLITZ_MAX_INPUT * 2 * 16];
};

static inline void vrss_toeplitz4_init(struct vrss_toeplitz4 *t,
				       const u8 key[VRSS_RSS_KEY_SIZE])
{
	unsigned int n;

	for (n = 0; n < VRSS_TOEPLITZ_MAX_INPUT * 2; n++)
		vrss_toeplitz_row(&t->lut[n * 16], key, n * 4, 4);
}

/* @len must not exceed VRSS_TOEPLITZ_MAX_INPUT; words as above. */
static inline u32 vrss_toeplitz4_hash(const struct vrss_toeplitz4 *t,
				      const u8 *data, unsigned int len)
{
	const u8 *end = data + len, *words = data + (len & ~3u);
	const u32 *row = t->lut;
	u32 h = 0;

	for (; data < words; data += 4, row += 4 * 32)
		h ^= row[data[0] >> 4] ^ row[16 + (data[0] & 15)] ^
		     row[32 + (data[1] >> 4)] ^ row[48 + (data[1] & 15)] ^
		     row[64 + (data[2] >> 4)] ^ row[80 + (data[2] & 15)] ^
		     row[96 + (data[3] >> 4)] ^ row[112 + (data[3] & 15)];
	for (; data < end; data++, row += 32)
		h ^= row[*data >> 4] ^ row[16 + (*data & 15)];
	return h;
}

#endif /* _VRSS_BENCH_TOEPLITZ4_H */
