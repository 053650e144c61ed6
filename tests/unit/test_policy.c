// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of include/vrss/policy.h, driven by synthetic load
 * traces.  A small model stands for the guest: the receive work W (in
 * percent of one CPU, softirq time) is split evenly over the queues in
 * use, each CPU also carries some background load (applications), and
 * nothing can be busier than 100 %.  Every interval of every trace is
 * checked against the width rules as policy_model.h states them.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <vrss/policy.h>

#include "policy_model.h"
#include "xorshift.h"

#define MAXQ	8

struct sim {
	struct vrss_policy *p;
	struct policy_model m;		/* what the width should be */
	unsigned int threshold, hysteresis, max;
	struct vrss_load raw[MAXQ];
	unsigned int changes;
	u64 rng;
};

static u32 sim_rand(struct sim *s)
{
	return xorshift_next(&s->rng);
}

static void sim_init(struct sim *s, unsigned int threshold,
		     unsigned int hysteresis, unsigned int max)
{
	memset(s, 0, sizeof(*s));
	s->p = calloc(1, sizeof(*s->p) + MAXQ * sizeof(s->p->load[0]));
	assert_non_null(s->p);
	s->p->nr = MAXQ;
	s->threshold = threshold;
	s->hysteresis = hysteresis;
	s->max = max;
	s->rng = 0x9e3779b97f4a7c15ull;
	assert_int_equal(vrss_policy_reset(s->p, threshold, max),
			 threshold ? 1 : max);
	model_reset(&s->m, threshold, max);
}

/* A knob write or a queue count change between intervals. */
static unsigned int sim_config(struct sim *s, unsigned int threshold,
			       unsigned int max)
{
	unsigned int w = vrss_policy_config(s->p, threshold, max);

	assert_int_equal(w, model_config(&s->m, threshold, max));
	return w;
}

static void sim_free(struct sim *s)
{
	free(s->p);
}

static void load(struct sim *s, unsigned int i, u32 busy, u32 net)
{
	s->raw[i].busy = busy;
	s->raw[i].net = net;
}

/*
 * One interval with raw loads already in s->raw; returns the width, which
 * must be what the rules give (policy_model.h) and what the policy keeps
 * for the next interval.
 */
static unsigned int sim_step_raw(struct sim *s)
{
	unsigned int old = s->p->width, w;

	w = vrss_policy_step(s->p, s->threshold, s->hysteresis, s->raw, s->max);
	assert_in_range(w, 1, s->max);
	if (!model_step(&s->m, s->threshold, s->hysteresis, s->raw, s->max,
			MAXQ, w))
		fail_msg("threshold %u hysteresis %u max %u: width %u -> %u, rules give %u",
			 s->threshold, s->hysteresis, s->max, old, w, s->m.width);
	assert_int_equal(s->p->width, s->m.width);
	if (w != old)
		s->changes++;
	return w;
}

/* One interval of work @work spread over the width, +-@noise on each CPU. */
static unsigned int sim_step(struct sim *s, unsigned int work,
			     unsigned int background, unsigned int noise)
{
	unsigned int i, width = s->p->width;

	for (i = 0; i < s->max; i++) {
		int net = i < width ? work / width : 0, l = background + net;

		if (noise)
			l += (int)(sim_rand(s) % (2 * noise + 1)) - (int)noise;
		s->raw[i].busy = l < 0 ? 0 : l > 100 ? 100 : l;
		s->raw[i].net = net > 100 ? 100 : net;
	}
	return sim_step_raw(s);
}

/*
 * Loads from a CPU's times: busy is what was neither idle nor stolen by the
 * host, net the softirq share, both of the wall time between readings.
 */
