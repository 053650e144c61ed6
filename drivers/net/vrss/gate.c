// SPDX-License-Identifier: GPL-2.0
/*
 * The load gate: while receive hashing is on and the device is up, a
 * delayed work samples every interval_ms which CPUs the lower delivered
 * frames on (the primary CPUs: where its interrupt and NAPI ran) and how
 * busy every CPU was (1 - (idle + iowait) / wall) and how much of that was
 * softirq time, the receive work (the figures /proc/stat is made of).  The
 * busiest primary CPU is the primary queue's load, each spread queue's
 * CPU its own; the pure-C policy of include/vrss/policy.h answers how many
 * queues spread the flows.  Spread queues are placed away from the
 * primary CPUs (queue.c), following the lower's interrupt wherever
 * irqbalance or smp_affinity puts it.  While spread, a timer runs the
 * work on a CPU that is not primary where there is one, so that it does
 * not measure itself.  At width 1 no timer does: the first frame an
 * interval after the last sample queues the next on its own CPU (PACED,
 * vrss_gate_pace()); after a sample that saw no frame the work waits for
 * one (SLEPT, vrss_gate_sleep()), and a paced one whose frames stopped
 * reads as such (vrss_gate_stale_at()).  The state (enum vrss_gate_state)
 * is the work's, under steer_lock; what a frame does meanwhile is armed
 * in gate.arm (gate.h: vrss_gate_frame()).  A timer would wake an idle
 * vCPU for every sample (its wakeup, the kworker, the scheduler's idle
 * balancing), a cost light traffic pays per frame; the frame's CPU is
 * awake anyway, and is the one the sample is about.
 *
 * Nothing is sampled while rxhash is off, the device is down, or a drain
 * holds the table at width 1 (hashing.c: rxhash off, a new key).  A new
 * width rebuilds the table in effect (rss.c); the buckets then follow in
 * order (move.c).  Knob changes and table changes apply at once, under
 * steer_lock, so that `threshold 0` is plain RSS from the moment it is
 * written.
 */
#include <linux/cpu.h>
#include <linux/jiffies.h>
#include <linux/kernel_stat.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sched/isolation.h>
#include <linux/slab.h>
#include <linux/tick.h>

#include "gate.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/* Module parameters: the knobs of new devices, range-checked. */
struct vrss_param {
	unsigned int val;
	unsigned int min;
	unsigned int max;
};

static struct vrss_param vrss_params[VRSS_KNOBS] = {
	[VRSS_KNOB_THRESHOLD] = {
		VRSS_THRESHOLD_DEFAULT, 0, VRSS_PERCENT_MAX },
	[VRSS_KNOB_HYSTERESIS] = {
		VRSS_HYSTERESIS_DEFAULT, 0, VRSS_PERCENT_MAX },
	[VRSS_KNOB_INTERVAL_MS] = {
		VRSS_INTERVAL_MS_DEFAULT, VRSS_INTERVAL_MS_MIN, VRSS_INTERVAL_MS_MAX },
	[VRSS_KNOB_REBALANCE] = { 1, 0, 1 },
};

static bool vrss_param_valid(const struct vrss_param *p, unsigned int val)
{
	return val >= p->min && val <= p->max;
}

static int vrss_param_set(const char *val, const struct kernel_param *kp)
{
	struct vrss_param *p = kp->arg;
	unsigned int v;

	if (kstrtouint(val, 0, &v) || !vrss_param_valid(p, v))
		return -EINVAL;
	WRITE_ONCE(p->val, v);
	return 0;
}

static int vrss_param_get(char *buf, const struct kernel_param *kp)
{
	const struct vrss_param *p = kp->arg;

	return scnprintf(buf, PAGE_SIZE, "%u\n", READ_ONCE(p->val));
}

static const struct kernel_param_ops vrss_param_ops = {
	.set = vrss_param_set,
	.get = vrss_param_get,
};

