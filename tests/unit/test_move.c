// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of include/vrss/move.h: the bucket state word, the one
 * drained predicate, and ring positions at and across the u32 wrap.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include <vrss/move.h>

static void test_pack(void **state)
{
	u64 s = vrss_bucket_pack(3, 0xfffffffeu);

	(void)state;
	assert_int_equal(vrss_bucket_queue(s), 3);
	assert_int_equal(vrss_bucket_tail(s), 0xfffffffeu);
	assert_false(s & VRSS_BUCKET_FLAGS);
	/* The primary with no frame anywhere is 0: what a fresh table holds. */
	assert_true(vrss_bucket_pack(0, 0) == 0);
	/* Flags leave the queue and the tail readable. */
	s |= VRSS_BUCKET_PARKED;
	assert_int_equal(vrss_bucket_queue(s), 3);
	assert_int_equal(vrss_bucket_tail(s), 0xfffffffeu);
	assert_int_equal(vrss_bucket_queue(VRSS_BUCKET_PENDING | vrss_bucket_pack(0xffff, 7)),
			 0xffff);
}

static void test_passed_at_the_wrap(void **state)
{
	(void)state;
	assert_true(vrss_ring_passed(10, 10));
	assert_true(vrss_ring_passed(11, 10));
	assert_false(vrss_ring_passed(9, 10));
	/* Across the wrap, both ways. */
	assert_true(vrss_ring_passed(5, 0xfffffff0u));
	assert_false(vrss_ring_passed(0xfffffff0u, 5));
	assert_true(vrss_ring_passed(0, 0xffffffffu));
	assert_false(vrss_ring_passed(0xffffffffu, 0));
	/* Up to 2^31 - 1 apart the difference tells; at 2^31 it no longer does. */
	assert_true(vrss_ring_passed(0x7fffffffu, 0));
	assert_false(vrss_ring_passed(0x80000000u, 0));
	assert_true(vrss_ring_passed(0x7fffffffu + 0xfffff000u, 0xfffff000u));
}

/*
 * A bucket with frames on a ring whose positions start just before the
 * wrap: undrained until the consumer passes its last frame, whichever
 * side of the wrap each is on.
 */
static void test_in_flight_across_the_wrap(void **state)
{
	u32 start = 0xffffff00u, tail, head;
	u64 s;

	(void)state;
	for (tail = start + 1; tail != start + 0x200; tail++) {
		s = vrss_bucket_pack(1, tail);
		for (head = start; head != tail; head++)
			assert_false(vrss_bucket_drained(s, head));
		assert_true(vrss_bucket_drained(s, tail));
		assert_true(vrss_bucket_drained(s, tail + 0x100));
	}
}

static void test_refresh_leaves_others_alone(void **state)
{
	u64 s;

	(void)state;
	/* Inline, moving, parked, delivering: unchanged. */
	assert_true(vrss_bucket_refresh(0, 1000) == 0);
	s = VRSS_BUCKET_PENDING | vrss_bucket_pack(2, 5);
	assert_true(vrss_bucket_refresh(s, 1000) == s);
	s = VRSS_BUCKET_PARKED | vrss_bucket_pack(2, 5);
	assert_true(vrss_bucket_refresh(s, 1000) == s);
	s = VRSS_BUCKET_DELIVERING | 1;
	assert_true(vrss_bucket_refresh(s, 1000) == s);
	/* Frames still on the ring: its tail stands. */
	s = vrss_bucket_pack(2, 1001);
	assert_true(vrss_bucket_refresh(s, 1000) == s);
	/* Drained: the ring's head, same queue. */
	s = vrss_bucket_pack(2, 900);
	assert_true(vrss_bucket_refresh(s, 1000) == vrss_bucket_pack(2, 1000));
	s = vrss_bucket_pack(2, 0xfffffff0u);
	assert_true(vrss_bucket_refresh(s, 3) == vrss_bucket_pack(2, 3));
}

/*
 * The model of an idle bucket on a busy ring: the other buckets' frames
 * move the ring's head by @per_interval every interval, 2^33 frames in
 * all (the positions wrap twice).  Returns the first interval at which
 * the idle bucket, which sent nothing since its last frame long ago,
 * would look undrained (and park a new frame behind a ring that may
 * never move again), or -1 if it never does.
 */
static long idle_bucket(u32 per_interval, bool refresh)
{
	u32 head = 0xfffff000u;
	u64 s = vrss_bucket_pack(1, head);
	long i, intervals = (long)((1ULL << 33) / per_interval);

	for (i = 0; i < intervals; i++) {
		head += per_interval;
		if (!vrss_bucket_drained(s, head))
			return i;
		if (refresh)
			s = vrss_bucket_refresh(s, head);
	}
	return -1;
}

static void test_idle_bucket_at_the_wrap(void **state)
{
	(void)state;
	/* Without the refresh: stuck at 2^31 frames. */
	assert_int_equal(idle_bucket(1u << 20, false), (1L << 11) - 1);
	/* Refreshed every interval: never, at any rate below 2^31 a interval. */
	assert_int_equal(idle_bucket(1u << 20, true), -1);
	assert_int_equal(idle_bucket(1000003, true), -1);
	assert_int_equal(idle_bucket(0x7fffffffu, true), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pack),
		cmocka_unit_test(test_passed_at_the_wrap),
		cmocka_unit_test(test_in_flight_across_the_wrap),
		cmocka_unit_test(test_refresh_leaves_others_alone),
		cmocka_unit_test(test_idle_bucket_at_the_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