static void test_load_between(void **state)
{
	struct vrss_cpu_times a = { .idle = 1000, .steal = 50, .softirq = 7, .wall = 5000 };
	struct vrss_cpu_times b = a;
	struct vrss_load l;

	(void)state;
	/* 100 ms: 20 idle, 50 stolen, 10 in softirq: 30 % busy, 10 % net. */
	b.wall += 100000;
	b.idle += 20000;
	b.steal += 50000;
	b.softirq += 10000;
	assert_true(vrss_load_between(&a, &b, &l));
	assert_int_equal(l.busy, 30);
	assert_int_equal(l.net, 10);
	/* No steal: as before, 1 - idle / wall. */
	b.steal = a.steal;
	assert_true(vrss_load_between(&a, &b, &l));
	assert_int_equal(l.busy, 80);
	/* All of it stolen: not busy at all. */
	b = a;
	b.wall += 100000;
	b.steal += 100000;
	assert_true(vrss_load_between(&a, &b, &l));
	assert_int_equal(l.busy, 0);
	/* Counted a little past the wall time (tick sampling): 0, not less. */
	b.idle += 10;
	assert_true(vrss_load_between(&a, &b, &l));
	assert_int_equal(l.busy, 0);
}

/*
 * A count that went backwards (the idle time can, across a nohz update)
 * or a wall clock that did not advance make no sample: the load stays as
 * it was, where reading the idle time as 0 would be a raw 100 %.
 */
static void test_load_backwards(void **state)
{
	struct vrss_cpu_times a = { .idle = 500000, .steal = 0, .softirq = 0, .wall = 1000000 };
	struct vrss_cpu_times b = a;
	struct vrss_load l = { .busy = 42, .net = 7 };

	(void)state;
	b.wall += 100000;
	b.idle -= 3;
	assert_false(vrss_load_between(&a, &b, &l));
	b.idle = a.idle + 100;
	b.steal = a.steal;
	b.softirq = a.softirq;
	b.wall = a.wall;
	assert_false(vrss_load_between(&a, &b, &l));
	b.wall = a.wall + 100000;
	b.softirq = 0;
	a.softirq = 5;
	assert_false(vrss_load_between(&a, &b, &l));
	assert_int_equal(l.busy, 42);
	assert_int_equal(l.net, 7);
}

/*
 * An overcommitted host: the primary vCPU's thread gets a physical CPU
 * 40 % of the time and is idle in none of it.  Read as busy it would be
 * 100 % and spread onto vCPUs as starved as itself; its busy share is 40
 * % and the width stays 1.  Synthetic readings, 100 ms apart (TCG guests
 * report no steal).
 */
static void test_steal_heavy_stays_single(void **state)
{
	struct vrss_cpu_times t[2] = { { 0 } };
	struct sim s;
	unsigned int i;

	(void)state;
	sim_init(&s, 80, 20, 4);
	for (i = 1; i <= 50; i++) {
		t[i % 2] = t[(i + 1) % 2];
		t[i % 2].wall += 100000;
		t[i % 2].steal += 60000;
		t[i % 2].softirq += 30000;
		assert_true(vrss_load_between(&t[(i + 1) % 2], &t[i % 2], &s.raw[0]));
		assert_int_equal(s.raw[0].busy, 40);
		assert_int_equal(sim_step_raw(&s), 1);
	}
	sim_free(&s);
}

/* Spreading starts within 2 intervals of the primary CPU reaching it. */
static void test_spread_within_two_intervals(void **state)
{
	static const unsigned int levels[] = { 80, 81, 90, 100 };
	unsigned int max, l, i, t;
	struct sim s;

	(void)state;
	for (max = 2; max <= MAXQ; max *= 2) {
		for (l = 0; l < 4; l++) {
			sim_init(&s, 80, 20, max);
			for (i = 0; i < 50; i++)
				assert_int_equal(sim_step(&s, 30, 5, 10), 1);
			for (t = 1; t <= 2 && s.p->width == 1; t++)
				sim_step(&s, levels[l], 0, 0);
			assert_int_equal(s.p->width, 2);
			assert_in_range(t - 1, 1, 2);
			sim_free(&s);
		}
	}
}

/*
 * Every CPU in use at 100 % from the start: the width after N intervals,
 * worked out from the rule alone (vrss.rst: one queue more each second
 * interval in a row at or above the threshold, up to the queues in use),
 * is min(max, 1 + N / 2), whatever the threshold below 100.
 */
