// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of include/vrss/rebalance.h.  A small model stands for
 * the guest: each bucket brings in a steady receive demand (percent of one
 * CPU) and packets in proportion to it; a queue's CPU is as busy as the
 * demand of its buckets plus its background load, at most 100 %, and the
 * module's smoothing (vrss_policy_smooth(), vrss_rebal_weigh()) turns that
 * into the loads and weights the rebalancer sees.  Queue 0's CPU may also
 * carry the lower's receive work of every frame (@inline_pct of each
 * bucket's demand), as the primary does when the NIC delivers there.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <vrss/rebalance.h>

#include "xorshift.h"

#define MAXQ	8

struct sim {
	struct vrss_rebal r;
	unsigned int width, threshold, hysteresis;
	u32 eff[VRSS_INDIR_SIZE];
	u32 demand[VRSS_INDIR_SIZE];	/* percent of a CPU */
	u32 light[VRSS_INDIR_SIZE];	/* packets of flows that cost ~nothing */
	u32 bg[MAXQ];			/* background (application) load */
	u32 inline_pct;			/* the lower's work on queue 0's CPU */
	bool stalled;			/* the heavy flows' sender is not running */
	u32 weight[VRSS_INDIR_SIZE];	/* smoothed */
	struct vrss_load load[MAXQ];	/* smoothed, fixed point */
	unsigned int moves[VRSS_INDIR_SIZE];
	u64 seen[VRSS_INDIR_SIZE];	/* bit q: the bucket was on queue q */
	unsigned int returns;		/* a bucket back on a queue it left */
	unsigned int steps, rebalances;
	u64 rng;
};

static u32 sim_rand(struct sim *s)
{
	return xorshift_next(&s->rng);
}

static void sim_init(struct sim *s, unsigned int width)
{
	unsigned int b;

	memset(s, 0, sizeof(*s));
	s->width = width;
	s->threshold = VRSS_THRESHOLD_DEFAULT;
	s->hysteresis = VRSS_HYSTERESIS_DEFAULT;
	s->rng = 0x9e3779b97f4a7c15ull;
	vrss_indir_fill_default(s->eff, width);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		s->seen[b] = 1ull << s->eff[b];
	vrss_rebal_reset(&s->r);
}

/* The raw busy and receive load of queue @q's CPU under the model. */
static struct vrss_load sim_raw(const struct sim *s, unsigned int q)
{
	struct vrss_load l = { 0, 0 };
	unsigned int b;
	u32 net = 0;

	if (s->stalled)
		return (struct vrss_load){ s->bg[q], 0 };
	for (b = 0; b < VRSS_INDIR_SIZE; b++) {
		if (s->eff[b] == q)
			net += s->demand[b];
		if (!q)
			net += s->demand[b] * s->inline_pct / 100;
	}
	l.busy = net + s->bg[q];
	if (l.busy > VRSS_PERCENT_MAX)
		l.busy = VRSS_PERCENT_MAX;
	l.net = net < l.busy ? net : l.busy;
	return l;
}

static u32 sim_busiest(const struct sim *s)
{
	u32 max = 0, busy;
	unsigned int q;

	for (q = 0; q < s->width; q++) {
		busy = sim_raw(s, q).busy;
		if (busy > max)
			max = busy;
	}
	return max;
}