module_param_cb(threshold, &vrss_param_ops,
		&vrss_params[VRSS_KNOB_THRESHOLD], 0644);
MODULE_PARM_DESC(threshold,
		 "Primary CPU load (percent) at which a new device starts spreading: 0-100, 0 always spreads, 100 never (default 80)");
module_param_cb(hysteresis, &vrss_param_ops,
		&vrss_params[VRSS_KNOB_HYSTERESIS], 0644);
MODULE_PARM_DESC(hysteresis,
		 "Percent below threshold the CPUs must stay for spreading to shrink: 0-100 (default 20)");
module_param_cb(interval_ms, &vrss_param_ops,
		&vrss_params[VRSS_KNOB_INTERVAL_MS], 0644);
MODULE_PARM_DESC(interval_ms,
		 "Load sampling interval in milliseconds: 10-10000 (default 100)");
module_param_cb(rebalance, &vrss_param_ops,
		&vrss_params[VRSS_KNOB_REBALANCE], 0644);
MODULE_PARM_DESC(rebalance,
		 "Move buckets from a busy queue to a less busy one by measured load while spread: 0 or 1 (default 1)");

/*
 * @cpu's idle (iowait included), stolen and softirq time in microseconds,
 * as /proc/stat counts them, and the wall clock beside them.
 */
static void vrss_cpu_times(int cpu, struct vrss_cpu_times *t)
{
	u64 idle, iowait;
	struct kernel_cpustat kcs;

	/* The wall time next to the idle time it divides. */
	t->wall = ktime_to_us(ktime_get());
	idle = get_cpu_idle_time_us(cpu, NULL);
	kcpustat_cpu_fetch(&kcs, cpu);
	t->softirq = div_u64(kcs.cpustat[CPUTIME_SOFTIRQ], NSEC_PER_USEC);
	t->steal = div_u64(kcs.cpustat[CPUTIME_STEAL], NSEC_PER_USEC);
	if (idle != (u64)-1) {
		iowait = get_cpu_iowait_time_us(cpu, NULL);
		t->idle = idle + (iowait != (u64)-1 ? iowait : 0);
		return;
	}
	/* nohz off: the tick's accounting. */
	t->idle = div_u64(kcs.cpustat[CPUTIME_IDLE] + kcs.cpustat[CPUTIME_IOWAIT],
			  NSEC_PER_USEC);
}

/*
 * @cpu since the last sample: its load, busy and softirq percent (0 for a
 * first sample; the last one kept if a count went backwards).
 */
static void vrss_cpu_sample(struct vrss_cpu_sample *cs, int cpu)
{
	struct vrss_cpu_times now;

	vrss_cpu_times(cpu, &now);
	if (!cs->valid)
		cs->load = (struct vrss_load){ 0 };
	else
		vrss_load_between(&cs->times, &now, &cs->load);
	cs->times = now;
	cs->valid = true;
}

/*
 * Under steer_lock: the buckets' loads, for rebalancing, which needs width
 * 2.  At width 1 (SINGLE) their sums (every bucket on every CPU, some 6000
 * instructions an interval) wait and read as 0; the first sample after
 * spans the pause, so it is taken for its sums only.
 */
static void vrss_gate_sample_buckets(struct vrss_dev *vd)
{
	struct vrss_bucket_load *bl = vd->gate.bucket_load;

	if (vd->rss.width <= 1) {
		if (bl->paused)
			return;
		bl->paused = true;
	} else {
		vrss_rx_bucket_sample(vd, bl);
		if (!bl->paused) {
			vrss_rebal_weigh(bl->weight, bl->packets);
			return;
		}
		bl->paused = false;
	}
	memset(bl->packets, 0, sizeof(bl->packets));
	memset(bl->bytes, 0, sizeof(bl->bytes));
	memset(bl->weight, 0, sizeof(bl->weight));
}

/*
 * Under steer_lock: one sample of every online CPU.  load_raw[0] is the
 * busiest CPU the lower delivered on since the last sample (none: 0),
 * load_raw[i] spread queue i's CPU.  The primary CPUs are kept for
 * sysfs and for placing the spread queues.
 */