static void test_width_after_n_intervals_above(void **state)
{
	static const unsigned int thresholds[] = { 1, 50, 80, 99 };
	unsigned int t, max, n, want;
	struct sim s;

	(void)state;
	for (t = 0; t < 4; t++) {
		for (max = 1; max <= MAXQ; max++) {
			sim_init(&s, thresholds[t], 20, max);
			for (n = 1; n <= 2 * MAXQ + 4; n++) {
				want = 1 + n / 2 < max ? 1 + n / 2 : max;
				assert_int_equal(sim_step(&s, 100 * max, 0, 0), want);
				assert_int_equal(s.p->width, want);
			}
			sim_free(&s);
		}
	}
}

/* One interval above the threshold is a blip, not a reason to spread. */
static void test_single_blip_ignored(void **state)
{
	struct sim s;
	unsigned int i;

	(void)state;
	sim_init(&s, 80, 20, 4);
	for (i = 0; i < 200; i++)
		sim_step(&s, i % 10 == 0 ? 95 : 20, 0, 0);
	assert_int_equal(s.p->width, 1);
	assert_int_equal(s.changes, 0);
	sim_free(&s);
}

/*
 * Steady load (around the threshold and at many other levels) with noise:
 * after the ramp-up the width never changes over 1,000 intervals.
 */
static void test_steady_load_does_not_flap(void **state)
{
	unsigned int work, max, i, settled, w;
	struct sim s;

	(void)state;
	for (max = 2; max <= MAXQ; max *= 2) {
		for (work = 0; work <= 100 * max; work += 5) {
			sim_init(&s, 80, 20, max);
			for (i = 0; i < 100; i++)
				sim_step(&s, work, 3, 4);
			settled = s.changes;
			/* Ramp-up: one queue at a time, at most max - 1 steps. */
			assert_true(settled <= max - 1);
			/*
			 * Then no flapping: over 1,000 intervals the width may
			 * still grow once, when noise puts the CPUs at the
			 * threshold two intervals in a row, but never shrinks.
			 */
			w = s.p->width;
			for (i = 0; i < 1000; i++) {
				sim_step(&s, work, 3, 4);
				if (s.p->width < w)
					fail_msg("work %u on %u queues: width %u -> %u",
						 work, max, w, s.p->width);
				w = s.p->width;
			}
			if (s.changes > settled + 1)
				fail_msg("work %u on %u queues: %u width changes after settling",
					 work, max, s.changes - settled);
			/*
			 * Settled where it should: not so narrow that the CPUs
			 * stay at the threshold (unless every queue is in use),
			 * not so wide that one queue fewer would stay below
			 * threshold - hysteresis (noise and background aside).
			 */
			if (s.p->width < max && work / s.p->width >= 80 + 3 + 4)
				fail_msg("work %u: width %u too narrow", work, s.p->width);
			if (s.p->width > 1 && work / (s.p->width - 1) + 3 + 4 < 60)
				fail_msg("work %u: width %u too wide", work, s.p->width);
			sim_free(&s);
		}
	}
}

/* Exactly at the threshold: spreads once and stays. */
static void test_at_threshold_spreads_once(void **state)
{
	struct sim s;
	unsigned int i;

	(void)state;
	sim_init(&s, 80, 20, 4);
	for (i = 0; i < 1000; i++)
		sim_step(&s, 80, 0, 0);
	assert_int_equal(s.p->width, 2);
	assert_int_equal(s.changes, 1);
	sim_free(&s);
}

/* A load drop returns to SINGLE within the hysteresis window. */
static void test_drop_returns_to_single(void **state)
{
	static const unsigned int after[] = { 0, 10, 25, 45 };
	unsigned int a, i, t;
	struct sim s;

	(void)state;
	for (a = 0; a < 4; a++) {
		sim_init(&s, 80, 20, 4);
		for (i = 0; i < 100; i++)
			sim_step(&s, 350, 0, 0);
		assert_int_equal(s.p->width, 4);
		/* Smoothing halves the old load each interval, then the hold. */
		for (t = 0; t < VRSS_POLICY_SHRINK_HOLD + 4 && s.p->width > 1; t++)
			sim_step(&s, after[a], 0, 0);
		assert_int_equal(s.p->width, 1);
		assert_true(t >= VRSS_POLICY_SHRINK_HOLD);
		/* And stays there. */
		for (i = 0; i < 100; i++)
			assert_int_equal(sim_step(&s, after[a], 0, 0), 1);
		sim_free(&s);
	}
}

