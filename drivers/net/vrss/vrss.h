/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vrss: load-gated virtual receive side scaling for KVM guests.
 * Definitions shared by the module's files.
 */
#ifndef _VRSS_H
#define _VRSS_H

#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/ptr_ring.h>
#include <linux/sched/mm.h>
#include <linux/workqueue.h>
#include <linux/smp.h>
#include <linux/u64_stats_sync.h>
#include <net/sock.h>

#include <vrss/indir.h>
#include <vrss/move.h>
#include <vrss/parse.h>
#include <vrss/policy.h>
#include <vrss/rebalance.h>
#include <vrss/toeplitz.h>

#define VRSS_DRV_NAME		"vrss"
#define VRSS_DRV_VERSION	"0.1.0"

/* Per-queue ring (ethtool -G rx): several NAPI budgets by default. */
#define VRSS_RING_SIZE		1024
#define VRSS_RING_MAX		4096

/* vrss_queue.state bits */
enum {
	VRSS_QUEUE_KICK_PENDING,	/* csd queued to the queue's CPU */
};

/*
 * One receive queue.  A spread queue (1..N-1) is a ring filled from the
 * lower device's rx_handler on whatever CPU received the frame, drained by
 * a NAPI context that is always scheduled on the queue's own CPU.  The
 * primary queue (0) uses none of this: its frames go up inline, counted
 * per CPU (struct vrss_pcpu); only its drops and ipis (always 0) are read.
 */
struct vrss_queue {
	struct napi_struct napi;
	struct ptr_ring ring;
	call_single_data_t csd;
	unsigned long state;
	struct vrss_dev *vd;
	unsigned int index;
	int cpu;		/* where it is processed (gate.c places it) */
	int last_cpu;		/* where its poll last ran (ethtool -S) */

	/*
	 * Ring positions for in-order bucket moves (RFS's rule): a bucket
	 * leaves this queue only once head has passed the tail its last
	 * frame got (include/vrss/move.h).  tail counts frames put on the
	 * ring (under its producer lock), head those the poll handed to the
	 * stack and GRO let go of.
	 */
	u32 tail;
	u32 head;
	u32 consumed;		/* poll only: frames taken off the ring */
	/* Under the producer lock: buckets leaving, frames they parked. */
	u32 parked_buckets;
	u32 parked_frames;

	/* Written by the poll only. */
	struct u64_stats_sync syncp;
	u64_stats_t packets;
	u64_stats_t bytes;
	/* Written by any producer CPU. */
	atomic64_t drops;
	atomic64_t ipis;	/* kicks sent to another CPU */

} ____cacheline_aligned_in_smp;

/* Per CPU: what the lower delivered here, and what went up inline. */
struct vrss_pcpu {
	struct u64_stats_sync syncp;
	u64_stats_t packets;	/* queue 0's, handed up inline */
	u64_stats_t bytes;
	u64_stats_t nohash;	/* rxhash on, but nothing to hash */
	unsigned long last;	/* jiffies of the latest inline frame */
	unsigned long seen;	/* every frame the lower delivered here */
	/*
	 * Per bucket, while spread: frames and bytes delivered here.  Words
	 * another CPU reads whole; only their differences are used, which
	 * do not mind a wrap (an interval's bytes are far below 4 GB).
	 */
	u32 bucket_packets[VRSS_INDIR_SIZE];
	unsigned long bucket_bytes[VRSS_INDIR_SIZE];
};

/*
 * Per CPU, device mode's frames by queue (the lower's ring they came on):
 * handed up inline, on whichever CPU the ring delivers.
 */
struct vrss_dev_qstats {
	struct u64_stats_sync syncp;
	struct {
		u64_stats_t packets;
		u64_stats_t bytes;
	} q[];
};