static void vrss_gate_sample_all(struct vrss_dev *vd)
{
	struct vrss_load *raw = vd->gate.load_raw;
	unsigned int i;
	int cpu;

	/* Not while a CPU comes or goes (its callback places the queues). */
	cpus_read_lock();
	cpumask_clear(vd->gate.primary);
	vd->gate.primary_cpu = -1;
	raw[0].busy = 0;
	raw[0].net = 0;
	for_each_possible_cpu(cpu) {
		struct vrss_cpu_sample *cs = &vd->gate.samples[cpu];
		unsigned long seen = READ_ONCE(per_cpu_ptr(vd->rx.pcpu, cpu)->seen);
		bool delivered = seen != cs->seen;

		cs->seen = seen;
		if (!cpu_online(cpu)) {
			cs->valid = false;
			cs->load = (struct vrss_load){ 0 };
			continue;
		}
		vrss_cpu_sample(cs, cpu);
		if (!delivered)
			continue;
		cpumask_set_cpu(cpu, vd->gate.primary);
		if (vd->gate.primary_cpu < 0 || cs->load.busy > raw[0].busy) {
			raw[0] = cs->load;
			vd->gate.primary_cpu = cpu;
		}
	}
	if (!cpumask_empty(vd->gate.primary))
		vrss_queues_place(vd, vd->gate.primary);
	vrss_gate_sample_buckets(vd);
	/* Spread queues: their CPU's sample, just taken (offline: idle). */
	for (i = 1; i < vd->gate.policy->nr; i++) {
		cpu = READ_ONCE(vd->queues[i].cpu);
		if (cpu_online(cpu))
			raw[i] = vd->gate.samples[cpu].load;
		else
			raw[i] = (struct vrss_load){ 0 };
	}
	cpus_read_unlock();
}

/* Under steer_lock: put the policy's width into effect. */
static void vrss_gate_apply(struct vrss_dev *vd, unsigned int width)
{
	struct vrss_policy *p = vd->gate.policy;
	unsigned int old = vd->rss.width, i, sum = 0;

	if (width == old)
		return;
	if (vrss_rss_set_width(vd, width)) {
		/* No memory for the new table: the next interval tries again. */
		p->width = old;
		return;
	}
	for (i = 0; i < old && i < p->nr; i++)
		sum += vrss_policy_load(p, i);
	trace_vrss_width_change(vd->dev, old, width, vrss_policy_load(p, 0),
				old ? sum / old : 0);
	atomic64_inc(width > old ? &vd->gate.spread_events : &vd->gate.contract_events);
}

/*
 * Under steer_lock, spread at a width that did not change: move buckets
 * from a busy queue to a less busy one (include/vrss/rebalance.h), told only
 * the primary CPU's receive work that its own buckets bring in
 * (vrss_rebal_primary_net()).
 */
static void vrss_gate_rebalance(struct vrss_dev *vd)
{
	const struct vrss_bucket_load *bl = vd->gate.bucket_load;
	struct vrss_load *load = vd->gate.rebal_load;
	struct vrss_policy *p = vd->gate.policy;
	struct vrss_rebal_result res;
	unsigned int width, moved;

	width = vrss_rss_get_steer(vd, vd->gate.rebal_table);
	if (width < 2 || width > p->nr)
		return;
	/*
	 * rss.c rebuilt the table from the user's since (a width, table or
	 * queue count change, rebalancing turned off): forget the holds.
	 */
	if (vd->gate.rebal_gen != vd->rss.gen) {
		vrss_rebal_reset(&vd->gate.rebal);
		vd->gate.rebal_gen = vd->rss.gen;
	}
	memcpy(load, p->load, width * sizeof(*load));
	load[0].net = vrss_rebal_primary_net(load[0].net, vd->gate.rebal_table,
					     bl->weight);

	moved = vrss_rebal_step(&vd->gate.rebal, vd->gate.rebal_table, bl->weight, load,
				width, vd->gate.knobs[VRSS_KNOB_THRESHOLD],
				vd->gate.knobs[VRSS_KNOB_HYSTERESIS], &res);
	/* No memory for the table: nothing moved, the next interval may. */
	if (!moved || vrss_rss_set_steer(vd, vd->gate.rebal_table))
		return;
	atomic64_inc(&vd->gate.rebalance_events);
	atomic64_add(moved, &vd->gate.rebalance_buckets);
	trace_vrss_rebalance(vd->dev, res.from, res.to, moved,
			     vrss_policy_round(load[res.from].busy),
			     vrss_policy_round(load[res.to].busy),
			     vrss_policy_round(res.load));
}

