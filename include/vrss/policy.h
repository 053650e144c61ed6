/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The load policy: how many queues spread the flows ("width"), decided
 * once per interval from the busy fraction of the queues' CPUs.  Pure C,
 * shared by the module and the host-side unit tests, which drive it with
 * synthetic load traces.
 *
 * Each sample says, per CPU, how busy it was in all (busy) and how much of
 * that was receive work, i.e. softirq time (net), in percent of the
 * interval.
 *
 * Width 1 is SINGLE: every bucket on the primary queue, so below the
 * threshold vrss costs what the lower device costs.  The policy spreads
 * (width 2 and up, one queue at a time) while the mean busy load of the
 * CPUs in use is at or above the threshold for VRSS_POLICY_GROW_HOLD
 * intervals in a row.  It shrinks, straight to the smallest width w that
 * would keep the CPUs below threshold - hysteresis, once that has held for
 * VRSS_POLICY_SHRINK_HOLD intervals.  What w CPUs would carry is their own
 * busy load plus the receive work of the CPUs that would leave: only the
 * receive work moves with the buckets, an application busy on a queue's
 * CPU stays where it is.  Spreading moves work without changing its sum,
 * so a load that made the policy spread cannot make it shrink again: at
 * steady load the width does not flap.
 */
#ifndef _VRSS_POLICY_H
#define _VRSS_POLICY_H

#include <linux/types.h>

/* Knob ranges and defaults (module parameters and sysfs). */
#define VRSS_THRESHOLD_DEFAULT		80
#define VRSS_HYSTERESIS_DEFAULT		20
#define VRSS_INTERVAL_MS_DEFAULT	100
#define VRSS_PERCENT_MAX		100
#define VRSS_INTERVAL_MS_MIN		10
#define VRSS_INTERVAL_MS_MAX		10000

#define VRSS_POLICY_GROW_HOLD		2
#define VRSS_POLICY_SHRINK_HOLD		3

/* Smoothed loads are percent in fixed point, 8 fractional bits. */
#define VRSS_LOAD_SHIFT			8

/*
 * One CPU's cumulative times in microseconds, as /proc/stat counts them:
 * idle (iowait included), stolen by the host, in softirq; and the wall
 * clock they were read at.
 */
struct vrss_cpu_times {
	u64 idle;
	u64 steal;
	u64 softirq;
	u64 wall;
};

static inline u32 vrss_load_percent(u64 part, u64 whole)
{
	if (part >= whole)
		return VRSS_PERCENT_MAX;
	return (u32)(part * VRSS_PERCENT_MAX / whole);
}

/* The load of one queue's CPU over an interval, in percent. */
struct vrss_load {
	u32 busy;		/* not idle (nor waiting for I/O) */
	u32 net;		/* of which softirq: the receive work */
};

/*
 * The load between two readings @a and @b of a CPU's times.  Busy is what
 * was neither idle nor stolen: a vCPU whose thread waited for a physical
 * CPU did no work, and a host that busy would not run spread work there
 * either.  No sample (false, @load untouched) when the wall clock did not
 * advance or a count went backwards (the idle time can, by a few
 * microseconds, across a nohz update): read as idle 0, it would be a
 * raw 100 % counting toward a spread.
 */
static inline bool vrss_load_between(const struct vrss_cpu_times *a,
				     const struct vrss_cpu_times *b,
				     struct vrss_load *load)
{
	u64 wall;

	if (b->wall <= a->wall || b->idle < a->idle || b->steal < a->steal ||
	    b->softirq < a->softirq)
		return false;
	wall = b->wall - a->wall;
	load->busy = VRSS_PERCENT_MAX -
		     vrss_load_percent((b->idle - a->idle) + (b->steal - a->steal), wall);
	load->net = vrss_load_percent(b->softirq - a->softirq, wall);
	return true;
}

struct vrss_policy {
	unsigned int width;	/* queues in use for spreading, >= 1 */
	unsigned int above;	/* intervals in a row at or above threshold */
	unsigned int below;	/* intervals in a row a smaller width would do */
	unsigned int nr;	/* entries of load[] */
	struct vrss_load load[]; /* per queue, fixed point, EWMA weight 1/2 */
};

static inline u32 vrss_policy_round(u32 fixed)
{
	return (fixed + (1u << (VRSS_LOAD_SHIFT - 1))) >> VRSS_LOAD_SHIFT;
}

