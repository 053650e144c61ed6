// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/class/net/<dev>/vrss/: the load knobs (threshold, hysteresis,
 * interval_ms, rebalance; read-write, an invalid write is -EINVAL and
 * changes nothing) and the gate's status (state, width, primary_load,
 * primary_cpus, lower, and effective_indir: the table in effect at the
 * current width, rebalanced, where `ethtool -x` shows the user's), and the
 * load the policy works from: queue_load (each queue's CPU, smoothed busy
 * percent) and bucket_packets, bucket_bytes (each bucket's, over the last
 * interval); mode, which way buckets move (device.c); and attach,
 * whether frames go up through vrss0 or in place, as the lower's.
 */
#include <linux/device.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/sysfs.h>

#include "device.h"
#include "gate.h"
#include "vrss.h"

static struct vrss_dev *vrss_of(struct device *d)
{
	return netdev_priv(to_net_dev(d));
}

struct vrss_knob_attr {
	struct device_attribute attr;
	enum vrss_knob knob;
};

static enum vrss_knob vrss_knob_of(struct device_attribute *attr)
{
	return container_of(attr, struct vrss_knob_attr, attr)->knob;
}

static ssize_t vrss_knob_show(struct device *d, struct device_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(vrss_of(d)->gate.knobs[vrss_knob_of(attr)]));
}

static ssize_t vrss_knob_store(struct device *d, struct device_attribute *attr,
			       const char *buf, size_t len)
{
	unsigned int val;
	int err;

	if (kstrtouint(buf, 0, &val))
		return -EINVAL;
	err = vrss_gate_set_knob(vrss_of(d), vrss_knob_of(attr), val);
	return err ?: len;
}

#define VRSS_KNOB_ATTR(_name, _knob)					\
	struct vrss_knob_attr vrss_attr_##_name = {			\
		__ATTR(_name, 0644, vrss_knob_show, vrss_knob_store),	\
		_knob,							\
	}

static VRSS_KNOB_ATTR(threshold, VRSS_KNOB_THRESHOLD);
static VRSS_KNOB_ATTR(hysteresis, VRSS_KNOB_HYSTERESIS);
static VRSS_KNOB_ATTR(interval_ms, VRSS_KNOB_INTERVAL_MS);
static VRSS_KNOB_ATTR(rebalance, VRSS_KNOB_REBALANCE);

/*
 * Frames are hashed: rxhash on, or off and its drain not done (every
 * bucket on its way home, at width 1).
 */
static bool vrss_hashing(struct vrss_dev *vd)
{
	return READ_ONCE(vd->hs.on);
}

/* The width in effect: 1 unless frames are hashed. */
static unsigned int vrss_width(struct vrss_dev *vd)
{
	const struct vrss_steer *steer;
	unsigned int width = 1;

	if (!vrss_hashing(vd))
		return 1;
	rcu_read_lock();
	steer = rcu_dereference(vd->rss.steer);
	if (steer)
		width = steer->width;
	rcu_read_unlock();
	return width;
}

static ssize_t state_show(struct device *d, struct device_attribute *attr,
			  char *buf)
{
	struct vrss_dev *vd = vrss_of(d);

	if (!vrss_hashing(vd))
		return sysfs_emit(buf, "off\n");
	return sysfs_emit(buf, "%s\n", vrss_width(vd) > 1 ? "spread" : "single");
}
static DEVICE_ATTR_RO(state);

static ssize_t width_show(struct device *d, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%u\n", vrss_width(vrss_of(d)));
}
static DEVICE_ATTR_RO(width);

/* The smoothed busy percent of the primary queue's CPU; 0 when not sampled. */
static ssize_t primary_load_show(struct device *d,
				 struct device_attribute *attr, char *buf)
{
	struct vrss_dev *vd = vrss_of(d);
	unsigned int load = 0;

	mutex_lock(&vd->steer_lock);
	if (vrss_gate_fresh(vd))
		load = vrss_policy_load(vd->gate.policy, 0);
	mutex_unlock(&vd->steer_lock);
	return sysfs_emit(buf, "%u\n", load);
}
static DEVICE_ATTR_RO(primary_load);