/* The work's workqueue for a sample on @cpu. */
static struct workqueue_struct *vrss_gate_wq(int cpu)
{
	return cpu == WORK_CPU_UNBOUND ? system_unbound_wq : system_highpri_wq;
}

static unsigned long vrss_gate_interval(const struct vrss_dev *vd)
{
	return msecs_to_jiffies(vd->gate.knobs[VRSS_KNOB_INTERVAL_MS]);
}

/*
 * Under steer_lock: when the next sample is due, in jiffies: an interval
 * after @start, when this one began (the softirqs a busy CPU runs inside
 * the work do not push the next one back), but never less than half an
 * interval from now.
 */
static unsigned long vrss_gate_next(const struct vrss_dev *vd, unsigned long start)
{
	unsigned long ival = vrss_gate_interval(vd), spent = jiffies - start;

	return jiffies + (spent < ival / 2 ? ival - spent : ival - ival / 2);
}

/*
 * Under steer_lock: the next sample, on the least busy CPU the lower does
 * not deliver on and that takes unbound work (not an isolated one), at
 * high priority: once spread, every CPU may be busy with receive work,
 * which would starve a nice 0 worker and stretch a 100 ms interval to
 * seconds, so that the policy would answer far slower than interval_ms
 * says.  When the lower delivers on every CPU, an unbound worker: pinned
 * to one of them it costs function-call IPIs below the threshold that
 * the NIC alone does not cause.  At jiffies @next (vrss_gate_queue():
 * vrss_gate_next(@start)).
 * Under cpus_read_lock(): a CPU that went down between the choice and the
 * queueing would keep the timer (add_timer_on() does not check), and
 * sampling would stop.
 */
static void vrss_gate_queue_at(struct vrss_dev *vd, unsigned long next)
{
	unsigned long delay = next - jiffies;
	int cpu, best = -1;

	/* Due, or a tick passed since @next was reckoned: now. */
	if ((long)delay < 0)
		delay = 0;
	cpus_read_lock();
	for_each_online_cpu(cpu)
		if (!cpumask_test_cpu(cpu, vd->gate.primary) &&
		    housekeeping_cpu(cpu, HK_TYPE_WQ) &&
		    (best < 0 || vd->gate.samples[cpu].load.busy <
				 vd->gate.samples[best].load.busy))
			best = cpu;
	if (best < 0)
		best = WORK_CPU_UNBOUND;
	queue_delayed_work_on(best, vrss_gate_wq(best), &vd->gate.work, delay);
	cpus_read_unlock();
}

static void vrss_gate_queue(struct vrss_dev *vd, unsigned long start)
{
	vrss_gate_queue_at(vd, vrss_gate_next(vd, start));
}

/* Under steer_lock: a frame came on some CPU since its last sample. */
static bool vrss_gate_seen_since(struct vrss_dev *vd)
{
	int cpu;

	for_each_possible_cpu(cpu)
		if (READ_ONCE(per_cpu_ptr(vd->rx.pcpu, cpu)->seen) != vd->gate.samples[cpu].seen)
			return true;
	return false;
}

