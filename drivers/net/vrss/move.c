// SPDX-License-Identifier: GPL-2.0
/*
 * In-order moves of buckets between queues.
 *
 * With receive hashing on, a frame's bucket names its queue through the
 * table in effect.  When that changes, the bucket follows only once no
 * frame it already sent elsewhere can be overtaken (RFS's in-order rule):
 *
 *  - leaving a ring: once the ring's consumer has handed every frame of
 *    the bucket to the stack (its head passed the bucket's last tail).
 *    The check and the move happen under the old ring's producer lock,
 *    and every enqueue records the bucket's tail under the same lock, so
 *    a frame enqueued on another CPU cannot slip in between.  Meanwhile
 *    the bucket's new frames are parked, in order, on a list of its own
 *    instead of the old ring: were they queued there, each would push the
 *    point the ring must reach, and a busy flow on a saturated ring (the
 *    one rebalancing moves) would never leave.  Parked, the wait is what
 *    the ring held when the move began.  Once the ring has passed that
 *    point the parked frames go first to the new queue (onto its ring, or
 *    up inline before the frame at hand), then the bucket moves; if no
 *    frame comes to do it, a work item does (vrss_park_work()), which the
 *    old queue's poll queues when its head moves and the load work every
 *    interval while a bucket is parked.  The head moves only once GRO
 *    let go of the frames (vrss_poll_publish()).
 *  - leaving the inline path: a frame handed up inline may still sit in
 *    the stack's receive batch of the CPU that received it, but only
 *    inside the RCU read-side section the receive path runs the
 *    rx_handler in.  So the CPU that changes the table pays, not the
 *    frames: it claims each bucket leaving the primary (PENDING: frames
 *    that see it park), waits for a grace period, after which no frame
 *    that went inline before the claim is still in the stack, and then
 *    puts the parked frames on the bucket's ring ahead of any later one
 *    (vrss_move_steer_changed()).  A frame of a bucket on the primary reads
 *    the bucket's state and goes up: no barrier, no write.
 *
 * A bucket's state is one word (include/vrss/move.h, with the drained
 * predicate and its unit tests): 0 on the primary, else its queue and the
 * tail of its last frame there, and at most one of PARKED (leaving a
 * ring), PENDING (claimed to leave the primary) and DELIVERING (its parked
 * frames going up inline on a CPU; frames other CPUs receive meanwhile
 * queue behind them, vrss_park_behind()).
 */
#include <linux/netdevice.h>
#include <linux/skbuff.h>

#include "device.h"
#include "gate.h"
#include "hashing.h"
#include "trace.h"
#include "vrss.h"

/* vrss_bucket_leave_ring(): the frame was parked (or dropped). */
#define VRSS_TAKEN		(U32_MAX - 1)

/*
 * Bucket @b just came home (0) on a table read a moment ago, RCU held.
 * Had the table changed since, its claim pass saw the bucket elsewhere
 * and passed it over, and no frame of a bucket at home reads the table
 * again: it would stay inline while the table names a spread queue.  So
 * the table is read once more, after the bucket's state; the claim pass
 * reads the states after the table (vrss_move_claim()'s barrier), so one
 * of the two sees the other, and the work claims what this one sees.
 */
static void vrss_bucket_home(struct vrss_dev *vd, unsigned int b)
{
	const struct vrss_steer *steer;

	/* The state before the table; pairs with vrss_move_claim()'s. */
	smp_mb();
	steer = rcu_dereference(vd->rss.steer);
	if (steer && steer->queue[b])
		queue_work(system_highpri_wq, &vd->mv.claim_work);
}

/* Bucket @b moved from queue @from to @to: count and trace it once. */
static void vrss_bucket_moved(struct vrss_dev *vd, unsigned int b, u32 from,
			      u32 to)
{
	atomic64_inc(&vd->mv.moves);
	trace_vrss_bucket_move(vd->dev, b, from, to);
}

/*
 * Under @q's producer lock: a frame of bucket @b waits for @q to drain.
 * All the buckets leaving @q park as many frames as its ring holds at
 * most: beyond, the ring's drops, as if they had gone onto the ring.
 */
static void vrss_park(struct vrss_dev *vd, struct vrss_queue *q, unsigned int b,
		      struct sk_buff *skb)
{
	if (unlikely(q->parked_frames >= vd->ring_size)) {
		vrss_queue_drop(q, skb, SKB_DROP_REASON_FULL_RING);
		return;
	}
	__skb_queue_tail(&vd->mv.park[b], skb);
	q->parked_frames++;
	atomic64_inc(&vd->mv.held);
}