/* The CPUs the lower delivered on in the last interval (while sampling). */
static ssize_t primary_cpus_show(struct device *d,
				 struct device_attribute *attr, char *buf)
{
	struct vrss_dev *vd = vrss_of(d);
	ssize_t ret;

	mutex_lock(&vd->steer_lock);
	ret = sysfs_emit(buf, "%*pbl\n", cpumask_pr_args(vrss_gate_fresh(vd) ?
							 vd->gate.primary : cpu_none_mask));
	mutex_unlock(&vd->steer_lock);
	return ret;
}
static DEVICE_ATTR_RO(primary_cpus);

static ssize_t lower_show(struct device *d, struct device_attribute *attr,
			  char *buf)
{
	struct vrss_dev *vd = vrss_of(d);
	ssize_t ret;

	/* The lower outlives vrss0, but is renamed under RTNL. */
	if (!rtnl_trylock())
		return restart_syscall();
	ret = sysfs_emit(buf, "%s\n", vd->lower->name);
	rtnl_unlock();
	return ret;
}
static DEVICE_ATTR_RO(lower);

static ssize_t effective_indir_show(struct device *d,
				    struct device_attribute *attr, char *buf)
{
	struct vrss_dev *vd = vrss_of(d);
	const struct vrss_steer *steer;
	ssize_t len = 0;
	unsigned int i;

	rcu_read_lock();
	steer = rcu_dereference(vd->rss.steer);
	for (i = 0; steer && i < VRSS_INDIR_SIZE; i++)
		len += sysfs_emit_at(buf, len, "%u%c", steer->queue[i],
				     i + 1 < VRSS_INDIR_SIZE ? ' ' : '\n');
	rcu_read_unlock();
	return len;
}
static DEVICE_ATTR_RO(effective_indir);

/* One line of the queues' smoothed busy percent; 0s when not sampling. */
static ssize_t queue_load_show(struct device *d, struct device_attribute *attr,
			       char *buf)
{
	struct vrss_dev *vd = vrss_of(d);
	unsigned int i, n = vd->dev->real_num_rx_queues;
	ssize_t len = 0;

	mutex_lock(&vd->steer_lock);
	for (i = 0; i < n; i++)
		len += sysfs_emit_at(buf, len, "%u%c",
				     vrss_gate_fresh(vd) ? vrss_policy_load(vd->gate.policy, i) : 0,
				     i + 1 < n ? ' ' : '\n');
	mutex_unlock(&vd->steer_lock);
	return len;
}
static DEVICE_ATTR_RO(queue_load);

/*
 * One line of each queue's vCPU, queue 0 first: for queue 0 the one that
 * handed up the latest inline frame, for a spread queue the one its NAPI
 * last ran on, else where it is placed; "-" for none yet.  A gauge, so
 * here and not in ethtool -S, whose values are counters.
 */
static ssize_t queue_cpus_show(struct device *d, struct device_attribute *attr,
			       char *buf)
{
	struct vrss_dev *vd = vrss_of(d);
	unsigned int i, n = vd->dev->num_rx_queues;
	ssize_t len = 0;
	int cpu;

	for (i = 0; i < n; i++) {
		cpu = vrss_queue_cpu(vd, i);
		if (cpu < 0)
			len += sysfs_emit_at(buf, len, "-");
		else
			len += sysfs_emit_at(buf, len, "%d", cpu);
		len += sysfs_emit_at(buf, len, "%c", i + 1 < n ? ' ' : '\n');
	}
	return len;
}
static DEVICE_ATTR_RO(queue_cpus);

/* One line of 128 per-bucket counts over the last interval. */
static ssize_t vrss_bucket_show(struct vrss_dev *vd, char *buf, bool bytes)
{
	const struct vrss_bucket_load *bl = vd->gate.bucket_load;
	ssize_t len = 0;
	unsigned int b;

	mutex_lock(&vd->steer_lock);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		len += sysfs_emit_at(buf, len, "%llu%c",
				     !vrss_gate_running(vd) ? 0ULL :
				     bytes ? bl->bytes[b] : (u64)bl->packets[b],
				     b + 1 < VRSS_INDIR_SIZE ? ' ' : '\n');
	mutex_unlock(&vd->steer_lock);
	return len;
}