/* Per bucket, over every CPU: the load work's view of the last interval. */
struct vrss_bucket_load {
	u32 packets_seen[VRSS_INDIR_SIZE];	/* the sums at the last sample */
	unsigned long bytes_seen[VRSS_INDIR_SIZE];
	u32 packets[VRSS_INDIR_SIZE];		/* over the last interval */
	u64 bytes[VRSS_INDIR_SIZE];
	u32 weight[VRSS_INDIR_SIZE];		/* smoothed (vrss_rebal_weigh()) */
	bool paused;		/* not sampled since width 1 */
};

/* Load sampling of one CPU (gate.c), as of the last sample. */
struct vrss_cpu_sample {
	struct vrss_cpu_times times;
	unsigned long seen;	/* vrss_pcpu.seen then */
	bool valid;
	struct vrss_load load;	/* over the interval before it */
};

/* The user's hash key and indirection table. */
struct vrss_rss {
	struct rcu_head rcu;
	u8 key[VRSS_RSS_KEY_SIZE];
	u32 indir[VRSS_INDIR_SIZE];
	u32 indir_max;		/* the highest queue indir names */
};

/*
 * What maps a frame to its bucket: the key's lookup table and the flow
 * types hashed on their ports.  RCU-replaced whole, and only while no
 * bucket is away from the primary (hashing.c's drain), since a flow whose
 * bucket changes could overtake its frames still on a ring.
 */
struct vrss_hash {
	struct rcu_head rcu;
	unsigned int ports;	/* VRSS_FLOW_* bits hashing ports (sdfn) */
	struct vrss_toeplitz toeplitz;
};

/*
 * The table in effect: the user's table at the width the load policy
 * chose (vrss_indir_effective()).  RCU-replaced on every change of either.
 */
struct vrss_steer {
	struct rcu_head rcu;
	unsigned int width;
	u32 queue[VRSS_INDIR_SIZE];
};

/* The load policy's knobs: module parameters and sysfs files. */
enum vrss_knob {
	VRSS_KNOB_THRESHOLD,	/* percent */
	VRSS_KNOB_HYSTERESIS,	/* percent */
	VRSS_KNOB_INTERVAL_MS,
	VRSS_KNOB_REBALANCE,	/* 0 or 1 */
	VRSS_KNOBS,
};

/* The receive path's per-CPU counters (rx.c). */
struct vrss_rx {
	struct vrss_pcpu __percpu *pcpu;
	struct vrss_dev_qstats __percpu *qstats;	/* device mode's, by queue */
};

/*
 * Which bucket a frame falls in and which queue that bucket is for
 * (rss.c): the user's key and table, the hash in effect and the table in
 * effect at the width the load policy asked for.
 */
struct vrss_rss_state {
	struct vrss_rss __rcu *user;
	struct vrss_hash __rcu *hash;	/* in effect: the receive path's */
	struct vrss_hash *hash_next;	/* the user's, waiting for a drain */
	struct vrss_steer __rcu *steer;
	unsigned int width;		/* asked for by the load policy */
	unsigned int gen;		/* tables rebuilt from the user's */
	unsigned int ports;		/* the user's VRSS_FLOW_* bits (-N) */
	/* Time the table in effect spread wider than one queue (ethtool -S). */
	bool spread;			/* now */
	u64 spread_since;		/* jiffies when it last spread */
	u64 spread_jiffies;		/* before that */
};

/* Where each bucket is, and its frames while it moves (move.c). */
struct vrss_move {
	/* Per bucket: its queue and that queue's tail after its last frame. */
	atomic64_t buckets[VRSS_INDIR_SIZE];
	/* Per bucket: frames waiting for their old ring to drain. */
	struct sk_buff_head park[VRSS_INDIR_SIZE];
	/* Per bucket: frames queued behind its delivery (its park lock). */
	u32 park_behind[VRSS_INDIR_SIZE];
	struct work_struct park_work;	/* releases them once it drained */
	struct work_struct claim_work;	/* claims a bucket that came home */
	bool claim_sync;		/* a grace period before a claim */
	bool all_home;			/* every bucket on the primary */
	atomic64_t held;		/* frames kept on a bucket's old queue */
	atomic64_t moves;
};