/* Under @q's producer lock: bucket @b no longer parks its frames on @q. */
static void vrss_unparked(struct vrss_queue *q, unsigned int n)
{
	WRITE_ONCE(q->parked_buckets, q->parked_buckets - 1);
	q->parked_frames -= n;
}

/* Under @q's producer lock: bucket @b's parked frames onto @q's ring. */
static void vrss_park_to_ring(struct vrss_dev *vd, unsigned int b,
			      struct vrss_queue *q)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(&vd->mv.park[b]))) {
		if (unlikely(__ptr_ring_produce(&q->ring, skb)))
			vrss_queue_drop(q, skb, SKB_DROP_REASON_FULL_RING);
		else
			q->tail++;
	}
}

/*
 * Under @t's producer lock, the parked frames already uncounted: bucket
 * @b's parked frames onto @t's ring, and the bucket with them, behind its
 * last frame.
 */
static void vrss_park_hand_on(struct vrss_dev *vd, unsigned int b,
			      struct vrss_queue *t)
{
	vrss_park_to_ring(vd, b, t);
	atomic64_set(&vd->mv.buckets[b], vrss_bucket_pack(t->index, t->tail));
}

/*
 * Under the producer locks of @q, the ring bucket @b leaves, and of @t:
 * its parked frames onto @t's ring, and the bucket with them.
 */
static void vrss_park_onto(struct vrss_dev *vd, unsigned int b,
			   struct vrss_queue *q, struct vrss_queue *t)
{
	vrss_unparked(q, skb_queue_len(&vd->mv.park[b]));
	vrss_park_hand_on(vd, b, t);
}

/*
 * Parked frames going inline (@list, taken off the park): up to the stack
 * now, one by one and in order, ahead of any later frame of the bucket.
 * RCU held and BH off, as in the rx_handler.  Frames other CPUs received
 * meanwhile queued behind them on the bucket's park list (under its own
 * lock: vrss_park_behind()); they go up too, then the bucket is inline.
 */
static void vrss_park_up(struct vrss_dev *vd, unsigned int b,
			 struct sk_buff_head *list)
{
	struct vrss_pcpu *pc = this_cpu_ptr(vd->rx.pcpu);
	struct sk_buff_head *park = &vd->mv.park[b];
	struct vrss_dev *prev;
	struct sk_buff *skb;

	for (;;) {
		prev = vrss_up_begin(vd);
		while ((skb = __skb_dequeue(list))) {
			if (unlikely(!vrss_up_open(vd))) {
				atomic64_inc(&vd->rx_dropped_down);
				kfree_skb_reason(skb, SKB_DROP_REASON_DEV_READY);
				continue;
			}
			vrss_up_skb(vd, pc, skb);
		}
		vrss_up_end(prev);
		spin_lock(&park->lock);
		if (skb_queue_empty(park)) {
			/* Pairs with the acquire of the CPUs that queued behind. */
			atomic64_set_release(&vd->mv.buckets[b], 0);
			spin_unlock(&park->lock);
			/* Home before draining is read; pairs with its barrier. */
			smp_mb();
			vrss_hashing_wake(vd);
			vrss_bucket_home(vd, b);
			return;
		}
		skb_queue_splice_tail_init(park, list);
		spin_unlock(&park->lock);
	}
}

/*
 * Bucket @b's parked frames are being handed up by another CPU (state
 * @last, DELIVERING): the frame queues behind them, on the bucket's park
 * list, which the deliverer empties before it lets the bucket go.  At
 * most a ring's worth queues behind one delivery (beyond, queue 0's
 * drops), so that the deliverer, with BH off, does a bounded amount of
 * work.  False when the state changed meanwhile: decide again.
 */
static bool vrss_park_behind(struct vrss_dev *vd, unsigned int b, u64 last,
			     struct sk_buff *skb)
{
	struct sk_buff_head *park = &vd->mv.park[b];
	bool queued = false, drop = false;

