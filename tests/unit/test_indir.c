// SPDX-License-Identifier: GPL-2.0
/* Host unit tests of include/vrss/indir.h. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <vrss/indir.h>

#include "xorshift.h"

static void test_default_round_robin(void **state)
{
	u32 indir[VRSS_INDIR_SIZE];
	unsigned int n, i, count[8];

	(void)state;
	for (n = 1; n <= 8; n++) {
		vrss_indir_fill_default(indir, n);
		for (i = 0; i < n; i++)
			count[i] = 0;
		for (i = 0; i < VRSS_INDIR_SIZE; i++) {
			assert_int_equal(indir[i], i % n);
			count[indir[i]]++;
		}
		/* Every queue gets 128/n buckets, give or take one. */
		for (i = 0; i < n; i++)
			assert_in_range(count[i], VRSS_INDIR_SIZE / n,
					(VRSS_INDIR_SIZE + n - 1) / n);
		assert_int_equal(vrss_indir_max(indir), n - 1);
	}
}

static void test_bucket_uses_low_bits(void **state)
{
	(void)state;
	assert_int_equal(vrss_indir_bucket(0), 0);
	assert_int_equal(vrss_indir_bucket(127), 127);
	assert_int_equal(vrss_indir_bucket(128), 0);
	assert_int_equal(vrss_indir_bucket(0xffffffffu), 127);
	assert_int_equal(vrss_indir_bucket(0x12345681u), 1);
}

static void test_max(void **state)
{
	u32 indir[VRSS_INDIR_SIZE] = { 0 };

	(void)state;
	assert_int_equal(vrss_indir_max(indir), 0);
	indir[127] = 5;
	assert_int_equal(vrss_indir_max(indir), 5);
	indir[0] = 9;
	assert_int_equal(vrss_indir_max(indir), 9);
}

/* ethtool -X weight: queue q gets weights[q] / sum of the 128 buckets. */
static void fill_weights(u32 *indir, const unsigned int *weights,
			 unsigned int n)
{
	unsigned int i, q = 0, acc = 0, total = 0;
	unsigned int count[VRSS_INDIR_SIZE] = { 0 };

	for (i = 0; i < n; i++)
		total += weights[i];
	for (i = 0; i < VRSS_INDIR_SIZE; i++) {
		while (q < n && (i + 1) * total > VRSS_INDIR_SIZE * (acc + weights[q])) {
			acc += weights[q];
			q++;
		}
		indir[i] = q < n ? q : n - 1;
		count[indir[i]]++;
		/* In queue order, as ethtool fills a weighted table. */
		if (i)
			assert_true(indir[i] >= indir[i - 1]);
	}
	/* Each queue within one bucket of its share. */
	for (q = 0; q < n; q++) {
		long long diff = (long long)count[q] * total -
				 (long long)VRSS_INDIR_SIZE * weights[q];

		assert_true(diff > -(long long)total && diff < (long long)total);
	}
}

/*
 * The effective table at every width: names only queues below the width,
 * keeps every bucket whose queue is below it, and differs from the table
 * one queue wider only in the buckets of the queue that left.
 */
static void check_effective(const u32 *indir)
{
	u32 eff[VRSS_INDIR_SIZE], wider[VRSS_INDIR_SIZE];
	unsigned int top = vrss_indir_max(indir) + 1, w, i;

	vrss_indir_effective(wider, indir, top);
	assert_memory_equal(wider, indir, sizeof(wider));
	for (w = top - 1; w >= 1; w--) {
		vrss_indir_effective(eff, indir, w);
		for (i = 0; i < VRSS_INDIR_SIZE; i++) {
			assert_true(eff[i] < w);
			if (indir[i] < w)
				assert_int_equal(eff[i], indir[i]);
			if (wider[i] != w)
				assert_int_equal(eff[i], wider[i]);
		}
		memcpy(wider, eff, sizeof(eff));
	}
	/* Width 0 is taken as 1: everything on the primary queue. */
	vrss_indir_effective(eff, indir, 0);
	for (i = 0; i < VRSS_INDIR_SIZE; i++)
		assert_int_equal(eff[i], 0);
}

static void test_effective_moves_only_leaving_queue(void **state)
{
	static const unsigned int w31[] = { 3, 1 }, w1234[] = { 1, 2, 3, 4 };
	u32 indir[VRSS_INDIR_SIZE];
	unsigned int n;

	(void)state;
	for (n = 1; n <= 16; n++) {
		vrss_indir_fill_default(indir, n);
		check_effective(indir);
	}
	fill_weights(indir, w31, 2);
	check_effective(indir);
	fill_weights(indir, w1234, 4);
	check_effective(indir);
}

/*
 * Dealt round robin, the default table stays balanced at every width: each
 * queue in use has 128 / w buckets, rounded down or up, as an even split
 * would give them.
 */
static void test_effective_balanced(void **state)
{
	u32 indir[VRSS_INDIR_SIZE], eff[VRSS_INDIR_SIZE];
	unsigned int n, w, i, count[16];

	(void)state;
	for (n = 2; n <= 16; n++) {
		vrss_indir_fill_default(indir, n);
		for (w = 1; w <= n; w++) {
			vrss_indir_effective(eff, indir, w);
			memset(count, 0, sizeof(count));
			for (i = 0; i < VRSS_INDIR_SIZE; i++)
				count[eff[i]]++;
			for (i = 0; i < w; i++)
				assert_in_range(count[i], VRSS_INDIR_SIZE / w,
						(VRSS_INDIR_SIZE + w - 1) / w);
		}
	}
}

/*
 * Where the leaving buckets go, worked out by hand.  check_effective()
 * cannot tell: it compares each width with the function's own output one
 * queue wider, so handing them all to the primary, or to the busiest
 * queue, would pass it.
 */