/*
 * Receive hashing's lifecycle (hashing.c), under steer_lock.  rxhash
 * off, a new key or new hash fields wait, at width 1, for every bucket to
 * come home: the drain.
 */
enum vrss_hashing_state {
	VRSS_HASHING_OFF,	/* nothing hashed */
	VRSS_HASHING_ON,	/* frames hashed; the gate may run */
	VRSS_HASHING_DRAIN_ON,	/* draining; then the user's key and fields, gate on */
	VRSS_HASHING_DRAIN_OFF,	/* draining; then hashing stops */
};

struct vrss_hashing {
	bool on;		/* frames hashed, buckets tracked (the receive path's) */
	enum vrss_hashing_state state;	/* read by the polls too (DRAIN_*) */
	bool staging;		/* RTNL sets a drain up: none ends, no gate */
	bool up;		/* open, as the drain sees it */
	/* A wake queued the drain's next try; the try clears it first. */
	bool kicked;
	struct delayed_work work;	/* the drain's tries */
};

/*
 * The load gate (gate.c), under steer_lock.  At width 1 no timer
 * samples: with frames coming, the first one due an interval after the
 * last sample queues the next (PACED); after a sample that saw none, the
 * next frame does and the sample starts over (SLEPT).  What a frame does
 * meanwhile is armed in gate.arm, which every hashed frame reads.
 */
enum vrss_gate_state {
	VRSS_GATE_OFF,		/* not sampling: rxhash off, down, or a drain */
	VRSS_GATE_TIMED,	/* the next sample on its timer (or queued) */
	VRSS_GATE_PACED,	/* the next when a frame comes from gate_due on */
	VRSS_GATE_SLEPT,	/* the next when a frame comes, starting over */
};

/* vrss_gate.arm: what the next hashed frame does for the gate. */
enum {
	VRSS_GATE_ARM_NONE,	/* nothing: the work has its timer, or is queued */
	VRSS_GATE_ARM_ANY,	/* queue the work (SLEPT, or a reconfiguration) */
	VRSS_GATE_ARM_DUE,	/* queue the work from gate_due on (PACED) */
};

struct vrss_gate {
	/* What every hashed frame reads: vrss_gate_frame(). */
	atomic_t arm;			/* VRSS_GATE_ARM_* */
	unsigned long due;		/* jiffies: VRSS_GATE_ARM_DUE's next sample */
	unsigned long woke;		/* jiffies: when the frame that woke it came */
	bool count_buckets;		/* rx.c counts per bucket (spread) */

	enum vrss_gate_state state;
	struct delayed_work work;	/* a sample on its timer */
	/* A sample a frame queued, on its own CPU: awake anyway, no IPI. */
	struct work_struct kick;
	unsigned int knobs[VRSS_KNOBS];
	struct vrss_policy *policy;
	struct vrss_load *load_raw;	/* one sample of every queue's CPU */
	struct vrss_cpu_sample *samples; /* nr_cpu_ids of them */
	cpumask_var_t primary;		/* CPUs the lower delivered on */
	int primary_cpu;		/* the busiest of them, or -1 */
	struct vrss_bucket_load *bucket_load;
	struct vrss_rebal rebal;	/* which buckets moved by load, held */
	unsigned int rebal_gen;		/* rss.gen the holds are about */
	u32 rebal_table[VRSS_INDIR_SIZE]; /* the table in effect, rebalanced */
	struct vrss_load *rebal_load;	/* the queues' loads it works from */

	atomic64_t spread_events;	/* width grew */
	atomic64_t contract_events;	/* width shrank */
	atomic64_t rebalance_events;	/* buckets moved by load */
	atomic64_t rebalance_buckets;
};

