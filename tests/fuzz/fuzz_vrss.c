// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target over the pure-C core the module runs on every frame and
 * every interval: the header parser, the Toeplitz hash and the indirection
 * table (include/vrss/parse.h, toeplitz.h, indir.h), the load policy
 * (policy.h) and the rebalancer (rebalance.h).  Built with ASan and UBSan; besides memory errors it checks
 * the invariants the module relies on, and aborts when one fails.
 *
 * Input: the first byte picks what to drive, the rest is its input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vrss/indir.h>
#include <vrss/parse.h>
#include <vrss/policy.h>
#include <vrss/rebalance.h>
#include <vrss/toeplitz.h>

#include "../unit/policy_model.h"

#define check(cond) do { if (!(cond)) abort(); } while (0)

#define FUZZ_QUEUES	16

static struct vrss_toeplitz toeplitz;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	u8 key[VRSS_RSS_KEY_SIZE];
	unsigned int i;

	(void)argc;
	(void)argv;
	for (i = 0; i < sizeof(key); i++)
		key[i] = (u8)(i * 37 + 11);
	vrss_toeplitz_init(&toeplitz, key);
	return 0;
}

/*
 * The module parses the linear part of a frame first and keeps the result
 * when the ports were found there (drivers/net/vrss/rss.c): a prefix that
 * yields the ports must yield the same input as the whole frame.
 */
static void check_prefixes(const u8 *pkt, unsigned int len, unsigned int proto,
			   unsigned int ports, const u8 *want, unsigned int n)
{
	u8 in[VRSS_TOEPLITZ_MAX_INPUT];
	unsigned int m, k;
	bool l4;

	for (m = 0; m < len; m++) {
		k = vrss_parse_input(pkt, m, proto, ports, in, &l4);
		if (l4)
			check(k == n && !memcmp(in, want, n));
	}
}

/*
 * A frame as the module sees it: ethertype selector, hashed-ports mask,
 * then the bytes from the network header on, in a buffer of exactly that
 * size so that any read past it is an ASan report.
 */
static void fuzz_frame(const u8 *data, size_t size)
{
	static const unsigned int protos[] = {
		VRSS_ETH_P_IP, VRSS_ETH_P_IPV6, VRSS_ETH_P_8021Q, VRSS_ETH_P_8021AD,
	};
	u8 in[VRSS_TOEPLITZ_MAX_INPUT + 1], *pkt;
	unsigned int proto, ports, n, len;
	u32 indir[VRSS_INDIR_SIZE], eff[VRSS_INDIR_SIZE];
	bool l4;

	if (size < 3)
		return;
	proto = data[0] < 252 ? protos[data[0] % 4] : (unsigned int)data[1] << 8 | data[2];
	ports = data[1] & VRSS_FLOW_ALL_PORTS;
	data += 3;
	size -= 3;
	/* The module never hands the parser more than this. */
	len = size < VRSS_PARSE_BYTES ? (unsigned int)size : VRSS_PARSE_BYTES;
	pkt = malloc(len ? len : 1);
	check(pkt);
	memcpy(pkt, data, len);

	in[VRSS_TOEPLITZ_MAX_INPUT] = 0x5a;	/* canary: at most 36 bytes written */
	n = vrss_parse_input(pkt, len, proto, ports, in, &l4);
	check(in[VRSS_TOEPLITZ_MAX_INPUT] == 0x5a);
	check(n == 0 || n == 8 || n == 12 || n == 32 || n == 36);
	check(l4 == (n == 12 || n == 36));
	if (l4)
		check(ports);
	check_prefixes(pkt, len, proto, ports, in, n);
	/* What the module does next: hash, bucket, effective queue. */
	if (n) {
		u32 hash = vrss_toeplitz_hash(&toeplitz, in, n);
		unsigned int b = vrss_indir_bucket(hash), w = hash % FUZZ_QUEUES + 1;

		check(b < VRSS_INDIR_SIZE);
		vrss_indir_fill_default(indir, FUZZ_QUEUES);
		vrss_indir_effective(eff, indir, w);
		check(eff[b] < w);
	}
	free(pkt);
}

/*
 * A user's table (any queue ids up to FUZZ_QUEUES - 1) at every width:
 * only queues below the width are used, the buckets of those queues are
 * left alone, and width w and w + 1 differ only in the buckets of queue w.
 */