/*
 * Under steer_lock, at width 1 with frames coming and no bucket parked
 * or moving: the next sample when the first frame from jiffies @due on
 * comes (vrss_gate_frame()).  A frame that misses it leaves the wakeup
 * to the next; with none, there is nothing to sample.  False if a bucket
 * started parking meanwhile: the work needs its timer, whose tick is
 * the parked frames' backstop.
 */
static bool vrss_gate_pace(struct vrss_dev *vd, unsigned long due)
{
	vd->gate.state = VRSS_GATE_PACED;
	/* No frame woke it late yet (vrss_gate_frame()). */
	WRITE_ONCE(vd->gate.woke, due);
	WRITE_ONCE(vd->gate.due, due);
	/* gate_due before ARM_DUE: pairs with the frame's smp_rmb(). */
	atomic_set_release(&vd->gate.arm, VRSS_GATE_ARM_DUE);
	/*
	 * Paced before the buckets are read; pairs with vrss_park_begin()'s
	 * barrier: a bucket parking meanwhile sees PACED and wakes the work,
	 * or is seen here.
	 */
	smp_mb();
	if (vrss_move_settled(vd) ||
	    atomic_xchg(&vd->gate.arm, VRSS_GATE_ARM_NONE) == VRSS_GATE_ARM_NONE)
		return true;	/* or its wakeup is queued */
	vd->gate.state = VRSS_GATE_TIMED;
	return false;
}

/*
 * Under steer_lock: paced, but no frame came for an interval after the
 * sample was due (@at: now, or when the frame that woke the work came).
 * The lower delivered nothing lately: what the sample shows is out of
 * date, as after vrss_gate_sleep().
 */
static bool vrss_gate_stale_at(const struct vrss_dev *vd, unsigned long at)
{
	return vd->gate.state == VRSS_GATE_PACED && !vrss_gate_ahead(vd->gate.due) &&
	       at - vd->gate.due > vrss_gate_interval(vd);
}

/*
 * Under steer_lock: the load and primary CPUs of the last sample hold
 * (sysfs): the work runs and saw frames lately.
 */
bool vrss_gate_fresh(const struct vrss_dev *vd)
{
	return vrss_gate_running(vd) && !vrss_gate_stale_at(vd, jiffies);
}

/* Under steer_lock: sampling (rxhash on, the device up, no drain). */
bool vrss_gate_running(const struct vrss_dev *vd)
{
	return vd->gate.state != VRSS_GATE_OFF;
}

/*
 * Under steer_lock, after a sample at width 1 with no bucket parked or
 * moving (@settled): no timer.  With frames coming, they pace the work;
 * when the lower delivered nothing there is nothing to steer, so no
 * sampling either until a frame comes (rx.c wakes the work).  A bucket
 * not yet home (a drained one that waits for its next frame to come
 * back) needs no tick meanwhile: at width 1 no ring takes a frame in, so
 * its tail stays where it was, and the ring's head cannot pass it
 * (include/vrss/move.h); one that starts parking wakes the work.  A
 * quiet guest with rxhash on then pays no wakeup every interval (cost.sh
 * counted them: most of what SINGLE cost above rxhash off).  True if no
 * timer is needed.
 */
static bool vrss_gate_sleep(struct vrss_dev *vd, unsigned int width, bool settled,
			    unsigned long start)
{
	if (width != 1 || vd->rss.width != 1 || !settled)
		return false;
	if (!cpumask_empty(vd->gate.primary))
		return vrss_gate_pace(vd, vrss_gate_next(vd, start));
	/* No frame, no load: sysfs reads 0, and the wake starts over. */
	vrss_policy_reset(vd->gate.policy, vd->gate.knobs[VRSS_KNOB_THRESHOLD],
			  vrss_rss_max_width(vd));
	vd->gate.state = VRSS_GATE_SLEPT;
	atomic_set(&vd->gate.arm, VRSS_GATE_ARM_ANY);
	/*
	 * Idle before the counters are read again.  A frame has no barrier
	 * (rx.c): one that both sides miss leaves the wakeup to the next.
	 */
	smp_mb();
	/* A frame since the sample: awake, unless it woke the work itself. */
	if (vrss_gate_seen_since(vd) &&
	    atomic_xchg(&vd->gate.arm, VRSS_GATE_ARM_NONE) != VRSS_GATE_ARM_NONE) {
		vd->gate.state = VRSS_GATE_TIMED;
		return false;
	}
	return true;
}