/* The smoothed busy load of queue @i's CPU in whole percent, rounded. */
static inline unsigned int vrss_policy_load(const struct vrss_policy *p,
					    unsigned int i)
{
	return vrss_policy_round(p->load[i].busy);
}

/* Its smoothed receive (softirq) load. */
static inline unsigned int vrss_policy_net(const struct vrss_policy *p,
					   unsigned int i)
{
	return vrss_policy_round(p->load[i].net);
}

static inline u32 vrss_policy_smooth(u32 old, u32 raw)
{
	if (raw > VRSS_PERCENT_MAX)
		raw = VRSS_PERCENT_MAX;
	return (old + (raw << VRSS_LOAD_SHIFT)) / 2;
}

/*
 * Knobs changed (or sampling starts): the extremes take effect at once,
 * threshold 0 being plain RSS over @max queues and 100 never spreading;
 * otherwise the width is kept (within @max) and the counts start over.
 */
static inline unsigned int vrss_policy_config(struct vrss_policy *p,
					      unsigned int threshold,
					      unsigned int max)
{
	if (!max)
		max = 1;
	if (threshold == 0)
		p->width = max;
	else if (threshold >= VRSS_PERCENT_MAX || !p->width)
		p->width = 1;
	else if (p->width > max)
		p->width = max;
	p->above = 0;
	p->below = 0;
	return p->width;
}

/* Start from SINGLE with no history, as when sampling begins. */
static inline unsigned int vrss_policy_reset(struct vrss_policy *p,
					     unsigned int threshold,
					     unsigned int max)
{
	unsigned int i;

	for (i = 0; i < p->nr; i++) {
		p->load[i].busy = 0;
		p->load[i].net = 0;
	}
	p->width = 1;
	return vrss_policy_config(p, threshold, max);
}

/*
 * One interval.  @raw[i] is the load of queue i's CPU over the interval,
 * for the @max queues the indirection table can use, primary first
 * (max <= p->nr).  Returns the new width, within 1..max.
 */
static inline unsigned int vrss_policy_step(struct vrss_policy *p,
					    unsigned int threshold,
					    unsigned int hysteresis,
					    const struct vrss_load *raw,
					    unsigned int max)
{
	u32 raw_sum = 0, sum = 0, low, kept, moved;
	unsigned int i, w, width;

	if (max > p->nr)
		max = p->nr;
	for (i = 0; i < max; i++) {
		u32 net = raw[i].net < raw[i].busy ? raw[i].net : raw[i].busy;

		p->load[i].busy = vrss_policy_smooth(p->load[i].busy, raw[i].busy);
		p->load[i].net = vrss_policy_smooth(p->load[i].net, net);
	}

	if (threshold == 0 || threshold >= VRSS_PERCENT_MAX || max <= 1)
		return vrss_policy_config(p, threshold, max);
	if (p->width > max) {
		p->width = max;
		p->above = 0;
		p->below = 0;
	}
	width = p->width;

	for (i = 0; i < width; i++) {
		raw_sum += raw[i].busy > VRSS_PERCENT_MAX ? VRSS_PERCENT_MAX : raw[i].busy;
		sum += p->load[i].busy;
	}

	/* Above: the raw or the smoothed mean reaches the threshold. */
	if (raw_sum >= threshold * width ||
	    sum >= (threshold << VRSS_LOAD_SHIFT) * width) {
		p->below = 0;
		if (++p->above >= VRSS_POLICY_GROW_HOLD && width < max) {
			p->width = width + 1;
			p->above = 0;
		}
		return p->width;
	}
	p->above = 0;

	/*
	 * Below: the fewest queues whose CPUs, with the receive work of the
	 * ones that would leave, would stay under threshold - hysteresis.
	 */
	if (threshold <= hysteresis) {
		p->below = 0;
		return width;
	}
	low = (threshold - hysteresis) << VRSS_LOAD_SHIFT;
	for (w = 1; w < width; w++) {
		kept = 0;
		moved = 0;
		for (i = 0; i < width; i++) {
			if (i < w)
				kept += p->load[i].busy;
			else
				moved += p->load[i].net;
		}
		if (kept + moved < low * w)
			break;
	}
	if (w == width) {
		p->below = 0;
		return width;
	}
	if (++p->below >= VRSS_POLICY_SHRINK_HOLD) {
		p->width = w;
		p->below = 0;
	}
	return p->width;
}

#endif /* _VRSS_POLICY_H */
