/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the RSS hash of a received frame is computed over, read
 * from the frame's bytes.  Pure C: shared by the module, the host-side
 * unit tests and the fuzz target, it needs nothing but the fixed-width
 * types and reads nothing outside [pkt, pkt + len).
 *
 * Like a NIC's RSS parser, and unlike the kernel's flow dissector, it
 * hashes the outermost IP header only: VLAN tags still in the frame
 * (802.1Q, 802.1ad) are skipped, a tunnel is hashed by its outer
 * addresses, and the input is source address, destination address, then
 * source and destination port.  Ports are added only for TCP and UDP when
 * the flow type hashes them (ethtool rx-flow-hash sdfn), when the
 * datagram is not a fragment (the other fragments have no ports, and all
 * of a datagram must stay on one queue) and when they are in the frame.
 * IPv6 hop-by-hop, routing, destination options and fragment headers are
 * walked; any other extension header ends the walk at L3.
 */
#ifndef _VRSS_PARSE_H
#define _VRSS_PARSE_H

#include <linux/types.h>

#include <vrss/toeplitz.h>

/* Flow types whose ports can be hashed (ethtool -N rx-flow-hash). */
enum vrss_flow {
	VRSS_FLOW_TCP4,
	VRSS_FLOW_UDP4,
	VRSS_FLOW_TCP6,
	VRSS_FLOW_UDP6,
	VRSS_FLOW_MAX,
};

#define VRSS_FLOW_ALL_PORTS	((1u << VRSS_FLOW_MAX) - 1)

/*
 * Bytes of a frame the parser may look at, from the network header: an
 * IPv6 header and 4 bytes of ports leave 148 for tags and extension
 * headers, more than any sane sender puts before the ports.
 */
#define VRSS_PARSE_BYTES	192
#define VRSS_PARSE_MAX_VLANS	2
#define VRSS_PARSE_MAX_EXTHDRS	8

#define VRSS_ETH_P_IP		0x0800
#define VRSS_ETH_P_IPV6		0x86dd
#define VRSS_ETH_P_8021Q	0x8100
#define VRSS_ETH_P_8021AD	0x88a8

#define VRSS_IPPROTO_HOPOPTS	0
#define VRSS_IPPROTO_TCP	6
#define VRSS_IPPROTO_UDP	17
#define VRSS_IPPROTO_ROUTING	43
#define VRSS_IPPROTO_FRAGMENT	44
#define VRSS_IPPROTO_DSTOPTS	60

/* @n bytes at @off are within a frame of @len bytes. */
static inline bool vrss_parse_has(unsigned int len, unsigned int off,
				  unsigned int n)
{
	return off <= len && len - off >= n;
}

static inline unsigned int vrss_parse_be16(const u8 *p)
{
	return (unsigned int)p[0] << 8 | p[1];
}

/* Fixed sizes: the compiler copies them in a few moves, not a loop. */
static inline void vrss_parse_copy(u8 *dst, const u8 *src, unsigned int n)
{
	if (n == 4)
		__builtin_memcpy(dst, src, 4);
	else if (n == 8)
		__builtin_memcpy(dst, src, 8);
	else
		__builtin_memcpy(dst, src, 32);
}

/*
 * The Toeplitz input of a frame: @pkt holds its first @len bytes from the
 * network header on, @proto is its ethertype (host order, as in
 * skb->protocol), @ports the VRSS_FLOW_* bits whose ports are hashed.
 * Writes at most VRSS_TOEPLITZ_MAX_INPUT bytes to @in and returns how
 * many (8 or 12 for IPv4, 32 or 36 for IPv6), 0 when the frame is not IP
 * or its IP header is not whole: nothing to hash.  *@l4 says whether the
 * ports are in.
 */
static inline unsigned int vrss_parse_input(const u8 *pkt, unsigned int len,
					    unsigned int proto,
					    unsigned int ports, u8 *in,
					    bool *l4)
{
	unsigned int off = 0, l4off, addr, alen, next, i;
	bool frag = false;
	int flow = -1;

	*l4 = false;
	for (i = 0; proto == VRSS_ETH_P_8021Q || proto == VRSS_ETH_P_8021AD; i++) {
		/* An in-frame tag: TCI, then the encapsulated ethertype. */
		if (i == VRSS_PARSE_MAX_VLANS || !vrss_parse_has(len, off, 4))
			return 0;
		proto = vrss_parse_be16(pkt + off + 2);
		off += 4;
	}

	switch (proto) {
	case VRSS_ETH_P_IP:
		if (!vrss_parse_has(len, off, 20) || pkt[off] >> 4 != 4)
			return 0;
		l4off = off + (pkt[off] & 0x0f) * 4;
		if (l4off < off + 20 || l4off > len)
			return 0;
		/* More fragments, or a fragment offset: a fragment. */
		frag = vrss_parse_be16(pkt + off + 6) & 0x3fff;
		next = pkt[off + 9];
		addr = off + 12;
		alen = 8;
		if (next == VRSS_IPPROTO_TCP)
			flow = VRSS_FLOW_TCP4;
		else if (next == VRSS_IPPROTO_UDP)
			flow = VRSS_FLOW_UDP4;
		break;
	case VRSS_ETH_P_IPV6:
		if (!vrss_parse_has(len, off, 40) || pkt[off] >> 4 != 6)
			return 0;
		next = pkt[off + 6];
		addr = off + 8;
		alen = 32;
		l4off = off + 40;
		for (i = 0; i < VRSS_PARSE_MAX_EXTHDRS; i++) {
			if (next != VRSS_IPPROTO_HOPOPTS && next != VRSS_IPPROTO_ROUTING &&
			    next != VRSS_IPPROTO_DSTOPTS && next != VRSS_IPPROTO_FRAGMENT)
				break;
			if (!vrss_parse_has(len, l4off, 8)) {
				next = ~0u;	/* cut short: addresses only */
				break;
			}
			if (next == VRSS_IPPROTO_FRAGMENT) {
				frag = true;
				next = pkt[l4off];
				l4off += 8;
			} else {
				next = pkt[l4off];
				l4off += (pkt[l4off + 1] + 1) * 8;
			}
		}
		if (next == VRSS_IPPROTO_TCP)
			flow = VRSS_FLOW_TCP6;
		else if (next == VRSS_IPPROTO_UDP)
			flow = VRSS_FLOW_UDP6;
		break;
	default:
		return 0;
	}

	vrss_parse_copy(in, pkt + addr, alen);
	if (flow < 0 || frag || !(ports & (1u << flow)) ||
	    !vrss_parse_has(len, l4off, 4))
		return alen;
	vrss_parse_copy(in + alen, pkt + l4off, 4);
	*l4 = true;
	return alen + 4;
}

#endif /* _VRSS_PARSE_H */