/* The load work, on its timer or queued by a frame (gate.kick). */
static void vrss_gate_run(struct vrss_dev *vd)
{
	struct vrss_policy *p = vd->gate.policy;
	unsigned long start = jiffies, due;
	unsigned int width;
	bool settled;
	int cpu;

	mutex_lock(&vd->steer_lock);
	if (vd->gate.state == VRSS_GATE_OFF)
		goto out;
	/*
	 * Paced, and woken before the sample is due (a bucket that started
	 * parking, a reconfiguration): the tick, not a sample of a few
	 * milliseconds, which the policy would weigh as a whole interval.
	 */
	if (vd->gate.state == VRSS_GATE_PACED && vrss_gate_ahead(vd->gate.due)) {
		vd->gate.state = VRSS_GATE_TIMED;
		due = vd->gate.due;
		settled = vrss_move_tick(vd);
		if (vd->rss.width != 1 || !settled || !vrss_gate_pace(vd, due))
			vrss_gate_queue_at(vd, due);
		goto out;
	}
	/*
	 * Woken by a frame after an interval or more without one: the CPUs'
	 * times since would read as an idle interval; a sample of its own
	 * starts them over (a sleep reset the policy when it began).  When
	 * the frame came, not when the work runs: on a busy CPU the work
	 * can start late, and every sample would be a new start.
	 */
	if (vrss_gate_stale_at(vd, READ_ONCE(vd->gate.woke))) {
		vrss_policy_reset(p, vd->gate.knobs[VRSS_KNOB_THRESHOLD],
				  vrss_rss_max_width(vd));
		vd->gate.state = VRSS_GATE_SLEPT;
	}
	if (vd->gate.state == VRSS_GATE_SLEPT) {
		vd->gate.state = VRSS_GATE_TIMED;
		for_each_possible_cpu(cpu)
			vd->gate.samples[cpu].valid = false;
		vrss_gate_sample_all(vd);
		settled = vrss_move_tick(vd);
		if (!vrss_gate_sleep(vd, vd->rss.width, settled, start))
			vrss_gate_queue(vd, start);
		goto out;
	}
	/* Due, and a frame woke it: paced no more, for now. */
	vd->gate.state = VRSS_GATE_TIMED;
	vrss_gate_sample_all(vd);
	settled = vrss_move_tick(vd);
	width = vrss_policy_step(p, vd->gate.knobs[VRSS_KNOB_THRESHOLD],
				 vd->gate.knobs[VRSS_KNOB_HYSTERESIS], vd->gate.load_raw,
				 vrss_rss_max_width(vd));
	trace_vrss_load_sample(vd->dev, width, vd->gate.primary_cpu,
			       vd->gate.load_raw[0].busy, vd->gate.load_raw[0].net,
			       vrss_policy_load(p, 0));
	/*
	 * At a steady width, buckets may move by load; while the policy is
	 * about to widen (above the threshold, queues to spare) they wait,
	 * since the new width starts again from the user's table.
	 */
	if (width == vd->rss.width && width > 1 && vd->gate.knobs[VRSS_KNOB_REBALANCE] &&
	    (!p->above || width >= vrss_rss_max_width(vd)))
		vrss_gate_rebalance(vd);
	else
		vrss_gate_apply(vd, width);
	/* The buckets' loads are counted while rebalancing can use them. */
	WRITE_ONCE(vd->gate.count_buckets,
		   vd->rss.width > 1 && vd->gate.knobs[VRSS_KNOB_REBALANCE]);
	if (!vrss_gate_sleep(vd, width, settled, start))
		vrss_gate_queue(vd, start);
out:
	mutex_unlock(&vd->steer_lock);
}