	spin_lock(&park->lock);
	if (atomic64_read(&vd->mv.buckets[b]) == last) {
		drop = vd->mv.park_behind[b] >= vd->ring_size;
		if (!drop) {
			__skb_queue_tail(park, skb);
			vd->mv.park_behind[b]++;
		}
		queued = true;
	}
	spin_unlock(&park->lock);
	if (unlikely(drop))
		vrss_queue_drop(&vd->queues[0], skb, SKB_DROP_REASON_FULL_RING);
	else if (queued)
		atomic64_inc(&vd->mv.held);
	return queued;
}

/*
 * Under @from's producer lock, bucket @b parked and @from drained up to
 * its wait: the parked frames go to @to ahead of any later frame, and the
 * bucket with them.  To a ring, under its producer lock too: taken with a
 * trylock where frames arrive (@nested false: the frame at hand waits
 * parked for the next one), in process context where nothing else nests.
 * To the primary, they are handed to @up for vrss_park_up() outside the
 * lock.  Returns the bucket's queue, or VRSS_TAKEN if it is still parked.
 */
static u32 vrss_park_release(struct vrss_dev *vd, unsigned int b, u32 from,
			     u32 to, struct sk_buff_head *up, bool nested)
{
	struct vrss_queue *q = &vd->queues[from], *t = &vd->queues[to];

	if (to == from) {
		/* The move is off: the frames are newer than the ring's. */
		vrss_park_onto(vd, b, q, q);
		if (!__ptr_ring_empty(&q->ring))
			vrss_queue_kick(q);
		return to;
	}
	if (to) {
		if (!nested) {
			if (!spin_trylock(&t->ring.producer_lock))
				return VRSS_TAKEN;
		} else {
			spin_lock_nested(&t->ring.producer_lock, SINGLE_DEPTH_NESTING);
		}
		vrss_park_onto(vd, b, q, t);
		spin_unlock(&t->ring.producer_lock);
		if (!__ptr_ring_empty(&t->ring))
			vrss_queue_kick(t);
	} else {
		/*
		 * Under the list's lock too: a CPU that sees DELIVERING queues
		 * behind under it (vrss_park_behind()), onto an empty list.
		 */
		bool home;

		spin_lock(&vd->mv.park[b].lock);
		vrss_unparked(q, skb_queue_len(&vd->mv.park[b]));
		skb_queue_splice_tail_init(&vd->mv.park[b], up);
		vd->mv.park_behind[b] = 0;
		/*
		 * Nothing to hand up: the frame at hand was not parked yet (the
		 * ring drained as the park began), or a full park dropped them.
		 */
		home = skb_queue_empty(up);
		atomic64_set(&vd->mv.buckets[b], home ? 0 :
			     VRSS_BUCKET_DELIVERING | smp_processor_id());
		spin_unlock(&vd->mv.park[b].lock);
		if (home)
			vrss_bucket_home(vd, b);
	}
	vrss_bucket_moved(vd, b, from, to);
	return to;
}

/*
 * Under @q's producer lock: bucket @b's state, re-read, and @q's head;
 * U64_MAX if the bucket is no longer on (or parked leaving) @q.
 */
static u64 vrss_ring_lock_held_state(struct vrss_dev *vd, struct vrss_queue *q,
				     unsigned int b, u32 *head)
{
	u64 last = atomic64_read(&vd->mv.buckets[b]);

	/* Pairs with the poll's release: frames up to head are in the stack. */
	*head = smp_load_acquire(&q->head);
	if (last & (VRSS_BUCKET_PENDING | VRSS_BUCKET_DELIVERING) ||
	    vrss_bucket_queue(last) != q->index)
		return U64_MAX;
	return last;
}

/*
 * Under @q's producer lock: bucket @b (state @last), not drained, starts
 * parking its frames; returns its state and, in @head, @q's head read
 * again.  A full barrier between marking the bucket parked and reading
 * head, as vrss_poll() has one between publishing head and reading
 * parked_buckets: either the poll sees the bucket and wakes the work, or
 * the bucket sees the head the poll published (and leaves now).
 */
static u64 vrss_park_begin(struct vrss_dev *vd, struct vrss_queue *q,
			   unsigned int b, u64 last, u32 *head)
{
	last |= VRSS_BUCKET_PARKED;
	atomic64_set(&vd->mv.buckets[b], last);
	WRITE_ONCE(q->parked_buckets, q->parked_buckets + 1);
	/* Parked before head is read; pairs with vrss_poll_publish()'s. */
	smp_mb();
	/* Pairs with the poll's release: frames up to head are in the stack. */
	*head = smp_load_acquire(&q->head);
	/* The load work ticks while a bucket is parked: the backstop. */
	vrss_gate_wake(vd);
	return last;
}