/* Shrinking is progressive too: to the fewest queues that keep below it. */
static void test_shrinks_to_fewest_queues(void **state)
{
	struct sim s;
	unsigned int i;

	(void)state;
	sim_init(&s, 80, 20, 8);
	for (i = 0; i < 100; i++)
		sim_step(&s, 600, 0, 0);
	assert_int_equal(s.p->width, 8);
	for (i = 0; i < 100; i++)
		sim_step(&s, 150, 0, 0);
	/* 150 % of work: 3 CPUs at 50 % (< 60), 2 would be at 75 %. */
	assert_int_equal(s.p->width, 3);
	sim_free(&s);
}

/* A hog on the primary CPU: spreads, and stays spread while it runs. */
static void test_hog_on_primary(void **state)
{
	struct sim s;
	unsigned int i, t;

	(void)state;
	sim_init(&s, 80, 20, 2);
	for (i = 0; i < 20; i++) {
		load(&s, 0, 10, 10);
		load(&s, 1, 5, 0);
		assert_int_equal(sim_step_raw(&s), 1);
	}
	for (t = 0; t < 2 && s.p->width == 1; t++) {
		load(&s, 0, 100, 10);
		load(&s, 1, 5, 0);
		sim_step_raw(&s);
	}
	assert_int_equal(s.p->width, 2);
	for (i = 0; i < 500; i++) {
		load(&s, 0, 100, 5);
		load(&s, 1, 8, 5);
		assert_int_equal(sim_step_raw(&s), 2);
	}
	for (t = 0; t < 10 && s.p->width > 1; t++) {
		load(&s, 0, 5, 3);
		load(&s, 1, 5, 3);
		sim_step_raw(&s);
	}
	assert_int_equal(s.p->width, 1);
	sim_free(&s);
}

/*
 * An application keeps queue 1's CPU busy: when the receive work is gone,
 * the width still contracts, since only receive work moves with buckets.
 * Receive work that would not fit on fewer CPUs keeps them.
 */
static void test_only_receive_work_moves(void **state)
{
	struct sim s;
	unsigned int i, t;

	(void)state;
	sim_init(&s, 80, 20, 2);
	assert_int_equal(sim_config(&s, 0, 2), 2);
	for (i = 0; i < 50; i++) {
		load(&s, 0, 50, 45);
		load(&s, 1, 50, 45);
		assert_int_equal(sim_step_raw(&s), 2);
	}
	for (t = 0; t < 10 && s.p->width > 1; t++) {
		load(&s, 0, 5, 2);
		load(&s, 1, 85, 2);
		sim_step_raw(&s);
	}
	assert_int_equal(s.p->width, 1);
	assert_in_range(t, VRSS_POLICY_SHRINK_HOLD, VRSS_POLICY_SHRINK_HOLD + 3);
	sim_free(&s);
}

/* threshold 0: always every queue; 100: never spread, even at 100 %. */
static void test_extremes(void **state)
{
	unsigned int i, max;
	struct sim s;

	(void)state;
	for (max = 1; max <= MAXQ; max++) {
		sim_init(&s, 0, 20, max);
		assert_int_equal(s.p->width, max);
		for (i = 0; i < 100; i++)
			assert_int_equal(sim_step(&s, i % 3 ? 0 : 800, 0, 0), max);
		sim_free(&s);

		sim_init(&s, 100, 20, max);
		for (i = 0; i < 100; i++)
			assert_int_equal(sim_step(&s, 800, 0, 0), 1);
		sim_free(&s);
	}
}