static void vrss_gate_work(struct work_struct *work)
{
	vrss_gate_run(container_of(to_delayed_work(work), struct vrss_dev,
				   gate.work));
}

static void vrss_gate_kick(struct work_struct *work)
{
	vrss_gate_run(container_of(work, struct vrss_dev, gate.kick));
}

/*
 * Under steer_lock: knobs or tables changed; 0 and 100 take effect now.
 * A sleeping work wakes: a width it did not choose (threshold 0) needs
 * its samples and ticks.
 */
static void __vrss_gate_reconfig(struct vrss_dev *vd)
{
	lockdep_assert_held(&vd->steer_lock);
	if (vd->gate.state == VRSS_GATE_OFF)
		return;
	vrss_gate_apply(vd, vrss_policy_config(vd->gate.policy,
					       vd->gate.knobs[VRSS_KNOB_THRESHOLD],
					       vrss_rss_max_width(vd)));
	vrss_gate_wake(vd);
}

/* Under RTNL: the user's table, key or queue count changed (rss.c). */
void vrss_gate_reconfig(struct vrss_dev *vd)
{
	mutex_lock(&vd->steer_lock);
	__vrss_gate_reconfig(vd);
	mutex_unlock(&vd->steer_lock);
}

/*
 * Under steer_lock: hashing on with the device up and no drain holding
 * the table at width 1 (hashing.c decides).  Starts from SINGLE.
 */
void vrss_gate_start_locked(struct vrss_dev *vd)
{
	int cpu;

	lockdep_assert_held(&vd->steer_lock);
	if (vd->gate.state != VRSS_GATE_OFF)
		return;
	vd->gate.state = VRSS_GATE_TIMED;
	/* A first sample of its own: nothing from before counts. */
	for_each_possible_cpu(cpu) {
		vd->gate.samples[cpu].valid = false;
		vd->gate.samples[cpu].seen = READ_ONCE(per_cpu_ptr(vd->rx.pcpu, cpu)->seen);
	}
	vrss_gate_sample_all(vd);
	/* Nor the buckets' weights: the loads start over too. */
	memset(vd->gate.bucket_load->weight, 0, sizeof(vd->gate.bucket_load->weight));
	vrss_gate_apply(vd, vrss_policy_reset(vd->gate.policy,
					      vd->gate.knobs[VRSS_KNOB_THRESHOLD],
					      vrss_rss_max_width(vd)));
	vrss_gate_queue(vd, jiffies);
}

/*
 * Under RTNL: rxhash off, a change that drains (hashing.c), or the device
 * down.  No work is left behind: a frame that found the work asleep may
 * still be queueing it, so a sleep ends with every such frame's RCU read
 * side before the cancel.
 */
void vrss_gate_stop(struct vrss_dev *vd)
{
	bool slept;

	mutex_lock(&vd->steer_lock);
	slept = vd->gate.state == VRSS_GATE_SLEPT || vd->gate.state == VRSS_GATE_PACED;
	vd->gate.state = VRSS_GATE_OFF;
	atomic_set(&vd->gate.arm, VRSS_GATE_ARM_NONE);
	mutex_unlock(&vd->steer_lock);
	/*
	 * Asleep or paced: a frame may be queueing the kick.  At width 1
	 * under traffic that is every stop (rxhash off, a drain's start):
	 * an expedited grace period under RTNL.
	 */
	if (slept)
		synchronize_net();
	cancel_work_sync(&vd->gate.kick);
	cancel_delayed_work_sync(&vd->gate.work);
}