static void fuzz_indir(const u8 *data, size_t size)
{
	u32 indir[VRSS_INDIR_SIZE], eff[VRSS_INDIR_SIZE], prev[VRSS_INDIR_SIZE];
	unsigned int i, w;

	if (size < VRSS_INDIR_SIZE)
		return;
	for (i = 0; i < VRSS_INDIR_SIZE; i++)
		indir[i] = data[i] % FUZZ_QUEUES;
	for (w = 1; w <= FUZZ_QUEUES + 1; w++) {
		vrss_indir_effective(eff, indir, w);
		for (i = 0; i < VRSS_INDIR_SIZE; i++) {
			check(eff[i] < w);
			if (indir[i] < w)
				check(eff[i] == indir[i]);
			if (w > 1 && prev[i] != eff[i])
				check(indir[i] >= w - 1 && eff[i] == w - 1);
		}
		memcpy(prev, eff, sizeof(eff));
	}
}

/*
 * The policy under any knobs and any load trace, knob changes included:
 * the width stays within 1..max and, interval by interval, is what the
 * width rules give (tests/unit/policy_model.h, which keeps its own loads
 * and counts): the extremes (threshold 0: all queues; 100: one), one
 * queue more after VRSS_POLICY_GROW_HOLD intervals above the threshold,
 * fewer only after VRSS_POLICY_SHRINK_HOLD intervals not above it, and
 * then the fewest that would stay below threshold - hysteresis.
 */
static void fuzz_policy(const u8 *data, size_t size)
{
	struct vrss_load raw[FUZZ_QUEUES];
	struct vrss_policy *p;
	struct policy_model m;
	unsigned int threshold, hysteresis, max, w, i;

	if (size < 3)
		return;
	p = calloc(1, sizeof(*p) + FUZZ_QUEUES * sizeof(p->load[0]));
	check(p);
	p->nr = FUZZ_QUEUES;
	threshold = data[0] % 101;
	hysteresis = data[1] % 101;
	max = data[2] % (FUZZ_QUEUES + 1);
	data += 3;
	size -= 3;
	w = vrss_policy_reset(p, threshold, max);
	check(w >= 1 && w <= (max ? max : 1));
	check(w == model_reset(&m, threshold, max));

	while (size >= 1) {
		u8 op = *data++;

		size--;
		if (op >= 0xf0) {
			/* A knob write or an ethtool -L / -X between samples. */
			if (op & 1)
				threshold = (op & 0xe) * 10 % 101;
			else
				max = op & 0x0f;
			w = vrss_policy_config(p, threshold, max);
			check(w == model_config(&m, threshold, max));
		} else {
			for (i = 0; i < FUZZ_QUEUES; i++) {
				u8 b = size ? (size--, *data++) : 0;

				/* Up to 255 %: a sampler's rounding must not hurt. */
				raw[i].busy = b;
				raw[i].net = (u32)(b * 7) % 256;
			}
			w = vrss_policy_step(p, threshold, hysteresis, raw, max);
			check(model_step(&m, threshold, hysteresis, raw, max,
					 FUZZ_QUEUES, w));
		}
		/* And the width the next interval starts from. */
		check(p->width == m.width);
		check(w >= 1 && w <= (max > 1 ? max : 1));
		if (max > 1 && threshold == 0)
			check(w == max);
		if (threshold >= VRSS_PERCENT_MAX)
			check(w == 1);
		for (i = 0; i < FUZZ_QUEUES; i++)
			check(vrss_policy_load(p, i) <= VRSS_PERCENT_MAX &&
			      vrss_policy_net(p, i) <= VRSS_PERCENT_MAX);
	}
	free(p);
}

/*
 * The rebalancer under any table, knobs, loads and bucket weights: only
 * buckets of one queue above the threshold move, all to one less busy
 * queue (the least busy, or when none has time to spare the one with the
 * least receive work, never the primary), none that is held, no more than
 * half the gap's worth, and never while settling.  Rebalancing is off at
 * threshold 0 or 100 and when the hysteresis is not below the threshold
 * (vrss.rst): then nothing may move.
 *
 * The move properties only bite where something can move.  Threshold and
 * hysteresis drawn independently give hysteresis >= threshold for about
 * half the byte pairs, where nothing moves and they hold whatever the
 * code does.  So the hysteresis is folded below the threshold unless the
 * high nibble of the width byte is 0xf: one random input in 16 checks that
 * rebalancing stays off, the others can move buckets.
 */