/* One interval: sample, smooth, rebalance, apply. */
static unsigned int sim_step(struct sim *s, struct vrss_rebal_result *res)
{
	u32 packets[VRSS_INDIR_SIZE], before[VRSS_INDIR_SIZE];
	struct vrss_load load[MAXQ];
	struct vrss_rebal_result dummy;
	unsigned int b, q, moved, changed = 0;

	if (!res)
		res = &dummy;
	for (q = 0; q < s->width; q++) {
		struct vrss_load raw = sim_raw(s, q);

		s->load[q].busy = vrss_policy_smooth(s->load[q].busy, raw.busy);
		s->load[q].net = vrss_policy_smooth(s->load[q].net, raw.net);
	}
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		packets[b] = (s->stalled ? 0 : s->demand[b] * 10) + s->light[b];
	vrss_rebal_weigh(s->weight, packets);
	/*
	 * As gate.c tells it when queue 0's CPU is the primary: its own
	 * part of that CPU's receive work.
	 */
	memcpy(load, s->load, sizeof(load));
	if (s->inline_pct)
		load[0].net = vrss_rebal_primary_net(load[0].net, s->eff,
						     s->weight);
	memcpy(before, s->eff, sizeof(before));
	moved = vrss_rebal_step(&s->r, s->eff, s->weight, load, s->width,
				s->threshold, s->hysteresis, res);
	for (b = 0; b < VRSS_INDIR_SIZE; b++) {
		if (s->eff[b] == before[b])
			continue;
		/* Only from the busiest to the least busy, never elsewhere. */
		assert_int_equal(before[b], res->from);
		assert_int_equal(s->eff[b], res->to);
		assert_true(s->eff[b] < s->width);
		if (s->seen[b] & (1ull << s->eff[b]))
			s->returns++;
		s->seen[b] |= 1ull << s->eff[b];
		s->moves[b]++;
		changed++;
	}
	assert_int_equal(moved, changed);
	assert_int_equal(res->moved, moved);
	s->steps++;
	s->rebalances += !!moved;
	return moved;
}

static void sim_run(struct sim *s, unsigned int n)
{
	while (n--)
		sim_step(s, NULL);
}

/*
 * The heavy flows' sender stops for @n intervals (the spread CPUs go idle,
 * the light flows go on), then sends again for 30.
 */
static void sim_stall(struct sim *s, unsigned int n)
{
	s->stalled = true;
	sim_run(s, n);
	s->stalled = false;
	sim_run(s, 30);
}

/* Intervals until the first rebalance (at most 16), its result in @res. */
static void sim_first_move(struct sim *s, struct vrss_rebal_result *res)
{
	unsigned int i;

	for (i = 0; i < 16 && !sim_step(s, res); i++)
		;
}

/*
 * Two heavy flows whose buckets meet in queue 1 of 4, light flows
 * everywhere: the heavy ones end on different CPUs, the light ones stay.
 */
static void test_colliding_heavy_flows_split(void **state)
{
	struct sim s;
	u32 start[VRSS_INDIR_SIZE];
	unsigned int b;

	(void)state;
	sim_init(&s, 4);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		s.light[b] = 1;
	s.demand[1] = 45;		/* queue 1 */
	s.demand[5] = 45;		/* queue 1 */
	memcpy(start, s.eff, sizeof(start));
	sim_run(&s, 10);
	assert_int_not_equal(s.eff[1], s.eff[5]);
	assert_true(sim_busiest(&s) <= 45);
	/* One move did it, and no other bucket went anywhere. */
	assert_int_equal(s.rebalances, 1);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		if (b != 1 && b != 5)
			assert_int_equal(s.eff[b], start[b]);
	assert_int_equal(s.eff[1] == start[1] || s.eff[5] == start[5], 1);
	sim_run(&s, 200);
	assert_int_equal(s.rebalances, 1);
}

/*
 * Three heavy flows saturating one queue, idle queues and light flows: two
 * of them move, to different queues, and the light ones (under 1 %) stay.
 */
static void test_three_heavy_over_three_queues(void **state)
{
	struct sim s;
	u32 start[VRSS_INDIR_SIZE];
	unsigned int b;

	(void)state;
	sim_init(&s, 4);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		s.light[b] = 2;
	s.demand[2] = 45;		/* queue 2, saturated */
	s.demand[6] = 45;
	s.demand[10] = 45;
	memcpy(start, s.eff, sizeof(start));
	sim_run(&s, 20);
	assert_int_not_equal(s.eff[2], s.eff[6]);
	assert_int_not_equal(s.eff[2], s.eff[10]);
	assert_int_not_equal(s.eff[6], s.eff[10]);
	assert_int_equal(s.rebalances, 2);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		if (b != 2 && b != 6 && b != 10)
			assert_int_equal(s.eff[b], start[b]);
	sim_run(&s, 200);
	assert_int_equal(s.rebalances, 2);
	assert_int_equal(s.returns, 0);
}

