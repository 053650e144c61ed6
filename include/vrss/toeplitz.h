/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Toeplitz hash, table driven.  Pure C: shared by the module and the
 * host-side unit tests, it needs nothing but the fixed-width types.
 *
 * The Toeplitz hash of an input is the XOR, over every set input bit b
 * (most significant bit of byte 0 first), of the 32-bit window of the key
 * that starts at bit b.  As XOR is linear, the contribution of input byte i
 * with value v can be precomputed: lut[i * 256 + v].  Hashing is then one
 * table load and one XOR per input byte: 12 for an IPv4 4-tuple, 36 for
 * IPv6.
 */
#ifndef _VRSS_TOEPLITZ_H
#define _VRSS_TOEPLITZ_H

#include <linux/types.h>

#define VRSS_RSS_KEY_SIZE	40
/* IPv6 source and destination address, source and destination port. */
#define VRSS_TOEPLITZ_MAX_INPUT	36

struct vrss_toeplitz {
	u32 lut[VRSS_TOEPLITZ_MAX_INPUT * 256];
};

/* The 32 key bits starting at bit @bit (bit 0: MSB of key[0]). */
static inline u32 vrss_toeplitz_window(const u8 *key, unsigned int bit)
{
	unsigned int byte = bit / 8, shift = bit % 8;
	u64 w = 0;
	unsigned int i;

	/* Five bytes cover any 32-bit window; the key has 8 bytes spare. */
	for (i = 0; i < 5; i++)
		w = (w << 8) | key[byte + i];
	return (u32)(w >> (8 - shift));
}

/*
 * One table row: for each value v of @bits input bits starting at key bit
 * @bit, the XOR of the windows of v's set bits (most significant first).
 */
static inline void vrss_toeplitz_row(u32 *row, const u8 *key,
				     unsigned int bit, unsigned int bits)
{
	unsigned int v, b;
	u32 win[8];

	for (b = 0; b < bits; b++)
		win[b] = vrss_toeplitz_window(key, bit + b);
	for (v = 0; v < 1u << bits; v++) {
		u32 h = 0;

		for (b = 0; b < bits; b++)
			if (v & (1u << (bits - 1 - b)))
				h ^= win[b];
		row[v] = h;
	}
}

static inline void vrss_toeplitz_init(struct vrss_toeplitz *t,
				      const u8 key[VRSS_RSS_KEY_SIZE])
{
	unsigned int i;

	for (i = 0; i < VRSS_TOEPLITZ_MAX_INPUT; i++)
		vrss_toeplitz_row(&t->lut[i * 256], key, i * 8, 8);
}

/*
 * @len must not exceed VRSS_TOEPLITZ_MAX_INPUT.  RSS inputs are whole
 * 32-bit words (8, 12, 32 or 36 bytes): four bytes per step, with a row
 * pointer that advances, make each byte one load and one XOR with a
 * constant offset (about 40 instructions for an IPv4 4-tuple on x86-64).
 */
static inline u32 vrss_toeplitz_hash(const struct vrss_toeplitz *t,
				     const u8 *data, unsigned int len)
{
	const u8 *end = data + len, *words = data + (len & ~3u);
	const u32 *row = t->lut;
	u32 h = 0;

	for (; data < words; data += 4, row += 4 * 256)
		h ^= row[data[0]] ^ row[256 + data[1]] ^
		     row[512 + data[2]] ^ row[768 + data[3]];
	for (; data < end; data++, row += 256)
		h ^= row[*data];
	return h;
}

#endif /* _VRSS_TOEPLITZ_H */