/*
 * Under @from's producer lock, its ring drained of bucket @b, nothing
 * parked: @b moves to @to now, its tail there the ring's current one.
 */
static void vrss_bucket_move_drained(struct vrss_dev *vd, unsigned int b,
				     u32 from, u32 to)
{
	atomic64_set(&vd->mv.buckets[b],
		     vrss_bucket_pack(to, to ? READ_ONCE(vd->queues[to].tail) : 0));
	vrss_bucket_moved(vd, b, from, to);
	if (!to)
		vrss_bucket_home(vd, b);
}

/*
 * The bucket sits on spread queue @from (or is parked leaving it) and the
 * table names @to.  Under @from's producer lock: it moves once @from's
 * consumer has handed its last frame to the stack; until then the frame
 * is parked.  Returns the queue for the current frame, VRSS_TAKEN when
 * the frame was parked, U32_MAX when the bucket moved meanwhile.  Frames
 * for vrss_park_up() before the current one are left in @up.
 */
static u32 vrss_bucket_leave_ring(struct vrss_dev *vd, unsigned int b,
				  u32 from, u32 to, struct sk_buff *skb,
				  struct sk_buff_head *up)
{
	struct vrss_queue *q = &vd->queues[from];
	u32 ret = VRSS_TAKEN;
	u64 last;
	u32 head;

	spin_lock(&q->ring.producer_lock);
	last = vrss_ring_lock_held_state(vd, q, b, &head);
	if (last == U64_MAX) {
		ret = U32_MAX;		/* moved by another CPU meanwhile */
	} else if (!(last & VRSS_BUCKET_PARKED) && vrss_bucket_drained(last, head)) {
		vrss_bucket_move_drained(vd, b, from, to);
		ret = to;
	} else {
		if (!(last & VRSS_BUCKET_PARKED))
			last = vrss_park_begin(vd, q, b, last, &head);
		if (to == from || vrss_bucket_drained(last, head))
			ret = vrss_park_release(vd, b, from, to, up, false);
		if (ret == VRSS_TAKEN) {
			vrss_park(vd, q, b, skb);
			/* @to's lock was taken: the work item tries again. */
			if (vrss_bucket_drained(last, head))
				queue_work(system_highpri_wq, &vd->mv.park_work);
		}
	}
	spin_unlock(&q->ring.producer_lock);
	return ret;
}

/*
 * Bucket @b is leaving the primary for spread queue @to (state @last,
 * PENDING): the frame waits on the bucket's park list, under @to's
 * producer lock, until the CPU that claimed the move puts the list on
 * @to's ring.  False when the state changed meanwhile: decide again.
 */
static bool vrss_park_pending(struct vrss_dev *vd, unsigned int b, u64 last,
			      struct sk_buff *skb)
{
	struct vrss_queue *t = &vd->queues[vrss_bucket_queue(last)];
	bool parked = false;

	spin_lock(&t->ring.producer_lock);
	if (atomic64_read(&vd->mv.buckets[b]) == last) {
		vrss_park(vd, t, b, skb);
		parked = true;
	}
	spin_unlock(&t->ring.producer_lock);
	return parked;
}

/*
 * From vrss_rx(), a hashed frame of bucket @b (state @last) that is
 * neither on the primary nor on the spread queue the table names: the
 * bucket is moving, or moved under the producer's lock.  Loops only when
 * another CPU moved the bucket under it.
 */
rx_handler_result_t vrss_move_frame(struct vrss_dev *vd, struct vrss_pcpu *pc,
				    struct sk_buff *skb, unsigned int b, u64 last)
{
	struct sk_buff_head up;
	u32 qi, to;