/*
 * rebalance.sh's flows: three heavy ones from one sender on queue 1, a
 * light one on each other queue, queue 0's CPU busy with the senders and
 * the lower's inline work.  Once the heavy ones are apart, their sender
 * stops for a few intervals (a vCPU it shares is busy): the spread CPUs
 * go idle and the primary's receive work fades, but the light flows'
 * packets, now alone in their intervals, must not look like that work
 * and move.
 */
static void test_sender_stall_moves_nothing(void **state)
{
	u32 start[VRSS_INDIR_SIZE], split[VRSS_INDIR_SIZE];
	unsigned int b, i, rebalances;
	struct sim s;

	(void)state;
	sim_init(&s, 4);
	s.threshold = 50;
	s.hysteresis = 20;
	s.bg[0] = 100;
	s.inline_pct = 50;
	s.demand[1] = 45;		/* queue 1 */
	s.demand[5] = 45;
	s.demand[9] = 45;
	s.light[0] = 5;			/* queues 0, 2 and 3 */
	s.light[2] = 5;
	s.light[3] = 5;
	memcpy(start, s.eff, sizeof(start));
	sim_run(&s, 20);
	assert_int_equal(s.rebalances, 2);
	assert_int_not_equal(s.eff[1], s.eff[5]);
	assert_int_not_equal(s.eff[1], s.eff[9]);
	assert_int_not_equal(s.eff[5], s.eff[9]);
	memcpy(split, s.eff, sizeof(split));
	for (i = 1; i <= 4; i++) {
		rebalances = s.rebalances;
		sim_stall(&s, i);
		assert_int_equal(s.rebalances, rebalances);
		assert_memory_equal(s.eff, split, sizeof(split));
	}
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		if (!s.demand[b])
			assert_int_equal(s.eff[b], start[b]);
}

/*
 * The same on a spread queue: a heavy flow and a light one on queue 1,
 * whose CPU an application keeps busy too.  While the heavy flow's sender
 * stops, the CPU stays above the threshold for a few intervals with the
 * light flow's packets alone: they must not look like its receive work.
 * (The heavy one may move once its sender is back: the smoothed loads
 * catching up can make it fit in half the gap.)
 */
static void test_sender_stall_on_spread_queue(void **state)
{
	unsigned int i;
	struct sim s;

	(void)state;
	sim_init(&s, 3);
	s.threshold = 50;
	s.hysteresis = 20;
	s.bg[1] = 40;
	s.demand[1] = 45;		/* queue 1 */
	s.light[4] = 5;			/* queue 1 */
	sim_run(&s, 30);
	assert_int_equal(s.rebalances, 0);
	for (i = 1; i <= 4; i++) {
		sim_stall(&s, i);
		assert_int_equal(s.moves[4], 0);
		assert_int_equal(s.eff[4], 1);
	}
	assert_int_equal(s.returns, 0);
}

/* Light flows (each under 1 % of a CPU) never move, however busy. */
static void test_light_flows_stay(void **state)
{
	struct sim s;
	u32 start[VRSS_INDIR_SIZE];

	(void)state;
	sim_init(&s, 2);
	s.bg[1] = 95;			/* an application on queue 1's CPU */
	s.light[1] = 5;
	s.light[3] = 5;
	memcpy(start, s.eff, sizeof(start));
	sim_run(&s, 50);
	/* No receive work on the busy CPU: nothing to move. */
	assert_memory_equal(s.eff, start, sizeof(start));
	assert_int_equal(s.rebalances, 0);
}

/*
 * The busiest CPU is busy with an application, not with its buckets: the
 * next busiest above the threshold gives its heavy flow away instead.
 */
