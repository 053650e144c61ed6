// SPDX-License-Identifier: GPL-2.0
/* Host unit tests of include/vrss/indir.h. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <vrss/indir.h>

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

/* Dealt round robin, the default table stays balanced at every width. */
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
				assert_in_range(count[i], VRSS_INDIR_SIZE / w - 3,
						VRSS_INDIR_SIZE / w + 4);
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
	};

	return cmocka_run_group_tests_name("indir", tests, NULL, NULL);
}
