// SPDX-License-Identifier: GPL-2.0
/*
 * Host microbenchmark of the Toeplitz hash (include/vrss/toeplitz.h): the
 * module's table-driven version (a 36 KB table of bytes) against the
 * nibble table (4.6 KB) and a bit-by-bit reference.
 *
 *   toeplitz ns N          ns per hash, IPv4 and IPv6, every version
 *   toeplitz one V N       N hashes of version V (table4, table6, nib4,
 *                          nib6, bit4, bit6) in noinline functions, for
 *                          callgrind's --toggle-collect (instructions per
 *                          hash)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "toeplitz4.h"

static struct vrss_toeplitz t;
static struct vrss_toeplitz4 t4;
static u8 key[VRSS_RSS_KEY_SIZE];
static u8 inputs[256][VRSS_TOEPLITZ_MAX_INPUT];
static volatile u32 sink;

static u32 bitwise(const u8 *in, unsigned int len)
{
	u32 h = 0;
	unsigned int i, b;

	for (i = 0; i < len; i++)
		for (b = 0; b < 8; b++)
			if (in[i] & (0x80 >> b))
				h ^= vrss_toeplitz_window(key, i * 8 + b);
	return h;
}

__attribute__((noinline)) u32 table4(const u8 *in)
{
	return vrss_toeplitz_hash(&t, in, 12);
}

__attribute__((noinline)) u32 table6(const u8 *in)
{
	return vrss_toeplitz_hash(&t, in, 36);
}

__attribute__((noinline)) u32 nib4(const u8 *in)
{
	return vrss_toeplitz4_hash(&t4, in, 12);
}

__attribute__((noinline)) u32 nib6(const u8 *in)
{
	return vrss_toeplitz4_hash(&t4, in, 36);
}

__attribute__((noinline)) u32 bit4(const u8 *in)
{
	return bitwise(in, 12);
}

__attribute__((noinline)) u32 bit6(const u8 *in)
{
	return bitwise(in, 36);
}

static u32 (*const fns[])(const u8 *) = { table4, table6, nib4, nib6, bit4, bit6 };
static const char *const names[] = { "table4", "table6", "nib4", "nib6", "bit4", "bit6" };
#define NFNS	(sizeof(fns) / sizeof(fns[0]))

static double ns_per(u32 (*fn)(const u8 *), long n)
{
	struct timespec a, b;
	long i;
	u32 x = 0;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		x ^= fn(inputs[i & 255]);
	clock_gettime(CLOCK_MONOTONIC, &b);
	sink = x;
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
}

int main(int argc, char **argv)
{
	unsigned int i, j, v;
	long n;

	srand(1);
	for (i = 0; i < sizeof(key); i++)
		key[i] = rand();
	for (i = 0; i < 256; i++)
		for (j = 0; j < VRSS_TOEPLITZ_MAX_INPUT; j++)
			inputs[i][j] = rand();
	vrss_toeplitz_init(&t, key);
	vrss_toeplitz4_init(&t4, key);
	for (i = 0; i < 256; i++)
		if (table4(inputs[i]) != bit4(inputs[i]) || table6(inputs[i]) != bit6(inputs[i]) ||
		    nib4(inputs[i]) != bit4(inputs[i]) || nib6(inputs[i]) != bit6(inputs[i])) {
			fprintf(stderr, "toeplitz: tables and bitwise disagree\n");
			return 1;
		}

	if (argc == 3 && !strcmp(argv[1], "ns")) {
		n = atol(argv[2]);
		printf("{\"ns_per_hash\": {");
		for (v = 0; v < NFNS; v++)
			printf("%s\"%s\": %.2f", v ? ", " : "", names[v],
			       ns_per(fns[v], v < 4 ? n : n / 20));
		printf("}}\n");
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "one")) {
		for (v = 0; v < NFNS && strcmp(argv[2], names[v]); v++)
			;
		if (v == NFNS)
			return 2;
		n = atol(argv[3]);
		for (i = 0; i < n; i++)
			sink ^= fns[v](inputs[i & 255]);
		return 0;
	}
	fprintf(stderr, "usage: toeplitz ns N | toeplitz one table4|table6|nib4|nib6|bit4|bit6 N\n");
	return 2;
}