static void test_busy_application_gives_way(void **state)
{
	struct vrss_rebal_result res;
	struct sim s;

	(void)state;
	sim_init(&s, 3);
	s.bg[0] = 100;			/* queue 0's CPU: an application */
	s.light[0] = 1;
	s.demand[1] = 50;		/* queue 1: two heavy flows */
	s.demand[4] = 40;
	sim_first_move(&s, &res);
	assert_int_equal(res.from, 1);
	assert_int_equal(res.to, 2);
	assert_int_equal(res.moved, 1);
	assert_int_equal(s.eff[4], 2);	/* 50 is over half the gap, 40 is not */
	assert_int_equal(s.eff[1], 1);
	assert_int_equal(s.eff[0], 0);
}

/*
 * The receive-bound guest of make bench: 2 vCPUs, 8 equal streams of
 * which hash luck put 7 on the primary's queue, whose CPU also does the
 * lower's work of every frame; the other vCPU is busy with the receiving
 * application, above threshold - hysteresis.  Receive work moves to it
 * until the two queues' receive work is within the hysteresis, and
 * nothing goes back.
 */
static void test_receive_bound_both_busy(void **state)
{
	struct vrss_rebal_result res;
	unsigned int b, on0 = 0;
	struct sim s;

	(void)state;
	sim_init(&s, 2);
	s.inline_pct = 25;
	s.bg[1] = 70;			/* the application */
	for (b = 0; b < 14; b += 2)	/* queue 0 */
		s.demand[b] = 12;
	s.demand[1] = 12;		/* queue 1 */
	sim_first_move(&s, &res);
	assert_int_equal(res.from, 0);
	assert_int_equal(res.to, 1);
	assert_true(res.moved > 0);
	sim_run(&s, 300);
	for (b = 0; b < 14; b += 2)
		on0 += s.eff[b] == 0;
	assert_int_equal(on0, 4);	/* and 4 on 1, with the app */
	assert_int_equal(s.returns, 0);
	assert_true(s.rebalances <= 2);
	assert_true(sim_raw(&s, 0).busy <= s.threshold);
}

/* A load of @busy and @net percent, fixed point. */
static struct vrss_load load_of(u32 busy, u32 net)
{
	return (struct vrss_load){ busy << VRSS_LOAD_SHIFT, net << VRSS_LOAD_SHIFT };
}

/*
 * 3 queues, the default table, no holds: weight 100 on the first 48
 * buckets (with @only0, only on those of queue 0 among them).
 */
static void three_queues(struct vrss_rebal *r, u32 *eff, u32 *weight, bool only0)
{
	unsigned int b;

	vrss_rebal_reset(r);
	vrss_indir_fill_default(eff, 3);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		weight[b] = b < 48 && (!only0 || eff[b] == 0) ? 100 : 0;
}

/*
 * All busy, 3 queues: the primary's receive work goes to the queue with
 * the least receive work among those less busy than the primary, not to
 * one saturated by an application, however little receive work it has.
 */
static void test_receive_bound_not_onto_busier(void **state)
{
	u32 weight[VRSS_INDIR_SIZE], eff[VRSS_INDIR_SIZE];
	struct vrss_load load[3];
	struct vrss_rebal_result res;
	struct vrss_rebal r;
	unsigned int b;

	(void)state;
	three_queues(&r, eff, weight, true);	/* 16 buckets of queue 0 */
	load[0] = load_of(95, 80);
	load[1] = load_of(100, 5);
	load[2] = load_of(75, 30);
	assert_true(vrss_rebal_step(&r, eff, weight, load, 3, 80, 20, &res) > 0);
	assert_int_equal(res.from, 0);
	assert_int_equal(res.to, 2);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		assert_int_not_equal(eff[b] == 1, !(b % 3 == 1));
}

/*
 * All busy, 3 queues: the busiest has no more receive work than the one
 * it could give to, by the hysteresis; the next busiest has, and gives.
 */