/*
 * Which way buckets move: on vrss's own rings (software mode), or in the
 * lower's RSS table (device mode).  AUTO is device mode where the lower
 * has a table vrss can write and more than one receive queue, else
 * software mode.
 */
enum vrss_mode {
	VRSS_MODE_AUTO,
	VRSS_MODE_SOFTWARE,
	VRSS_MODE_DEVICE,
};

/*
 * Device mode's hold of the lower's table (device.c), under RTNL.  HELD
 * while vrss0 is up with rxhash on in device mode: the user's table and
 * key saved, vrss's written.
 */
enum vrss_device_state {
	VRSS_DEVICE_SOFTWARE,	/* the lower's table is the user's */
	VRSS_DEVICE_HELD,	/* the lower's table is vrss's */
};

/* vrss_device.hold[]: a bucket's moved frames going up from the work. */
#define VRSS_DEVICE_DELIVERING	U8_MAX

struct vrss_device {
	enum vrss_device_state state;	/* read by the receive path too */
	enum vrss_mode mode;		/* asked for (sysfs mode) */
	u32 size;			/* the lower's table, entries */
	u32 key_size;			/* its key, bytes (0: not written) */
	unsigned int rings;		/* its receive rings, when taken */
	bool configured;		/* IFF_RXFH_CONFIGURED, when taken */
	u32 *saved;			/* the user's table, then its key */
	u32 *written;			/* what vrss wrote last, then its key */
	struct delayed_work commit;	/* the load work's changes, under RTNL */
	atomic64_t commits;		/* tables written */
	atomic64_t commit_errors;

	/*
	 * A moved bucket's frames that reach its new ring are held (in
	 * held[b]) until until[b], while the old ring may still hand up
	 * earlier ones; then the bucket's next frame on the new ring hands
	 * them up before itself, or the unhold work does if none comes.
	 * hold[b] is the new ring plus one while held,
	 * VRSS_DEVICE_DELIVERING while the work hands them up (frames that
	 * come meanwhile queue behind), else 0; written under held[b]'s
	 * lock, read first without it.  holds counts the buckets held.
	 * ring_of[b] is where the table written last puts bucket b.
	 */
	atomic_t holds;
	u8 hold[VRSS_INDIR_SIZE];
	u8 ring_of[VRSS_INDIR_SIZE];
	unsigned long until[VRSS_INDIR_SIZE];
	struct sk_buff_head held[VRSS_INDIR_SIZE];
	struct delayed_work unhold;
	atomic64_t late;		/* frames on a ring their bucket left */
	bool recommit;			/* one came: write the table again */
};

struct vrss_dev {
	struct hlist_node cpuhp_node;	/* CPU hotplug: queues move off */
	struct net_device *dev;
	struct net_device *lower;
	struct vrss_queue *queues;	/* dev->num_rx_queues of them (queue.c) */
	unsigned int ring_size;		/* queue.c: each spread queue's ring */
	cpumask_var_t queues_avoid;	/* queue.c: the primary, as spread queues were placed */

	/*
	 * steer_lock serialises changes of the user's key and table (under
	 * RTNL too), of the load knobs and of the width (the load work),
	 * which all rebuild the table in effect, and guards the hashing
	 * lifecycle's and the gate's state.
	 */
	struct mutex steer_lock;
	struct vrss_rx rx;		/* rx.c */
	struct vrss_hashing hs;		/* hashing.c */
	struct vrss_gate gate;		/* gate.c */
	struct vrss_rss_state rss;	/* rss.c */
	struct vrss_move mv;		/* move.c */
	struct vrss_device dm;		/* device.c */

	struct pcpu_sw_netstats __percpu *tx_stats;
	atomic64_t rx_dropped_down;	/* frames received while vrss0 was down */
	/*
	 * netdev.c: in place, frames go up as the lower's (vrss0 carries no
	 * address); stacked, through vrss0.  Changed only while vrss0 is
	 * down.
	 */
	bool inplace;
};