static ssize_t bucket_packets_show(struct device *d,
				   struct device_attribute *attr, char *buf)
{
	return vrss_bucket_show(vrss_of(d), buf, false);
}
static DEVICE_ATTR_RO(bucket_packets);

static ssize_t bucket_bytes_show(struct device *d,
				 struct device_attribute *attr, char *buf)
{
	return vrss_bucket_show(vrss_of(d), buf, true);
}
static DEVICE_ATTR_RO(bucket_bytes);

static const char * const vrss_mode_names[] = {
	[VRSS_MODE_AUTO] = "auto",
	[VRSS_MODE_SOFTWARE] = "software",
	[VRSS_MODE_DEVICE] = "device",
};

/*
 * The mode in effect: "device" while vrss holds the lower's table, or
 * will when vrss0 is up with rxhash on (device, or auto on a lower with
 * a table); "software" otherwise (and where the lower refused).
 */
static ssize_t mode_show(struct device *d, struct device_attribute *attr,
			 char *buf)
{
	struct vrss_dev *vd = vrss_of(d);
	bool device;

	if (!rtnl_trylock())
		return restart_syscall();
	device = vrss_device_held(vd) ||
		 (vrss_device_wanted(vd) &&
		  !(netif_running(vd->dev) && (vd->dev->features & NETIF_F_RXHASH)));
	rtnl_unlock();
	return sysfs_emit(buf, "%s\n", device ? "device" : "software");
}

/* auto, software or device; only with rxhash off or vrss0 down. */
static ssize_t mode_store(struct device *d, struct device_attribute *attr,
			  const char *buf, size_t len)
{
	struct vrss_dev *vd = vrss_of(d);
	const char *why = NULL;
	int mode, err;

	mode = sysfs_match_string(vrss_mode_names, buf);
	if (mode < 0)
		return -EINVAL;
	if (!rtnl_trylock())
		return restart_syscall();
	err = vrss_device_set_mode(vd, mode, &why);
	rtnl_unlock();
	if (err && why)
		netdev_info(vd->dev, "%s\n", why);
	return err ?: len;
}
static DEVICE_ATTR_RW(mode);

/* "stacked": frames go up through vrss0; "inplace": as the lower's. */
static ssize_t attach_show(struct device *d, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", READ_ONCE(vrss_of(d)->inplace) ? "inplace" : "stacked");
}

/*
 * Only while vrss0 is down, so no frame is steered meanwhile; frames still
 * on a ring or parked go up as attach is when they do.
 */
static ssize_t attach_store(struct device *d, struct device_attribute *attr,
			    const char *buf, size_t len)
{
	static const char * const names[] = { "stacked", "inplace" };
	struct vrss_dev *vd = vrss_of(d);
	int i, err = 0;

	i = sysfs_match_string(names, buf);
	if (i < 0)
		return -EINVAL;
	if (!rtnl_trylock())
		return restart_syscall();
	if (netif_running(vd->dev))
		err = -EBUSY;
	else
		WRITE_ONCE(vd->inplace, i == 1);
	rtnl_unlock();
	return err ?: len;
}
static DEVICE_ATTR_RW(attach);

static struct attribute *vrss_sysfs_attrs[] = {
	&vrss_attr_threshold.attr.attr,
	&vrss_attr_hysteresis.attr.attr,
	&vrss_attr_interval_ms.attr.attr,
	&vrss_attr_rebalance.attr.attr,
	&dev_attr_state.attr,
	&dev_attr_width.attr,
	&dev_attr_primary_load.attr,
	&dev_attr_primary_cpus.attr,
	&dev_attr_lower.attr,
	&dev_attr_effective_indir.attr,
	&dev_attr_queue_load.attr,
	&dev_attr_bucket_packets.attr,
	&dev_attr_bucket_bytes.attr,
	&dev_attr_mode.attr,
	&dev_attr_queue_cpus.attr,
	&dev_attr_attach.attr,
	NULL,
};

const struct attribute_group vrss_sysfs_group = {
	.name = "vrss",
	.attrs = vrss_sysfs_attrs,
};