static void test_receive_bound_next_busiest(void **state)
{
	u32 weight[VRSS_INDIR_SIZE], eff[VRSS_INDIR_SIZE];
	struct vrss_load load[3];
	struct vrss_rebal_result res;
	struct vrss_rebal r;

	(void)state;
	three_queues(&r, eff, weight, false);
	/* Queue 2, busiest, 40 % of receive work: 1 has 25, within 20. */
	load[0] = load_of(70, 60);
	load[1] = load_of(90, 25);
	load[2] = load_of(100, 40);
	assert_int_equal(vrss_rebal_step(&r, eff, weight, load, 3, 60, 20, &res), 0);
	/* Queue 0 above the threshold too, 60 against 1's 25: it gives. */
	load[0].busy = 95 << VRSS_LOAD_SHIFT;
	assert_true(vrss_rebal_step(&r, eff, weight, load, 3, 60, 20, &res) > 0);
	assert_int_equal(res.from, 0);
	assert_int_equal(res.to, 1);
}

/* One elephant bigger than a vCPU, alone on its queue: it stays. */
static void test_elephant_alone_stays(void **state)
{
	struct sim s;
	u32 start[VRSS_INDIR_SIZE];

	(void)state;
	sim_init(&s, 2);
	s.demand[1] = 150;		/* more than one CPU can do */
	memcpy(start, s.eff, sizeof(start));
	sim_run(&s, 300);
	assert_memory_equal(s.eff, start, sizeof(start));
	assert_int_equal(s.rebalances, 0);
}

/*
 * An elephant with smaller flows beside it: the small ones leave, the
 * elephant stays, and nothing ping-pongs at steady load.
 */
static void test_elephant_neighbours_leave(void **state)
{
	struct sim s;

	(void)state;
	sim_init(&s, 2);
	s.demand[1] = 80;		/* the elephant, queue 1 */
	s.demand[3] = 10;
	s.demand[5] = 10;
	s.demand[0] = 5;		/* queue 0 */
	sim_run(&s, 300);
	assert_int_equal(s.eff[1], 1);
	assert_int_equal(s.eff[3], 0);
	assert_int_equal(s.eff[5], 0);
	assert_int_equal(s.moves[1], 0);
	assert_int_equal(s.moves[3], 1);
	assert_int_equal(s.moves[5], 1);
	assert_int_equal(s.returns, 0);
}

/* Equal buckets and equal queues: the lowest bucket to the lowest queue. */
static void test_ties(void **state)
{
	struct vrss_rebal_result res;
	struct sim s;

	(void)state;
	sim_init(&s, 4);
	s.demand[1] = 30;		/* queue 1 */
	s.demand[5] = 30;
	s.demand[9] = 30;
	s.demand[13] = 30;
	sim_first_move(&s, &res);
	assert_int_equal(res.from, 1);
	assert_int_equal(res.to, 0);	/* queues 0, 2 and 3 are all idle */
	/*
	 * Saturated: each seems to cost 25 %, half the gap is 50: the two
	 * lowest of the equal buckets move.
	 */
	assert_int_equal(res.moved, 2);
	assert_int_equal(s.eff[1], 0);
	assert_int_equal(s.eff[5], 0);
	assert_int_equal(s.eff[9], 1);
	assert_int_equal(s.eff[13], 1);
	sim_run(&s, 300);
	assert_int_equal(s.returns, 0);
	/* 60 % each is under the threshold: that is where it stays. */
	assert_int_equal(sim_busiest(&s), 60);
	assert_int_equal(s.rebalances, 1);
}