/*
 * The vrss device whose frames this CPU is handing up from a ring, a park
 * or a hold: in place they are the lower's again, and its rx_handler lets
 * them pass (netdev.c).  Set with BH off.
 */
DECLARE_PER_CPU(struct vrss_dev *, vrss_handing_up);

static inline struct vrss_dev *vrss_up_begin(struct vrss_dev *vd)
{
	struct vrss_dev *prev = __this_cpu_read(vrss_handing_up);

	__this_cpu_write(vrss_handing_up, vd);
	return prev;
}

static inline void vrss_up_end(struct vrss_dev *prev)
{
	__this_cpu_write(vrss_handing_up, prev);
}

/*
 * Whether a frame waiting in vrss (parked, held) still goes up: stacked,
 * only through a running vrss0; in place the frame is the lower's.
 */
static inline bool vrss_up_open(const struct vrss_dev *vd)
{
	return READ_ONCE(vd->inplace) || netif_running(vd->dev);
}

/* The device a frame that waited goes up on: whichever attach is now. */
static inline struct net_device *vrss_up_dev(const struct vrss_dev *vd)
{
	return READ_ONCE(vd->inplace) ? vd->lower : vd->dev;
}

/*
 * A frame up the stack once, outside GRO and RPS (a frame that waited, or
 * a spread queue's that must not meet RPS).  One from the reserves goes
 * up with reclaim kept out, as the core's own receive does, for the
 * sockets allowed to use them; taps see it, which the core's own receive
 * spares them.
 */
static inline void vrss_receive_skb(struct sk_buff *skb)
{
	unsigned int noreclaim;

	if (sk_memalloc_socks() && skb_pfmemalloc(skb)) {
		noreclaim = memalloc_noreclaim_save();
		netif_receive_skb_core(skb);
		memalloc_noreclaim_restore(noreclaim);
		return;
	}
	netif_receive_skb_core(skb);
}

/* netdev.c */
int vrss_netdev_init(void);
void vrss_netdev_exit(void);

/*
 * A frame handed to the stack on this CPU as queue 0's (rx.c, move.c).
 * In place the rx_handler gives it back its lower's queue and lets it
 * pass (netdev.c), as vrss_up_skb() does for parked ones.
 */
static inline rx_handler_result_t vrss_rx_inline(struct vrss_pcpu *pc,
						 struct sk_buff *skb)
{
	/* vrss0's queue 0, not the lower's queue index. */
	skb_record_rx_queue(skb, 0);
	u64_stats_update_begin(&pc->syncp);
	u64_stats_inc(&pc->packets);
	u64_stats_add(&pc->bytes, skb->len);
	u64_stats_update_end(&pc->syncp);
	/* Read by vrss_queue_cpu() on another CPU. */
	WRITE_ONCE(pc->last, jiffies);
	return RX_HANDLER_ANOTHER;
}

/*
 * A frame that waited (parked) handed up now as queue 0's, through vrss0
 * or, in place, as the lower's with the lower's queue: whichever attach
 * is now.
 */
static inline void vrss_up_skb(struct vrss_dev *vd, struct vrss_pcpu *pc,
			       struct sk_buff *skb)
{
	u16 queue = skb->queue_mapping;

	vrss_rx_inline(pc, skb);
	skb->dev = vrss_up_dev(vd);
	/* In place, the lower's queue, as vrss_handle_inplace() gives back. */
	if (skb->dev == vd->lower)
		skb->queue_mapping = queue;
	vrss_receive_skb(skb);
}

/*
 * Device mode: a frame handed up as queue @q's (the lower's ring it came
 * on), counted on this CPU (rx.c, device.c).
 */
static inline void vrss_rx_device_count(struct vrss_dev *vd,
					struct sk_buff *skb, unsigned int q)
{
	struct vrss_dev_qstats *qs = this_cpu_ptr(vd->rx.qstats);

