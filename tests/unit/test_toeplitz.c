// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of include/vrss/toeplitz.h: Microsoft's published
 * "Verifying the RSS Hash Calculation" vectors, and the table-driven hash
 * against a bit-by-bit reference on random inputs and random keys.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include <vrss/toeplitz.h>

#include "../../tools/bench/toeplitz4.h"

#include "ms_key.h"

struct vector {
	int family;
	const char *dst, *src;
	u16 dport, sport;
	u32 hash_l3, hash_l4;
};

static const struct vector vectors[] = {
	{ AF_INET, "161.142.100.80", "66.9.149.187", 1766, 2794, 0x323e8fc2, 0x51ccc178 },
	{ AF_INET, "65.69.140.83", "199.92.111.2", 4739, 14230, 0xd718262a, 0xc626b0ea },
	{ AF_INET, "12.22.207.184", "24.19.198.95", 38024, 12898, 0xd2d0a5de, 0x5c2b394a },
	{ AF_INET, "209.142.163.6", "38.27.205.30", 2217, 48228, 0x82989176, 0xafc7327f },
	{ AF_INET, "202.188.127.2", "153.39.163.191", 1303, 44251, 0x5d1809c5, 0x10e828a2 },
	{ AF_INET6, "3ffe:2501:200:3::1", "3ffe:2501:200:1fff::7", 1766, 2794,
	  0x2cc18cd5, 0x40207d3d },
	{ AF_INET6, "ff02::1", "3ffe:501:8::260:97ff:fe40:efab", 4739, 14230,
	  0x0f0c461c, 0xdde51bbf },
	{ AF_INET6, "fe80::200:f8ff:fe21:67cf", "3ffe:1900:4545:3:200:f8ff:fe21:67cf",
	  38024, 44251, 0x4b61e985, 0x02d1feef },
};

/* The definition, one input bit at a time: the reference to compare with. */
static u32 toeplitz_bitwise(const u8 *key, const u8 *data, unsigned int len)
{
	u32 window = (u32)key[0] << 24 | key[1] << 16 | key[2] << 8 | key[3];
	u32 h = 0;
	unsigned int i, b;

	for (i = 0; i < len; i++) {
		for (b = 0; b < 8; b++) {
			if (data[i] & (0x80 >> b))
				h ^= window;
			window = window << 1 | ((key[i + 4] >> (7 - b)) & 1);
		}
	}
	return h;
}

/* src addr, dst addr, src port, dst port, all in network order. */
static unsigned int build_input(const struct vector *v, u8 *in, int ports)
{
	unsigned int alen = v->family == AF_INET ? 4 : 16;
	u16 sport = htons(v->sport), dport = htons(v->dport);

	assert_int_equal(inet_pton(v->family, v->src, in), 1);
	assert_int_equal(inet_pton(v->family, v->dst, in + alen), 1);
	if (!ports)
		return 2 * alen;
	memcpy(in + 2 * alen, &sport, 2);
	memcpy(in + 2 * alen + 2, &dport, 2);
	return 2 * alen + 4;
}

static void test_microsoft_vectors(void **state)
{
	static struct vrss_toeplitz t;
	u8 in[VRSS_TOEPLITZ_MAX_INPUT];
	unsigned int i, len;

	(void)state;
	vrss_toeplitz_init(&t, ms_key);
	for (i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++) {
		len = build_input(&vectors[i], in, 0);
		assert_int_equal(vrss_toeplitz_hash(&t, in, len), vectors[i].hash_l3);
		assert_int_equal(toeplitz_bitwise(ms_key, in, len), vectors[i].hash_l3);
		len = build_input(&vectors[i], in, 1);
		assert_int_equal(vrss_toeplitz_hash(&t, in, len), vectors[i].hash_l4);
		assert_int_equal(toeplitz_bitwise(ms_key, in, len), vectors[i].hash_l4);
	}
}

static void test_random_against_bitwise(void **state)
{
	static struct vrss_toeplitz t;
	static struct vrss_toeplitz4 t4;
	u8 key[VRSS_RSS_KEY_SIZE], in[VRSS_TOEPLITZ_MAX_INPUT];
	unsigned int k, n, i, len;

	(void)state;
	srandom(12345);
	for (k = 0; k < 20; k++) {
		for (i = 0; i < sizeof(key); i++)
			key[i] = random();
		vrss_toeplitz_init(&t, key);
		vrss_toeplitz4_init(&t4, key);
		for (n = 0; n < 2000; n++) {
			len = random() % (VRSS_TOEPLITZ_MAX_INPUT + 1);
			for (i = 0; i < len; i++)
				in[i] = random();
			assert_int_equal(vrss_toeplitz_hash(&t, in, len),
					 toeplitz_bitwise(key, in, len));
			/* The nibble table: the same hash. */
			assert_int_equal(vrss_toeplitz4_hash(&t4, in, len),
					 toeplitz_bitwise(key, in, len));
		}
	}
}

/*
 * An all-zero input hashes to 0 whatever the key; a single set bit to the
 * 32 key bits starting at that bit.  The expected windows are read off
 * ms_key by hand, not computed with vrss_toeplitz_window(), which built
 * the tables under test:
 *   bit 0   (MSB of byte 0):  key[0..3]                        0x6d5a56da
 *   bit 7   (LSB of byte 0):  1, 5a 56 da, top 7 bits of 0x25  0xad2b6d12
 *   bit 256 (MSB of byte 32): key[32..35]                      0x6a42b73b
 *   bit 287 (LSB of byte 35): 1 (0x3b's LSB), be ac 01, top 7
 *                             bits of 0xfa (1111101)           0xdf5600fd
 * Bit 287 is the last the longest input uses: its window takes the key's
 * last byte.
 */
static void test_edges(void **state)
{
	static const struct {
		unsigned int bit;
		u32 window;
	} one_bit[] = {
		{ 0, 0x6d5a56da }, { 7, 0xad2b6d12 },
		{ 256, 0x6a42b73b }, { 287, 0xdf5600fd },
	};
	static struct vrss_toeplitz t;
	static struct vrss_toeplitz4 t4;
	u8 in[VRSS_TOEPLITZ_MAX_INPUT] = { 0 };
	unsigned int i, byte;

	(void)state;
	vrss_toeplitz_init(&t, ms_key);
	vrss_toeplitz4_init(&t4, ms_key);
	assert_int_equal(vrss_toeplitz_hash(&t, in, sizeof(in)), 0);
	assert_int_equal(vrss_toeplitz_hash(&t, in, 0), 0);
	assert_int_equal(vrss_toeplitz4_hash(&t4, in, sizeof(in)), 0);
	for (i = 0; i < sizeof(one_bit) / sizeof(one_bit[0]); i++) {
		byte = one_bit[i].bit / 8;
		memset(in, 0, sizeof(in));
		in[byte] = 0x80 >> (one_bit[i].bit % 8);
		/* Through the bytewise tail and through the word loop. */
		assert_int_equal(vrss_toeplitz_hash(&t, in, byte + 1), one_bit[i].window);
		assert_int_equal(vrss_toeplitz_hash(&t, in, sizeof(in)), one_bit[i].window);
		assert_int_equal(vrss_toeplitz4_hash(&t4, in, byte + 1), one_bit[i].window);
		assert_int_equal(vrss_toeplitz4_hash(&t4, in, sizeof(in)), one_bit[i].window);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_microsoft_vectors),
		cmocka_unit_test(test_random_against_bitwise),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests_name("toeplitz", tests, NULL, NULL);
}