	__skb_queue_head_init(&up);
	for (;; last = atomic64_read_acquire(&vd->mv.buckets[b])) {
		if (!last)
			return vrss_rx_inline(pc, skb);
		if (unlikely(last & VRSS_BUCKET_DELIVERING)) {
			/*
			 * A frame the stack sent back into the lower while
			 * this CPU hands the parked ones up (an ingress
			 * redirect): it comes after the one being handed up.
			 */
			if ((u32)last == smp_processor_id())
				return vrss_rx_inline(pc, skb);
			/* Another CPU hands the parked frames up: after them. */
			if (vrss_park_behind(vd, b, last, skb))
				break;
			continue;
		}
		if (last & VRSS_BUCKET_PENDING) {
			if (vrss_park_pending(vd, b, last, skb))
				break;
			continue;
		}
		to = rcu_dereference(vd->rss.steer)->queue[b];
		qi = vrss_bucket_queue(last);
		if (last & VRSS_BUCKET_PARKED || qi != to)
			qi = vrss_bucket_leave_ring(vd, b, qi, to, skb, &up);
		if (qi == U32_MAX)
			continue;
		if (qi == VRSS_TAKEN)
			break;
		if (qi == 0) {
			if (!skb_queue_empty(&up))
				vrss_park_up(vd, b, &up);
			return vrss_rx_inline(pc, skb);
		}
		if (vrss_queue_enqueue(&vd->queues[qi], &vd->mv.buckets[b], skb))
			break;
	}
	return RX_HANDLER_CONSUMED;
}

/*
 * Under RTNL and steer_lock, before receive hashing starts (hashing.c),
 * the table in effect at width 1: every bucket on the primary, none
 * parked.  A frame of the last period, still hashed (maybe with another
 * key), is waited for before the first claim.
 */
void vrss_move_reset(struct vrss_dev *vd)
{
	unsigned int b;

	for (b = 0; b < VRSS_INDIR_SIZE; b++) {
		WARN_ON_ONCE(!skb_queue_empty(&vd->mv.park[b]));
		atomic64_set(&vd->mv.buckets[b], 0);
	}
	vd->mv.claim_sync = true;
}

/*
 * Under steer_lock, in process context: the table in effect changed.
 * Buckets on the primary that it sends to a spread queue are claimed
 * (PENDING: their frames park), then, once a grace period has passed, no
 * frame a CPU handed up inline before the claim is still in the stack
 * (the receive path runs the rx_handler and the stack's receive batch in
 * one RCU read-side section): the parked frames go onto the queue's ring
 * and the bucket with them.  Buckets on spread queues follow by
 * themselves (vrss_bucket_leave_ring()).  Expedited, as a spread event
 * is rare and parked frames wait for it.  After a new key or new fields
 * (vrss_rss_rehash()), or hashing off and on again, a grace period first:
 * a frame that read the old hash before it was replaced could otherwise
 * find its old bucket claimed, park, and be overtaken by a later frame
 * of its flow in another bucket.
 */
static void vrss_move_claim(struct vrss_dev *vd)
{
	const struct vrss_steer *steer;
	bool claimed = false;
	unsigned int b;
	u64 last;

	if (!READ_ONCE(vd->hs.on))
		return;
	steer = rcu_dereference_protected(vd->rss.steer, lockdep_is_held(&vd->steer_lock));
	/* The table before the states; pairs with vrss_bucket_home(). */
	smp_mb();
	if (vd->mv.claim_sync) {
		for (b = 0; b < VRSS_INDIR_SIZE; b++)
			if (steer->queue[b] && !atomic64_read(&vd->mv.buckets[b]))
				break;
		if (b == VRSS_INDIR_SIZE)
			return;
		synchronize_rcu_expedited();
		vd->mv.claim_sync = false;
	}
	for (b = 0; b < VRSS_INDIR_SIZE; b++) {
		u64 claim = VRSS_BUCKET_PENDING | vrss_bucket_pack(steer->queue[b], 0);

		last = 0;
		if (steer->queue[b] && atomic64_try_cmpxchg(&vd->mv.buckets[b], &last, claim))
			claimed = true;
	}
	if (!claimed)
		return;
	vd->mv.all_home = false;
	synchronize_rcu_expedited();
	for (b = 0; b < VRSS_INDIR_SIZE; b++) {
		struct vrss_queue *t;
		u32 to;

		last = atomic64_read(&vd->mv.buckets[b]);
		if (!(last & VRSS_BUCKET_PENDING))
			continue;
		to = vrss_bucket_queue(last);
		t = &vd->queues[to];
		local_bh_disable();
		spin_lock(&t->ring.producer_lock);
		/* Claimed from the primary: its parked frames counted on @t. */
		t->parked_frames -= skb_queue_len(&vd->mv.park[b]);
		vrss_park_hand_on(vd, b, t);
		spin_unlock(&t->ring.producer_lock);
		/* Down: the frames wait for the next open (vrss_queues_open()). */
		if (netif_running(vd->dev) && !__ptr_ring_empty(&t->ring))
			vrss_queue_kick(t);
		local_bh_enable();
		vrss_bucket_moved(vd, b, 0, to);
	}
}