static void fuzz_rebalance(const u8 *data, size_t size)
{
	u32 eff[VRSS_INDIR_SIZE], before[VRSS_INDIR_SIZE], weight[VRSS_INDIR_SIZE];
	struct vrss_load load[FUZZ_QUEUES];
	struct vrss_rebal_result res;
	unsigned int threshold, hysteresis, width, i, n, moved;
	struct vrss_rebal r, old;
	bool off;

	if (size < 3 + VRSS_INDIR_SIZE)
		return;
	threshold = data[0] % 101;
	hysteresis = data[1] % 101;
	width = 1 + data[2] % FUZZ_QUEUES;
	if (threshold && (data[2] & 0xf0) != 0xf0)
		hysteresis %= threshold;
	off = !threshold || threshold >= VRSS_PERCENT_MAX || hysteresis >= threshold;
	for (i = 0; i < VRSS_INDIR_SIZE; i++)
		eff[i] = data[3 + i] % width;
	data += 3 + VRSS_INDIR_SIZE;
	size -= 3 + VRSS_INDIR_SIZE;
	vrss_rebal_reset(&r);

	while (size >= 2 * FUZZ_QUEUES + 8) {
		for (i = 0; i < FUZZ_QUEUES; i++) {
			/* Fixed point percent, up to 100 %. */
			load[i].busy = (u32)data[i] * 101 / 256 << VRSS_LOAD_SHIFT;
			load[i].net = (u32)data[FUZZ_QUEUES + i] * 101 / 256 << VRSS_LOAD_SHIFT;
		}
		/* Weights: a pattern of 8 bytes over the buckets, some huge. */
		for (i = 0; i < VRSS_INDIR_SIZE; i++) {
			u8 w = data[2 * FUZZ_QUEUES + i % 8];

			weight[i] = w & 0x80 ? (u32)w << 24 : (u32)w * (i % 5);
		}
		data += 2 * FUZZ_QUEUES + 8;
		size -= 2 * FUZZ_QUEUES + 8;

		memcpy(before, eff, sizeof(eff));
		old = r;
		moved = vrss_rebal_step(&r, eff, weight, load, width, threshold,
					hysteresis, &res);
		check(moved == res.moved);
		for (i = 0, n = 0; i < VRSS_INDIR_SIZE; i++) {
			check(eff[i] < width);
			if (eff[i] == before[i])
				continue;
			n++;
			check(before[i] == res.from && eff[i] == res.to);
			check(old.hold[i] <= 1 && r.hold[i] == VRSS_REBAL_HOLD);
			check(weight[i]);
		}
		check(n == moved);
		if (off)
			check(!moved && !memcmp(eff, before, sizeof(eff)));
		if (moved) {
			check(!old.settle && r.settle == VRSS_REBAL_SETTLE);
			check(res.from != res.to && width > 1);
			check(load[res.from].busy > threshold << VRSS_LOAD_SHIFT);
			if (load[res.to].busy < (threshold - hysteresis) << VRSS_LOAD_SHIFT) {
				/* To a CPU with time to spare. */
				check(res.load <= (load[res.from].busy - load[res.to].busy) / 2);
			} else {
				/*
				 * None has: receive work to the queue with
				 * the least of those less busy, never the
				 * primary, from one with more by over the
				 * hysteresis.
				 */
				for (i = 0; i < width; i++)
					check(load[i].busy >= (threshold - hysteresis) << VRSS_LOAD_SHIFT);
				check(res.to);
				check(load[res.to].busy < load[res.from].busy);
				for (i = 1; i < width; i++)
					if (i != res.from && load[i].busy < load[res.from].busy)
						check(load[res.to].net <= load[i].net);
				check(load[res.from].net > load[res.to].net +
				      (hysteresis << VRSS_LOAD_SHIFT));
				check(res.load <= (load[res.from].net - load[res.to].net) / 2);
			}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	switch (data[0] % 4) {
	case 0:
		fuzz_frame(data + 1, size - 1);
		break;
	case 1:
		fuzz_indir(data + 1, size - 1);
		break;
	case 2:
		fuzz_policy(data + 1, size - 1);
		break;
	default:
		fuzz_rebalance(data + 1, size - 1);
		break;
	}
	return 0;
}