/* A knob change takes effect at once for 0 and 100, keeps the width else. */
static void test_config_changes(void **state)
{
	struct sim s;
	unsigned int i;

	(void)state;
	sim_init(&s, 80, 20, 4);
	assert_int_equal(sim_config(&s, 0, 4), 4);
	assert_int_equal(sim_config(&s, 100, 4), 1);
	assert_int_equal(sim_config(&s, 0, 4), 4);
	assert_int_equal(sim_config(&s, 50, 4), 4);
	assert_int_equal(sim_config(&s, 50, 2), 2);
	/* Fewer queues in use than the width: clamped at the next step too. */
	for (i = 0; i < 5; i++)
		sim_step(&s, 300, 0, 0);
	s.max = 1;
	assert_int_equal(sim_step(&s, 300, 0, 0), 1);
	/* hysteresis >= threshold: once spread, never shrinks. */
	s.max = 4;
	s.threshold = 30;
	s.hysteresis = 30;
	for (i = 0; i < 10; i++)
		sim_step(&s, 100, 0, 0);
	assert_true(s.p->width > 1);
	for (i = 0; i < 100; i++)
		assert_true(sim_step(&s, 0, 0, 0) > 1);
	sim_free(&s);
}

/*
 * Random loads (beyond 100 too), knobs and queue counts: width in 1..max,
 * and at every interval what the rules give (sim_step_raw()).
 */
static void test_random_traces_in_range(void **state)
{
	unsigned int i, j;
	struct sim s;

	(void)state;
	sim_init(&s, 80, 20, 4);
	for (i = 0; i < 200000; i++) {
		if (sim_rand(&s) % 97 == 0) {
			s.threshold = sim_rand(&s) % 101;
			s.hysteresis = sim_rand(&s) % 101;
		}
		if (sim_rand(&s) % 89 == 0) {
			s.max = 1 + sim_rand(&s) % MAXQ;
			if (sim_rand(&s) % 2)
				sim_config(&s, s.threshold, s.max);
		}
		for (j = 0; j < MAXQ; j++) {
			s.raw[j].busy = sim_rand(&s) % 250;
			s.raw[j].net = sim_rand(&s) % 250;
		}
		sim_step_raw(&s);
		for (j = 0; j < MAXQ; j++)
			assert_in_range(vrss_policy_load(s.p, j), 0, 100);
		for (j = 0; j < MAXQ; j++)
			assert_true(vrss_policy_net(s.p, j) <= vrss_policy_load(s.p, j));
	}
	sim_free(&s);
}

/* The smoothed load converges on a steady raw load and reports percent. */
static void test_smoothing(void **state)
{
	struct sim s;
	unsigned int i;

	(void)state;
	sim_init(&s, 100, 20, 2);
	for (i = 0; i < 30; i++) {
		load(&s, 0, 63, 40);
		load(&s, 1, 7, 90);
		sim_step_raw(&s);
	}
	assert_int_equal(vrss_policy_load(s.p, 0), 63);
	assert_int_equal(vrss_policy_net(s.p, 0), 40);
	assert_int_equal(vrss_policy_load(s.p, 1), 7);
	/* Receive work is part of the busy time, never more. */
	assert_int_equal(vrss_policy_net(s.p, 1), 7);
	s.raw[0].busy = 0;
	sim_step_raw(&s);
	assert_in_range(vrss_policy_load(s.p, 0), 31, 32);
	sim_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_between),
		cmocka_unit_test(test_load_backwards),
		cmocka_unit_test(test_steal_heavy_stays_single),
		cmocka_unit_test(test_spread_within_two_intervals),
		cmocka_unit_test(test_width_after_n_intervals_above),
		cmocka_unit_test(test_single_blip_ignored),
		cmocka_unit_test(test_steady_load_does_not_flap),
		cmocka_unit_test(test_at_threshold_spreads_once),
		cmocka_unit_test(test_drop_returns_to_single),
		cmocka_unit_test(test_shrinks_to_fewest_queues),
		cmocka_unit_test(test_hog_on_primary),
		cmocka_unit_test(test_only_receive_work_moves),
		cmocka_unit_test(test_extremes),
		cmocka_unit_test(test_config_changes),
		cmocka_unit_test(test_random_traces_in_range),
		cmocka_unit_test(test_smoothing),
	};

	return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