/* Under steer_lock, in process context: the table in effect changed. */
void vrss_move_steer_changed(struct vrss_dev *vd)
{
	/* Device mode: the lower's table moves the buckets, not vrss's rings. */
	if (vrss_device_held(vd)) {
		vrss_device_steer_changed(vd);
		return;
	}
	vrss_move_claim(vd);
}

/* A bucket came home that the table sends away: claimed as a change is. */
static void vrss_claim_work(struct work_struct *work)
{
	struct vrss_dev *vd = container_of(work, struct vrss_dev, mv.claim_work);

	mutex_lock(&vd->steer_lock);
	if (!vrss_device_held(vd))
		vrss_move_claim(vd);
	mutex_unlock(&vd->steer_lock);
}

/*
 * Process context: bucket @b, on a spread queue or parked leaving one,
 * goes to @to once that ring has handed the stack its frames (or, @force,
 * whatever the ring still holds: a reorder, for a bucket that cannot wait
 * longer).  False while it has to wait.
 */
static bool vrss_bucket_settle(struct vrss_dev *vd, unsigned int b, u32 to,
			       bool force)
{
	u64 last = atomic64_read(&vd->mv.buckets[b]);
	struct sk_buff_head up;
	struct vrss_queue *q;
	bool done = true;
	u32 from, head;

	from = vrss_bucket_queue(last);
	if (last & (VRSS_BUCKET_PENDING | VRSS_BUCKET_DELIVERING) || !from ||
	    (!(last & VRSS_BUCKET_PARKED) && from == to))
		return true;
	__skb_queue_head_init(&up);
	q = &vd->queues[from];
	/*
	 * BH off from the lock to the end of the hand-up: a softirq on this
	 * CPU would find the bucket DELIVERING from this CPU and go up ahead
	 * (the rule for a frame sent back into the lower meanwhile).
	 */
	rcu_read_lock();
	local_bh_disable();
	spin_lock(&q->ring.producer_lock);
	last = vrss_ring_lock_held_state(vd, q, b, &head);
	/* U64_MAX: moved meanwhile. */
	if (last != U64_MAX) {
		if (!force && to != from && !vrss_bucket_drained(last, head))
			done = false;
		else if (last & VRSS_BUCKET_PARKED)
			vrss_park_release(vd, b, from, to, &up, true);
		else if (to != from)
			vrss_bucket_move_drained(vd, b, from, to);
	}
	spin_unlock(&q->ring.producer_lock);
	if (!skb_queue_empty(&up))
		vrss_park_up(vd, b, &up);
	local_bh_enable();
	rcu_read_unlock();
	return done;
}

/*
 * Scheduled by the poll of a queue buckets are leaving, once its head
 * moved (or by a frame that found the new queue's lock taken): parked
 * buckets whose old ring drained go where the table says, though no later
 * frame of theirs came to move them.
 */
static void vrss_park_work(struct work_struct *work)
{
	struct vrss_dev *vd = container_of(work, struct vrss_dev, mv.park_work);
	const struct vrss_steer *steer;
	unsigned int b;
	u32 to;

	for (b = 0; b < VRSS_INDIR_SIZE; b++) {
		if (!(atomic64_read(&vd->mv.buckets[b]) & VRSS_BUCKET_PARKED))
			continue;
		rcu_read_lock();
		steer = rcu_dereference(vd->rss.steer);
		to = steer ? steer->queue[b] : 0;
		rcu_read_unlock();
		vrss_bucket_settle(vd, b, to, false);
		cond_resched();
	}
}

/* The protocol's state of a new device: every bucket on the primary. */
void vrss_move_init(struct vrss_dev *vd)
{
	unsigned int b;

	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		skb_queue_head_init(&vd->mv.park[b]);
	memset(vd->mv.park_behind, 0, sizeof(vd->mv.park_behind));
	INIT_WORK(&vd->mv.park_work, vrss_park_work);
	INIT_WORK(&vd->mv.claim_work, vrss_claim_work);
	/* Every bucket starts on the primary. */
	vd->mv.all_home = true;
}