static void test_effective_by_hand(void **state)
{
	u32 indir[VRSS_INDIR_SIZE], eff[VRSS_INDIR_SIZE];
	unsigned int i;

	(void)state;
	/*
	 * Default table over 4 queues at width 3: queues 0-2 keep their 32
	 * buckets; queue 3's (3, 7, ..., 127) are dealt one by one to the
	 * least loaded of 0-2, which tie at every third one: the j-th (bucket
	 * 4j + 3) to queue j % 3.
	 */
	vrss_indir_fill_default(indir, 4);
	vrss_indir_effective(eff, indir, 3);
	for (i = 0; i < VRSS_INDIR_SIZE; i++)
		assert_int_equal(eff[i], i % 4 < 3 ? i % 4 : i / 4 % 3);

	/*
	 * 40 buckets on queue 0, 40 on 1, 8 on 2, 40 on 3 (0-39, 40-79,
	 * 80-87, 88-127), width 3: queue 2 is the least loaded until it too
	 * has 40, so buckets 88-119 go there; then 0, 1 and 2 tie at 40 and
	 * the last 8 are dealt 0, 1, 2, 0, 1, 2, 0, 1 (ties: lowest queue).
	 */
	for (i = 0; i < VRSS_INDIR_SIZE; i++)
		indir[i] = i < 40 ? 0 : i < 80 ? 1 : i < 88 ? 2 : 3;
	vrss_indir_effective(eff, indir, 3);
	for (i = 0; i < 120; i++)
		assert_int_equal(eff[i], i < 40 ? 0 : i < 80 ? 1 : 2);
	for (i = 120; i < VRSS_INDIR_SIZE; i++)
		assert_int_equal(eff[i], (i - 120) % 3);

	/*
	 * A table that does not use the primary: 0-63 on queue 1, 64-95 on
	 * 2, 96-127 on 5.  Buckets go only to queues the table uses: at
	 * width 3 (and 4, 5) queue 5's all to queue 2 (32 < 64 up to its
	 * last), at width 2 everything on queue 1, and only at width 1, no
	 * queue the table uses being left, on the primary.
	 */
	for (i = 0; i < VRSS_INDIR_SIZE; i++)
		indir[i] = i < 64 ? 1 : i < 96 ? 2 : 5;
	vrss_indir_effective(eff, indir, 6);
	assert_memory_equal(eff, indir, sizeof(eff));
	vrss_indir_effective(eff, indir, 3);
	for (i = 0; i < VRSS_INDIR_SIZE; i++)
		assert_int_equal(eff[i], i < 64 ? 1 : 2);
	vrss_indir_effective(eff, indir, 2);
	for (i = 0; i < VRSS_INDIR_SIZE; i++)
		assert_int_equal(eff[i], 1);
	vrss_indir_effective(eff, indir, 1);
	for (i = 0; i < VRSS_INDIR_SIZE; i++)
		assert_int_equal(eff[i], 0);
}

#define REF_QUEUES	16

/*
 * The rule vrss_indir_effective() states, written the plain way for
 * random tables: a bucket count per queue id (ids below REF_QUEUES here)
 * instead of the header's sorted list of the ids in use, so none of its
 * bookkeeping is shared.  From the highest queue down to the width, each
 * bucket in turn goes to the least loaded queue below it that the table
 * uses (ties: the lowest), or to queue 0 when there is none.
 */
static void effective_ref(u32 *eff, const u32 *indir, unsigned int width)
{
	unsigned int count[REF_QUEUES] = { 0 }, q, t, i, best;

	memcpy(eff, indir, VRSS_INDIR_SIZE * sizeof(*eff));
	for (i = 0; i < VRSS_INDIR_SIZE; i++)
		count[indir[i]]++;
	for (q = REF_QUEUES - 1; q >= width && q >= 1; q--) {
		for (i = 0; i < VRSS_INDIR_SIZE; i++) {
			if (eff[i] != q)
				continue;
			best = q;
			for (t = 0; t < q; t++)
				if (count[t] && (best == q || count[t] < count[best]))
					best = t;
			eff[i] = best == q ? 0 : best;
			if (best != q)
				count[best]++;
		}
	}
}

/* Random tables over a few of 16 queues, every width: as the rule says. */
static void test_effective_against_reference(void **state)
{
	u32 indir[VRSS_INDIR_SIZE], eff[VRSS_INDIR_SIZE], ref[VRSS_INDIR_SIZE];
	unsigned int n, i, w, used;
	u64 rng = 0x9e3779b97f4a7c15ull;

	(void)state;
	for (n = 0; n < 500; n++) {
		/* A random subset of the queues, so gaps and a missing primary. */
		used = xorshift_next(&rng) & 0xffff;
		if (!used)
			used = 1u << 15;
		for (i = 0; i < VRSS_INDIR_SIZE; i++) {
			do
				indir[i] = xorshift_next(&rng) % REF_QUEUES;
			while (!(used & (1u << indir[i])));
		}
		for (w = 0; w <= REF_QUEUES + 1; w++) {
			vrss_indir_effective(eff, indir, w);
			effective_ref(ref, indir, w);
			assert_memory_equal(eff, ref, sizeof(eff));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_round_robin),
		cmocka_unit_test(test_bucket_uses_low_bits),
		cmocka_unit_test(test_max),
		cmocka_unit_test(test_effective_moves_only_leaving_queue),
		cmocka_unit_test(test_effective_balanced),
		cmocka_unit_test(test_effective_by_hand),
		cmocka_unit_test(test_effective_against_reference),
	};

	return cmocka_run_group_tests_name("indir", tests, NULL, NULL);
}