/* A knob written through sysfs: -EINVAL out of range, else in effect now. */
int vrss_gate_set_knob(struct vrss_dev *vd, enum vrss_knob knob,
		       unsigned int val)
{
	if (!vrss_param_valid(&vrss_params[knob], val))
		return -EINVAL;

	mutex_lock(&vd->steer_lock);
	vd->gate.knobs[knob] = val;
	/*
	 * The next sample at the new interval, unless the work sleeps: a
	 * frame's wakeup, already queued, would be pushed back.  Paced and
	 * not yet due: due an interval from now (once due, it stays).
	 */
	if (knob == VRSS_KNOB_INTERVAL_MS && vd->gate.state != VRSS_GATE_OFF &&
	    vd->gate.state != VRSS_GATE_SLEPT && cancel_delayed_work(&vd->gate.work))
		vrss_gate_queue(vd, jiffies);
	if (knob == VRSS_KNOB_INTERVAL_MS && vd->gate.state == VRSS_GATE_PACED &&
	    vrss_gate_ahead(vd->gate.due))
		WRITE_ONCE(vd->gate.due, jiffies + vrss_gate_interval(vd));
	/*
	 * Rebalancing off: back to the user's table (in order, as any move);
	 * on allocation failure the rebalanced one stays until the next.
	 */
	if (knob == VRSS_KNOB_REBALANCE && !val)
		vrss_rss_set_width(vd, vd->rss.width);
	__vrss_gate_reconfig(vd);
	mutex_unlock(&vd->steer_lock);
	return 0;
}

static void vrss_gate_free(struct vrss_dev *vd)
{
	free_cpumask_var(vd->gate.primary);
	kfree(vd->gate.rebal_load);
	vd->gate.rebal_load = NULL;
	kfree(vd->gate.bucket_load);
	vd->gate.bucket_load = NULL;
	kfree(vd->gate.samples);
	vd->gate.samples = NULL;
	kfree(vd->gate.load_raw);
	vd->gate.load_raw = NULL;
	kfree(vd->gate.policy);
	vd->gate.policy = NULL;
}

/* Off (VRSS_GATE_OFF, a zeroed device's), with the default knobs. */
int vrss_gate_init(struct vrss_dev *vd)
{
	unsigned int nr = vd->dev->num_rx_queues, i;

	vd->gate.state = VRSS_GATE_OFF;
	atomic_set(&vd->gate.arm, VRSS_GATE_ARM_NONE);
	INIT_DELAYED_WORK(&vd->gate.work, vrss_gate_work);
	INIT_WORK(&vd->gate.kick, vrss_gate_kick);
	vd->gate.policy = kzalloc(struct_size(vd->gate.policy, load, nr), GFP_KERNEL);
	vd->gate.load_raw = kcalloc(nr, sizeof(*vd->gate.load_raw), GFP_KERNEL);
	vd->gate.samples = kcalloc(nr_cpu_ids, sizeof(*vd->gate.samples), GFP_KERNEL);
	vd->gate.bucket_load = kzalloc(sizeof(*vd->gate.bucket_load), GFP_KERNEL);
	vd->gate.rebal_load = kcalloc(nr, sizeof(*vd->gate.rebal_load), GFP_KERNEL);
	if (!vd->gate.policy || !vd->gate.load_raw || !vd->gate.samples || !vd->gate.bucket_load ||
	    !vd->gate.rebal_load ||
	    !zalloc_cpumask_var(&vd->gate.primary, GFP_KERNEL)) {
		vrss_gate_free(vd);
		return -ENOMEM;
	}
	vd->gate.primary_cpu = -1;
	vd->gate.policy->nr = nr;
	vd->gate.policy->width = 1;
	for (i = 0; i < VRSS_KNOBS; i++)
		vd->gate.knobs[i] = READ_ONCE(vrss_params[i].val);
	return 0;
}

/*
 * The device is down (vrss_gate_stop() ran) and nothing queues the work
 * any more (a frame's kick, a parking bucket's wake, a knob).
 */
void vrss_gate_uninit(struct vrss_dev *vd)
{
	cancel_work_sync(&vd->gate.kick);
	cancel_delayed_work_sync(&vd->gate.work);
	vrss_gate_free(vd);
}
