/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints: vrss:vrss_load_sample, vrss:vrss_width_change,
 * vrss:vrss_rebalance and vrss:vrss_bucket_move.  Device names are copied into fixed arrays,
 * which builds the same on every kernel vrss supports.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM vrss

#if !defined(_VRSS_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _VRSS_TRACE_H

#include <linux/netdevice.h>
#include <linux/tracepoint.h>

TRACE_EVENT(vrss_load_sample,
	    TP_PROTO(const struct net_device *dev, unsigned int width, int cpu,
		     unsigned int busy, unsigned int net, unsigned int load),
	    TP_ARGS(dev, width, cpu, busy, net, load),
	    TP_STRUCT__entry(__array(char, name, IFNAMSIZ)
			     __field(unsigned int, width)
			     __field(int, cpu)
			     __field(unsigned int, busy)
			     __field(unsigned int, net)
			     __field(unsigned int, load)),
	    TP_fast_assign(strscpy(__entry->name, dev->name, IFNAMSIZ);
			   __entry->width = width;
			   __entry->cpu = cpu;
			   __entry->busy = busy;
			   __entry->net = net;
			   __entry->load = load;),
	    TP_printk("dev=%s width=%u primary_cpu=%d primary_busy=%u primary_softirq=%u primary_load=%u",
		      __entry->name, __entry->width, __entry->cpu, __entry->busy,
		      __entry->net, __entry->load)
);

TRACE_EVENT(vrss_width_change,
	    TP_PROTO(const struct net_device *dev, unsigned int old,
		     unsigned int new, unsigned int primary_load,
		     unsigned int mean_load),
	    TP_ARGS(dev, old, new, primary_load, mean_load),
	    TP_STRUCT__entry(__array(char, name, IFNAMSIZ)
			     __field(unsigned int, old)
			     __field(unsigned int, new)
			     __field(unsigned int, primary_load)
			     __field(unsigned int, mean_load)),
	    TP_fast_assign(strscpy(__entry->name, dev->name, IFNAMSIZ);
			   __entry->old = old;
			   __entry->new = new;
			   __entry->primary_load = primary_load;
			   __entry->mean_load = mean_load;),
	    TP_printk("dev=%s width=%u->%u primary_load=%u mean_load=%u",
		      __entry->name, __entry->old, __entry->new,
		      __entry->primary_load, __entry->mean_load)
);

TRACE_EVENT(vrss_rebalance,
	    TP_PROTO(const struct net_device *dev, unsigned int from,
		     unsigned int to, unsigned int buckets,
		     unsigned int from_load, unsigned int to_load,
		     unsigned int moved_load),
	    TP_ARGS(dev, from, to, buckets, from_load, to_load, moved_load),
	    TP_STRUCT__entry(__array(char, name, IFNAMSIZ)
			     __field(unsigned int, from)
			     __field(unsigned int, to)
			     __field(unsigned int, buckets)
			     __field(unsigned int, from_load)
			     __field(unsigned int, to_load)
			     __field(unsigned int, moved_load)),
	    TP_fast_assign(strscpy(__entry->name, dev->name, IFNAMSIZ);
			   __entry->from = from;
			   __entry->to = to;
			   __entry->buckets = buckets;
			   __entry->from_load = from_load;
			   __entry->to_load = to_load;
			   __entry->moved_load = moved_load;),
	    TP_printk("dev=%s queue=%u->%u buckets=%u load=%u->%u moved_load=%u",
		      __entry->name, __entry->from, __entry->to, __entry->buckets,
		      __entry->from_load, __entry->to_load, __entry->moved_load)
);

TRACE_EVENT(vrss_bucket_move,
	    TP_PROTO(const struct net_device *dev, unsigned int bucket,
		     unsigned int from, unsigned int to),
	    TP_ARGS(dev, bucket, from, to),
	    TP_STRUCT__entry(__array(char, name, IFNAMSIZ)
			     __field(unsigned int, bucket)
			     __field(unsigned int, from)
			     __field(unsigned int, to)),
	    TP_fast_assign(strscpy(__entry->name, dev->name, IFNAMSIZ);
			   __entry->bucket = bucket;
			   __entry->from = from;
			   __entry->to = to;),
	    TP_printk("dev=%s bucket=%u queue=%u->%u",
		      __entry->name, __entry->bucket, __entry->from, __entry->to)
);

#endif /* _VRSS_TRACE_H */

/* Out of tree: define_trace.h finds this file next to the sources. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