/* The gates: width, threshold, the least busy CPU, settle and hold. */
static void test_gates(void **state)
{
	u32 weight[VRSS_INDIR_SIZE], eff[VRSS_INDIR_SIZE], start[VRSS_INDIR_SIZE];
	struct vrss_load load[MAXQ];
	struct vrss_rebal_result res;
	struct vrss_rebal r;
	unsigned int b;

	(void)state;
	vrss_rebal_reset(&r);
	vrss_indir_fill_default(eff, 2);
	memcpy(start, eff, sizeof(eff));
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		weight[b] = eff[b] == 1 ? 100 : 0;
	load[0] = (struct vrss_load){ 10 << VRSS_LOAD_SHIFT, 10 << VRSS_LOAD_SHIFT };
	load[1] = (struct vrss_load){ 100 << VRSS_LOAD_SHIFT, 100 << VRSS_LOAD_SHIFT };

	/* SINGLE, a threshold at or under the hysteresis, and 100: never. */
	assert_int_equal(vrss_rebal_step(&r, eff, weight, load, 1, 80, 20, &res), 0);
	assert_int_equal(vrss_rebal_step(&r, eff, weight, load, 2, 20, 20, &res), 0);
	assert_int_equal(vrss_rebal_step(&r, eff, weight, load, 2, 0, 20, &res), 0);
	assert_int_equal(vrss_rebal_step(&r, eff, weight, load, 2, 100, 0, &res), 0);
	/* Busiest at the threshold, not above it. */
	load[1].busy = 80 << VRSS_LOAD_SHIFT;
	assert_int_equal(vrss_rebal_step(&r, eff, weight, load, 2, 80, 20, &res), 0);
	/*
	 * The other at threshold - hysteresis, not below it: it is the
	 * primary, which takes no receive work from a busy queue.
	 */
	load[1].busy = 100 << VRSS_LOAD_SHIFT;
	load[0].busy = 60 << VRSS_LOAD_SHIFT;
	assert_int_equal(vrss_rebal_step(&r, eff, weight, load, 2, 80, 20, &res), 0);
	assert_memory_equal(eff, start, sizeof(eff));
	/*
	 * Both busy: the primary's receive work goes to the other CPU (busy
	 * with an application) only while it has more by over the
	 * hysteresis.
	 */
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		weight[b] = eff[b] == 0 && b < 32 ? 100 : 0;
	load[0] = (struct vrss_load){ 100 << VRSS_LOAD_SHIFT, 40 << VRSS_LOAD_SHIFT };
	load[1] = (struct vrss_load){ 90 << VRSS_LOAD_SHIFT, 20 << VRSS_LOAD_SHIFT };
	assert_int_equal(vrss_rebal_step(&r, eff, weight, load, 2, 80, 20, &res), 0);
	assert_memory_equal(eff, start, sizeof(eff));
	load[1].net = 19 << VRSS_LOAD_SHIFT;
	/* Half the gap of 21 is 10.5 %, 2.5 % a bucket (16): 4 move. */
	assert_int_equal(vrss_rebal_step(&r, eff, weight, load, 2, 80, 20, &res), 4);
	assert_int_equal(res.from, 0);
	assert_int_equal(res.to, 1);
	vrss_rebal_reset(&r);
	vrss_indir_fill_default(eff, 2);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		weight[b] = eff[b] == 1 ? 100 : 0;
	load[0] = (struct vrss_load){ 10 << VRSS_LOAD_SHIFT, 10 << VRSS_LOAD_SHIFT };
	load[1] = (struct vrss_load){ 100 << VRSS_LOAD_SHIFT, 100 << VRSS_LOAD_SHIFT };

	/* Both gates open: half of the gap's worth moves (45 % of 90). */
	load[0].busy = 10 << VRSS_LOAD_SHIFT;
	assert_int_equal(vrss_rebal_step(&r, eff, weight, load, 2, 80, 20, &res), 28);
	assert_int_equal(res.from, 1);
	assert_int_equal(res.to, 0);
	assert_true(res.load <= 45 << VRSS_LOAD_SHIFT);
	assert_true(res.load > 43 << VRSS_LOAD_SHIFT);
	/* Settling: the next two intervals move nothing. */
	assert_int_equal(vrss_rebal_step(&r, eff, weight, load, 2, 80, 20, &res), 0);
	assert_int_equal(vrss_rebal_step(&r, eff, weight, load, 2, 80, 20, &res), 0);
	/* Then the buckets still on 1 may; those that moved are held. */
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		weight[b] = 100;
	assert_true(vrss_rebal_step(&r, eff, weight, load, 2, 80, 20, &res) > 0);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		if (start[b] == 0)
			assert_int_equal(eff[b], 0);

	/* Reset forgets holds and settling. */
	vrss_rebal_reset(&r);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		assert_int_equal(r.hold[b], 0);
	assert_int_equal(r.settle, 0);
}

