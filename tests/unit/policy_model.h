/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The width rules, as Documentation/networking/vrss.rst and
 * include/vrss/policy.h word them, as a model that the unit tests' traces
 * and the fuzzer check vrss_policy_step() against interval by interval.
 * It keeps its own smoothed loads and counts and shares no code with the
 * header, so a test does not take the width the code returns as right.
 *
 * Exact where the rules are: threshold 0 is every queue, 100 (or one
 * queue) is one; the width grows by one queue, unless all are in use,
 * once the mean busy load of the CPUs in use (the raw or the smoothed
 * one) has been at or above the threshold for VRSS_POLICY_GROW_HOLD
 * intervals in a row, and never shrinks in such an interval.  Looser
 * where the header keeps a count of its own (intervals in which a smaller
 * width would do): a shrink may come only after VRSS_POLICY_SHRINK_HOLD
 * intervals in a row not above, never when threshold <= hysteresis, and
 * then straight to the smallest width w whose CPUs, with the receive work
 * of those that would leave, stay below threshold - hysteresis.
 */
#ifndef _VRSS_TEST_POLICY_MODEL_H
#define _VRSS_TEST_POLICY_MODEL_H

#include <stdbool.h>

#include <vrss/policy.h>

#define MODEL_QUEUES	16

struct policy_model {
	unsigned int width;
	unsigned int above;	/* intervals in a row above, this width */
	unsigned int quiet;	/* intervals in a row not above, this width */
	u32 busy[MODEL_QUEUES];	/* percent << VRSS_LOAD_SHIFT, EWMA 1/2 */
	u32 net[MODEL_QUEUES];
};

static inline u32 model_min(u32 a, u32 b)
{
	return a < b ? a : b;
}

/* A knob or queue count change: extremes at once, else the width kept. */
static inline unsigned int model_config(struct policy_model *m,
					unsigned int threshold, unsigned int max)
{
	if (!max)
		max = 1;
	if (threshold == 0)
		m->width = max;
	else if (threshold >= VRSS_PERCENT_MAX)
		m->width = 1;
	else
		m->width = model_min(m->width, max);
	m->above = 0;
	m->quiet = 0;
	return m->width;
}

static inline unsigned int model_reset(struct policy_model *m,
				       unsigned int threshold, unsigned int max)
{
	unsigned int i;

	for (i = 0; i < MODEL_QUEUES; i++)
		m->busy[i] = m->net[i] = 0;
	m->width = 1;
	return model_config(m, threshold, max);
}

/*
 * Would @w queues do: the busy load of the CPUs kept plus the receive
 * work of the ones from @w to the current width, below
 * threshold - hysteresis on average?
 */
static inline bool model_fits(const struct policy_model *m, unsigned int w,
			      unsigned int threshold, unsigned int hysteresis)
{
	u32 sum = 0;
	unsigned int i;

	for (i = 0; i < m->width; i++)
		sum += i < w ? m->busy[i] : m->net[i];
	return sum < ((threshold - hysteresis) << VRSS_LOAD_SHIFT) * w;
}

/*
 * One interval with the raw loads @raw over @max queues (of @nr), in
 * which vrss_policy_step() returned @got: true if the rules allow it.
 * The model then follows @got where the rules leave it a choice.
 */
static inline bool model_step(struct policy_model *m, unsigned int threshold,
			      unsigned int hysteresis,
			      const struct vrss_load *raw, unsigned int max,
			      unsigned int nr, unsigned int got)
{
	u32 raw_sum = 0, sum = 0, busy, net;
	unsigned int i, w;

	if (max > nr)
		max = nr;
	/* Each CPU's load, capped at 100 %, its receive work within it. */
	for (i = 0; i < max; i++) {
		busy = model_min(raw[i].busy, VRSS_PERCENT_MAX);
		net = model_min(raw[i].net, busy);
		m->busy[i] = (m->busy[i] + (busy << VRSS_LOAD_SHIFT)) / 2;
		m->net[i] = (m->net[i] + (net << VRSS_LOAD_SHIFT)) / 2;
	}
	if (threshold == 0 || threshold >= VRSS_PERCENT_MAX || max <= 1)
		return got == model_config(m, threshold, max);
	if (m->width > max)
		model_config(m, threshold, max);

	w = m->width;
	for (i = 0; i < w; i++) {
		raw_sum += model_min(raw[i].busy, VRSS_PERCENT_MAX);
		sum += m->busy[i];
	}
	if (raw_sum >= threshold * w ||
	    sum >= (threshold << VRSS_LOAD_SHIFT) * w) {
		m->quiet = 0;
		if (++m->above >= VRSS_POLICY_GROW_HOLD && w < max) {
			m->width = w + 1;
			m->above = 0;
		}
		return got == m->width;
	}
	m->above = 0;
	m->quiet++;
	if (got == w)
		return true;
	if (got > w || m->quiet < VRSS_POLICY_SHRINK_HOLD ||
	    threshold <= hysteresis)
		return false;
	/* Straight to the smallest width that would do. */
	if (!got || !model_fits(m, got, threshold, hysteresis))
		return false;
	for (i = 1; i < got; i++)
		if (model_fits(m, i, threshold, hysteresis))
			return false;
	m->width = got;
	m->quiet = 0;
	return true;
}

#endif
