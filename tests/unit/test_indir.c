// SPDX-License-Identifier: GPL-2.0
/* Host unit tests of include/vrss/indir.h. */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_round_robin),
		cmocka_unit_test(test_bucket_uses_low_bits),
		cmocka_unit_test(test_max),
	};

	return cmocka_run_group_tests_name("indir", tests, NULL, NULL);
}