/*
 * Random steady loads over many seeds: the busiest CPU never gets busier
 * by a rebalance, no bucket comes back to a queue it left, and the moves
 * stop.
 */
static void test_random_steady_loads_settle(void **state)
{
	unsigned int seed, b, i;
	struct sim s;

	(void)state;
	for (seed = 1; seed <= 200; seed++) {
		sim_init(&s, 2 + seed % (MAXQ - 1));
		s.rng ^= seed * 0x2545f4914f6cdd1dull;
		for (i = 0; i < 8; i++)
			s.demand[sim_rand(&s) % VRSS_INDIR_SIZE] = sim_rand(&s) % 70;
		for (b = 0; b < VRSS_INDIR_SIZE; b++)
			if (sim_rand(&s) % 4 == 0)
				s.demand[b] += sim_rand(&s) % 3;
		for (i = 0; i < s.width; i++)
			s.bg[i] = sim_rand(&s) % 4 == 0 ? sim_rand(&s) % 40 : 0;
		sim_run(&s, 30);	/* the smoothed loads catch up */
		for (i = 0; i < 400; i++) {
			u32 before = sim_busiest(&s);

			if (sim_step(&s, NULL))
				assert_true(sim_busiest(&s) <= before);
		}
		assert_int_equal(s.returns, 0);
		/* Quiet at the end: the last 100 intervals moved nothing. */
		i = s.rebalances;
		sim_run(&s, 100);
		assert_int_equal(s.rebalances, i);
	}
}

/*
 * Random receive-bound guests: inline work on the primary, applications
 * keeping the other CPUs busy, random flows.  Every run settles (the last
 * 100 intervals move nothing), and a bucket goes back to a queue it left
 * in at most 1 % of them (where the two rules meet: see rebalance.h).
 */
static void test_receive_bound_random_settle(void **state)
{
	unsigned int seed, b, i, returning = 0, runs = 1000;
	struct sim s;

	(void)state;
	for (seed = 1; seed <= runs; seed++) {
		sim_init(&s, 2 + seed % 3);
		s.rng ^= seed * 0x2545f4914f6cdd1dull;
		s.inline_pct = sim_rand(&s) % 40;
		for (i = 0; i < 8; i++)
			s.demand[sim_rand(&s) % VRSS_INDIR_SIZE] = 5 + sim_rand(&s) % 20;
		for (b = 0; b < VRSS_INDIR_SIZE; b++)
			if (sim_rand(&s) % 4 == 0)
				s.demand[b] += sim_rand(&s) % 3;
		for (i = 1; i < s.width; i++)
			s.bg[i] = 30 + sim_rand(&s) % 71;
		sim_run(&s, 400);
		returning += !!s.returns;
		i = s.rebalances;
		sim_run(&s, 100);
		assert_int_equal(s.rebalances, i);
	}
	assert_true(returning * 100 <= runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_colliding_heavy_flows_split),
		cmocka_unit_test(test_three_heavy_over_three_queues),
		cmocka_unit_test(test_sender_stall_moves_nothing),
		cmocka_unit_test(test_sender_stall_on_spread_queue),
		cmocka_unit_test(test_light_flows_stay),
		cmocka_unit_test(test_busy_application_gives_way),
		cmocka_unit_test(test_receive_bound_both_busy),
		cmocka_unit_test(test_receive_bound_not_onto_busier),
		cmocka_unit_test(test_receive_bound_next_busiest),
		cmocka_unit_test(test_receive_bound_random_settle),
		cmocka_unit_test(test_elephant_alone_stays),
		cmocka_unit_test(test_elephant_neighbours_leave),
		cmocka_unit_test(test_ties),
		cmocka_unit_test(test_gates),
		cmocka_unit_test(test_random_steady_loads_settle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