	u64_stats_update_begin(&qs->syncp);
	u64_stats_inc(&qs->q[q].packets);
	u64_stats_add(&qs->q[q].bytes, skb->len);
	u64_stats_update_end(&qs->syncp);
}

/* rx.c */
int vrss_rx_init(struct vrss_dev *vd);
void vrss_rx_uninit(struct vrss_dev *vd);
rx_handler_result_t vrss_rx(struct vrss_dev *vd, struct sk_buff *skb);
u64 vrss_rx_nohash(struct vrss_dev *vd);
void vrss_rx_device_stats(struct vrss_dev *vd, unsigned int i, u64 *packets,
			  u64 *bytes);
void vrss_rx_bucket_sample(struct vrss_dev *vd, struct vrss_bucket_load *bl);

/* move.c */
void vrss_move_init(struct vrss_dev *vd);
void vrss_move_uninit(struct vrss_dev *vd);
rx_handler_result_t vrss_move_frame(struct vrss_dev *vd, struct vrss_pcpu *pc,
				    struct sk_buff *skb, unsigned int b, u64 last);
void vrss_move_reset(struct vrss_dev *vd);
unsigned int vrss_move_drain(struct vrss_dev *vd);
void vrss_move_steer_changed(struct vrss_dev *vd);
bool vrss_move_tick(struct vrss_dev *vd);
bool vrss_move_settled(struct vrss_dev *vd);
bool vrss_move_home(struct vrss_dev *vd);

/* queue.c */
int vrss_queues_init(void);
void vrss_queues_exit(void);
int vrss_queues_alloc(struct vrss_dev *vd);
void vrss_queues_free(struct vrss_dev *vd);
int vrss_queues_resize(struct vrss_dev *vd, unsigned int size);
void vrss_queues_place(struct vrss_dev *vd, const struct cpumask *primary);
void vrss_queues_link_napi(struct vrss_dev *vd, bool link);
void vrss_queues_open(struct vrss_dev *vd);
void vrss_queues_stop(struct vrss_dev *vd);
void vrss_queue_kick(struct vrss_queue *q);
bool vrss_queue_enqueue(struct vrss_queue *q, atomic64_t *bucket,
			struct sk_buff *skb);
void vrss_queue_drop(struct vrss_queue *q, struct sk_buff *skb,
		     enum skb_drop_reason reason);
void vrss_queue_read_stats(struct vrss_dev *vd, unsigned int i, u64 *packets,
			   u64 *bytes);
int vrss_queue_cpu(struct vrss_dev *vd, unsigned int i);

/* rss.c */
int vrss_rss_init(struct vrss_dev *vd);
void vrss_rss_uninit(struct vrss_dev *vd);
int vrss_rss_update(struct vrss_dev *vd, const u32 *indir, const u8 *key);
int vrss_rss_set_ports(struct vrss_dev *vd, unsigned int ports);
u64 vrss_rss_spread_ms(struct vrss_dev *vd);
void vrss_rss_rehash(struct vrss_dev *vd);
void vrss_rss_channels_changed(struct vrss_dev *vd);
unsigned int vrss_rss_max_width(struct vrss_dev *vd);
int vrss_rss_set_width(struct vrss_dev *vd, unsigned int width);
unsigned int vrss_rss_get_steer(struct vrss_dev *vd, u32 *queue);
int vrss_rss_set_steer(struct vrss_dev *vd, const u32 *queue);
int vrss_rss_single(struct vrss_dev *vd);
bool vrss_rss_bucket(struct vrss_dev *vd, struct sk_buff *skb,
		     unsigned int *bucket);

/* sysfs.c */
extern const struct attribute_group vrss_sysfs_group;

/* ethtool.c */
extern const struct ethtool_ops vrss_ethtool_ops;

#endif /* _VRSS_H */