/* Teardown, the queues stopped: frames still parked are dropped. */
void vrss_move_uninit(struct vrss_dev *vd)
{
	struct sk_buff *skb;
	unsigned int b;

	/*
	 * Defensive: the stop cancelled it, and only a drain's hand-up
	 * (at width 1, which claims nothing) could queue it since.
	 */
	cancel_work_sync(&vd->mv.claim_work);
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		while ((skb = __skb_dequeue(&vd->mv.park[b])))
			kfree_skb_reason(skb, SKB_DROP_REASON_DEV_READY);
}

/*
 * From the load work, every interval while receive hashing is on.  A
 * bucket idle on a spread queue takes the ring's head as its tail once
 * the ring drained it, so that none falls 2^31 frames behind
 * (vrss_bucket_refresh()).  A bucket still parked is woken by the work
 * whether or not a poll did: the backstop.  True if no bucket is parked,
 * claimed or being delivered: nothing waits for the next tick.
 */
bool vrss_move_tick(struct vrss_dev *vd)
{
	bool parked = false, home = true, flagged = false;
	struct vrss_queue *q;
	unsigned int b;
	u64 last;
	u32 head;

	/* Only a claim takes a bucket off the primary (steer_lock held). */
	if (vd->mv.all_home)
		return true;
	/*
	 * Softirqs off once, not in each lock: every spin_unlock_bh() ran
	 * this CPU's pending softirqs inside the sample, which under load
	 * stretched it far past an interval.
	 */
	local_bh_disable();
	for (b = 0; b < VRSS_INDIR_SIZE; b++) {
		last = atomic64_read(&vd->mv.buckets[b]);
		home &= !last;
		if (last & VRSS_BUCKET_PARKED)
			parked = true;
		if (last & VRSS_BUCKET_FLAGS)
			flagged = true;
		if (last & VRSS_BUCKET_FLAGS || !vrss_bucket_queue(last))
			continue;
		q = &vd->queues[vrss_bucket_queue(last)];
		spin_lock(&q->ring.producer_lock);
		last = vrss_ring_lock_held_state(vd, q, b, &head);
		if (last != U64_MAX)
			atomic64_set(&vd->mv.buckets[b], vrss_bucket_refresh(last, head));
		spin_unlock(&q->ring.producer_lock);
	}
	local_bh_enable();
	if (parked)
		queue_work(system_highpri_wq, &vd->mv.park_work);
	vd->mv.all_home = home;
	return !flagged;
}

/* Under steer_lock: every bucket on the primary, nothing on vrss's rings. */
bool vrss_move_home(struct vrss_dev *vd)
{
	unsigned int b;

	if (vd->mv.all_home)
		return true;
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		if (atomic64_read(&vd->mv.buckets[b]))
			return false;
	return true;
}

/*
 * Under steer_lock: no bucket parked, claimed or being delivered (as
 * vrss_move_tick() answers, without its tick).
 */
bool vrss_move_settled(struct vrss_dev *vd)
{
	unsigned int b;

	if (vd->mv.all_home)
		return true;
	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		if (atomic64_read(&vd->mv.buckets[b]) & VRSS_BUCKET_FLAGS)
			return false;
	return true;
}

/* Bucket @b back to the primary if nothing of it is left elsewhere. */
static bool vrss_bucket_drain(struct vrss_dev *vd, unsigned int b)
{
	u64 last = atomic64_read(&vd->mv.buckets[b]);

	if (!last)
		return true;
	if (last & VRSS_BUCKET_DELIVERING)
		return false;
	/* Claims are made and completed under steer_lock. */
	if (WARN_ON_ONCE(last & VRSS_BUCKET_PENDING))
		return false;
	return vrss_bucket_settle(vd, b, 0, false) && !atomic64_read(&vd->mv.buckets[b]);
}

/*
 * Under steer_lock, the table in effect at width 1 and the load work
 * stopped (hashing.c's drain): every bucket whose old ring has handed the
 * stack what it held of it comes home, its parked frames first.  None
 * leaves the primary meanwhile (only a claim takes one off it).  The
 * rings only drain (the buckets' new frames park), so the wait is for
 * what they held.  Returns how many buckets still wait.
 */
unsigned int vrss_move_drain(struct vrss_dev *vd)
{
	unsigned int b, left = 0;

	for (b = 0; b < VRSS_INDIR_SIZE; b++)
		left += !vrss_bucket_drain(vd, b);
	return left;
}
