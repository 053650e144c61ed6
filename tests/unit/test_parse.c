// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of include/vrss/parse.h: which bytes of a frame the RSS
 * hash covers, for well-formed frames (checked end to end against
 * Microsoft's hash vectors) and for every way a header can be cut short or
 * malformed.  The fuzz target (tests/fuzz) covers the inputs no one thought
 * of; these pin down the answers.
 */
#include <stdarg.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include <vrss/parse.h>

#include "ms_key.h"

/* A frame under construction: bytes from the network header on. */
struct frame {
	u8 b[512];
	unsigned int len;
	unsigned int proto;
};

static void put(struct frame *f, const void *p, unsigned int n)
{
	assert_true(f->len + n <= sizeof(f->b));
	memcpy(f->b + f->len, p, n);
	f->len += n;
}

static void put16(struct frame *f, unsigned int v)
{
	u8 p[2] = { v >> 8, v & 0xff };

	put(f, p, 2);
}

static void vlan(struct frame *f, unsigned int tpid, unsigned int inner)
{
	if (!f->len && !f->proto)
		f->proto = tpid;
	put16(f, 10);		/* TCI */
	put16(f, inner);
}

/* IPv4 header with @optwords 32-bit option words, then the ports. */
static void ipv4(struct frame *f, u8 proto, const char *src, const char *dst,
		 unsigned int frag_off, unsigned int optwords)
{
	u8 h[60] = { 0 };
	struct in_addr a;

	if (!f->proto)
		f->proto = VRSS_ETH_P_IP;
	h[0] = 0x40 | (5 + optwords);
	h[6] = frag_off >> 8;
	h[7] = frag_off & 0xff;
	h[8] = 64;
	h[9] = proto;
	assert_int_equal(inet_pton(AF_INET, src, &a), 1);
	memcpy(h + 12, &a, 4);
	assert_int_equal(inet_pton(AF_INET, dst, &a), 1);
	memcpy(h + 16, &a, 4);
	put(f, h, 20 + optwords * 4);
}

static void ipv6(struct frame *f, u8 next, const char *src, const char *dst)
{
	u8 h[40] = { 0x60 };
	struct in6_addr a;

	if (!f->proto)
		f->proto = VRSS_ETH_P_IPV6;
	h[6] = next;
	h[7] = 64;
	assert_int_equal(inet_pton(AF_INET6, src, &a), 1);
	memcpy(h + 8, &a, 16);
	assert_int_equal(inet_pton(AF_INET6, dst, &a), 1);
	memcpy(h + 24, &a, 16);
	put(f, h, 40);
}

/* An extension header of @units 8-byte units (fragment: always 1). */
static void exthdr(struct frame *f, u8 next, unsigned int units)
{
	u8 h[64] = { next, units - 1 };

	put(f, h, units * 8);
}

static void ports(struct frame *f, unsigned int sport, unsigned int dport)
{
	put16(f, sport);
	put16(f, dport);
	put16(f, 0);
	put16(f, 0);
}

static unsigned int parse(const struct frame *f, unsigned int mask, u8 *in,
			  bool *l4)
{
	/* Exactly len bytes, so a read past the frame shows under ASan. */
	u8 *copy = malloc(f->len ? f->len : 1);
	unsigned int n;

	assert_non_null(copy);
	if (f->len)
		memcpy(copy, f->b, f->len);
	n = vrss_parse_input(copy, f->len, f->proto, mask, in, l4);
	free(copy);
	return n;
}

static u32 hash_of(const struct frame *f, unsigned int mask, bool *l4)
{
	static struct vrss_toeplitz t;
	u8 in[VRSS_TOEPLITZ_MAX_INPUT];
	unsigned int n;

	vrss_toeplitz_init(&t, ms_key);
	n = parse(f, mask, in, l4);
	assert_int_not_equal(n, 0);
	return vrss_toeplitz_hash(&t, in, n);
}

/* Microsoft's vectors, from whole frames, with and without ports. */
static void test_ms_vectors_from_frames(void **state)
{
	struct frame f = { 0 };
	bool l4;

	(void)state;
	ipv4(&f, VRSS_IPPROTO_TCP, "66.9.149.187", "161.142.100.80", 0, 0);
	ports(&f, 2794, 1766);
	assert_int_equal(hash_of(&f, VRSS_FLOW_ALL_PORTS, &l4), 0x51ccc178);
	assert_true(l4);
	assert_int_equal(hash_of(&f, 0, &l4), 0x323e8fc2);
	assert_false(l4);

	memset(&f, 0, sizeof(f));
	ipv6(&f, VRSS_IPPROTO_UDP, "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1");
	ports(&f, 2794, 1766);
	assert_int_equal(hash_of(&f, VRSS_FLOW_ALL_PORTS, &l4), 0x40207d3d);
	assert_true(l4);
	assert_int_equal(hash_of(&f, 1u << VRSS_FLOW_TCP6, &l4), 0x2cc18cd5);
	assert_false(l4);
}

/* The per-flow-type port selection (ethtool rx-flow-hash sd|sdfn). */
static void test_flow_type_mask(void **state)
{
	static const struct { int v6; u8 proto; int flow; } c[] = {
		{ 0, VRSS_IPPROTO_TCP, VRSS_FLOW_TCP4 },
		{ 0, VRSS_IPPROTO_UDP, VRSS_FLOW_UDP4 },
		{ 1, VRSS_IPPROTO_TCP, VRSS_FLOW_TCP6 },
		{ 1, VRSS_IPPROTO_UDP, VRSS_FLOW_UDP6 },
	};
	u8 in[VRSS_TOEPLITZ_MAX_INPUT];
	unsigned int i, alen;
	bool l4;

	(void)state;
	for (i = 0; i < 4; i++) {
		struct frame f = { 0 };

		if (c[i].v6)
			ipv6(&f, c[i].proto, "2001:db8::1", "2001:db8::2");
		else
			ipv4(&f, c[i].proto, "192.0.2.1", "192.0.2.2", 0, 0);
		ports(&f, 1000, 2000);
		alen = c[i].v6 ? 32 : 8;
		assert_int_equal(parse(&f, 1u << c[i].flow, in, &l4), alen + 4);
		assert_true(l4);
		assert_int_equal(in[alen] << 8 | in[alen + 1], 1000);
		assert_int_equal(in[alen + 2] << 8 | in[alen + 3], 2000);
		assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS & ~(1u << c[i].flow), in, &l4),
				 alen);
		assert_false(l4);
	}
}

/* Protocols without hashed ports: addresses only. */
static void test_other_protocols_l3(void **state)
{
	static const u8 protos[] = { 1, 4, 41, 47, 50, 51, 58, 132, 136, 255 };
	u8 in[VRSS_TOEPLITZ_MAX_INPUT];
	unsigned int i;
	bool l4;

	(void)state;
	for (i = 0; i < sizeof(protos); i++) {
		struct frame f4 = { 0 }, f6 = { 0 };

		ipv4(&f4, protos[i], "192.0.2.1", "192.0.2.2", 0, 0);
		ports(&f4, 1, 2);
		assert_int_equal(parse(&f4, VRSS_FLOW_ALL_PORTS, in, &l4), 8);
		assert_false(l4);
		ipv6(&f6, protos[i], "2001:db8::1", "2001:db8::2");
		ports(&f6, 1, 2);
		assert_int_equal(parse(&f6, VRSS_FLOW_ALL_PORTS, in, &l4), 32);
		assert_false(l4);
	}
}

/* IPv4 options are skipped: the ports come from after them. */
static void test_ipv4_options(void **state)
{
	u8 in[VRSS_TOEPLITZ_MAX_INPUT];
	unsigned int w;
	bool l4;

	(void)state;
	for (w = 0; w <= 10; w++) {
		struct frame f = { 0 };

		ipv4(&f, VRSS_IPPROTO_UDP, "192.0.2.1", "192.0.2.2", 0, w);
		ports(&f, 4242, 53);
		assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 12);
		assert_true(l4);
		assert_int_equal(in[8] << 8 | in[9], 4242);
		assert_int_equal(in[10] << 8 | in[11], 53);
	}
}

/* Every fragment, the first one too, is hashed on its addresses. */
static void test_fragments(void **state)
{
	static const unsigned int frag_off[] = { 0x2000, 0x0001, 0x2010, 0x1fff };
	u8 in[VRSS_TOEPLITZ_MAX_INPUT];
	struct frame f;
	unsigned int i;
	bool l4;

	(void)state;
	for (i = 0; i < 4; i++) {
		memset(&f, 0, sizeof(f));
		ipv4(&f, VRSS_IPPROTO_UDP, "192.0.2.1", "192.0.2.2", frag_off[i], 0);
		ports(&f, 1, 2);
		assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 8);
		assert_false(l4);
	}
	/* DF alone is not a fragment. */
	memset(&f, 0, sizeof(f));
	ipv4(&f, VRSS_IPPROTO_UDP, "192.0.2.1", "192.0.2.2", 0x4000, 0);
	ports(&f, 1, 2);
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 12);

	/* IPv6: a fragment header anywhere in the chain. */
	memset(&f, 0, sizeof(f));
	ipv6(&f, VRSS_IPPROTO_HOPOPTS, "2001:db8::1", "2001:db8::2");
	exthdr(&f, VRSS_IPPROTO_FRAGMENT, 1);
	exthdr(&f, VRSS_IPPROTO_UDP, 1);
	ports(&f, 1, 2);
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 32);
	assert_false(l4);
}

/* Hop-by-hop, routing and destination options are walked to the ports. */
static void test_ipv6_extension_chain(void **state)
{
	u8 in[VRSS_TOEPLITZ_MAX_INPUT];
	struct frame f = { 0 };
	unsigned int i;
	bool l4;

	(void)state;
	ipv6(&f, VRSS_IPPROTO_HOPOPTS, "2001:db8::1", "2001:db8::2");
	exthdr(&f, VRSS_IPPROTO_ROUTING, 3);
	exthdr(&f, VRSS_IPPROTO_DSTOPTS, 2);
	exthdr(&f, VRSS_IPPROTO_TCP, 1);
	ports(&f, 80, 8080);
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 36);
	assert_true(l4);
	assert_int_equal(in[32] << 8 | in[33], 80);

	/* Longer than VRSS_PARSE_MAX_EXTHDRS: the walk stops, addresses only. */
	memset(&f, 0, sizeof(f));
	ipv6(&f, VRSS_IPPROTO_DSTOPTS, "2001:db8::1", "2001:db8::2");
	for (i = 1; i < VRSS_PARSE_MAX_EXTHDRS; i++)
		exthdr(&f, VRSS_IPPROTO_DSTOPTS, 1);
	exthdr(&f, VRSS_IPPROTO_UDP, 1);
	ports(&f, 1, 2);
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 36);
	memset(&f, 0, sizeof(f));
	ipv6(&f, VRSS_IPPROTO_DSTOPTS, "2001:db8::1", "2001:db8::2");
	for (i = 0; i < VRSS_PARSE_MAX_EXTHDRS; i++)
		exthdr(&f, VRSS_IPPROTO_DSTOPTS, 1);
	exthdr(&f, VRSS_IPPROTO_UDP, 1);
	ports(&f, 1, 2);
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 32);
	assert_false(l4);
}

/* One and two in-frame tags are skipped, a third is too many. */
static void test_vlan_tags(void **state)
{
	u8 in[VRSS_TOEPLITZ_MAX_INPUT];
	struct frame f = { 0 };
	bool l4;

	(void)state;
	vlan(&f, VRSS_ETH_P_8021Q, VRSS_ETH_P_IP);
	ipv4(&f, VRSS_IPPROTO_UDP, "192.0.2.1", "192.0.2.2", 0, 0);
	ports(&f, 1, 2);
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 12);

	memset(&f, 0, sizeof(f));
	vlan(&f, VRSS_ETH_P_8021AD, VRSS_ETH_P_8021Q);
	vlan(&f, 0, VRSS_ETH_P_IPV6);
	ipv6(&f, VRSS_IPPROTO_TCP, "2001:db8::1", "2001:db8::2");
	ports(&f, 1, 2);
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 36);

	memset(&f, 0, sizeof(f));
	vlan(&f, VRSS_ETH_P_8021AD, VRSS_ETH_P_8021Q);
	vlan(&f, 0, VRSS_ETH_P_8021Q);
	vlan(&f, 0, VRSS_ETH_P_IP);
	ipv4(&f, VRSS_IPPROTO_UDP, "192.0.2.1", "192.0.2.2", 0, 0);
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 0);
}

/*
 * A well-formed frame cut at every length: nothing to hash until the IP
 * header is whole, then the addresses, then the ports once all 4 bytes
 * are there, and from then on the input of the whole frame (the module
 * keeps what it parsed from the linear part when the ports are there).
 * Under ASan, parse() also shows it never reads past the cut.
 */
static void test_every_truncation(void **state)
{
	u8 in[VRSS_TOEPLITZ_MAX_INPUT], whole[VRSS_TOEPLITZ_MAX_INPUT];
	struct frame f = { 0 }, cut;
	unsigned int n, l3end, want;
	bool l4;

	(void)state;
	vlan(&f, VRSS_ETH_P_8021Q, VRSS_ETH_P_IPV6);
	ipv6(&f, VRSS_IPPROTO_HOPOPTS, "2001:db8::1", "2001:db8::2");
	l3end = f.len;
	exthdr(&f, VRSS_IPPROTO_UDP, 2);
	ports(&f, 7, 9);
	memset(f.b + f.len, 0xa5, 16);	/* payload */
	f.len += 16;
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, whole, &l4), 36);
	for (n = 0; n <= f.len; n++) {
		cut = f;
		cut.len = n;
		want = n < l3end ? 0 : n < l3end + 16 + 4 ? 32 : 36;
		assert_int_equal(parse(&cut, VRSS_FLOW_ALL_PORTS, in, &l4), want);
		assert_int_equal(l4, want == 36);
		if (l4)
			assert_memory_equal(in, whole, 36);
	}

	memset(&f, 0, sizeof(f));
	ipv4(&f, VRSS_IPPROTO_TCP, "192.0.2.1", "192.0.2.2", 0, 2);
	ports(&f, 7, 9);
	for (n = 0; n <= f.len; n++) {
		cut = f;
		cut.len = n;
		want = n < 28 ? 0 : n < 32 ? 8 : 12;
		assert_int_equal(parse(&cut, VRSS_FLOW_ALL_PORTS, in, &l4), want);
	}
}

/* Headers that lie: nothing to hash, or the addresses, never a bad read. */
static void test_malformed_headers(void **state)
{
	u8 in[VRSS_TOEPLITZ_MAX_INPUT];
	struct frame f;
	unsigned int ihl;
	bool l4;

	(void)state;
	/* IPv4 IHL below 5, or longer than the 28-byte frame. */
	for (ihl = 0; ihl < 16; ihl++) {
		memset(&f, 0, sizeof(f));
		ipv4(&f, VRSS_IPPROTO_UDP, "192.0.2.1", "192.0.2.2", 0, 0);
		ports(&f, 1, 2);
		f.b[0] = 0x40 | ihl;
		assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4),
				 ihl < 5 ? 0 : ihl <= 6 ? 12 : ihl == 7 ? 8 : 0);
	}
	/* Version nibble that does not match the ethertype. */
	memset(&f, 0, sizeof(f));
	ipv4(&f, VRSS_IPPROTO_UDP, "192.0.2.1", "192.0.2.2", 0, 0);
	f.proto = VRSS_ETH_P_IPV6;
	ipv6(&f, 0, "::", "::");
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 0);
	memset(&f, 0, sizeof(f));
	ipv6(&f, VRSS_IPPROTO_UDP, "2001:db8::1", "2001:db8::2");
	f.proto = VRSS_ETH_P_IP;
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 0);

	/* An extension header whose length runs past the frame. */
	memset(&f, 0, sizeof(f));
	ipv6(&f, VRSS_IPPROTO_ROUTING, "2001:db8::1", "2001:db8::2");
	exthdr(&f, VRSS_IPPROTO_UDP, 1);
	f.b[41] = 255;
	ports(&f, 1, 2);
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 32);
	assert_false(l4);

	/* Non-IP ethertypes, and an empty frame. */
	memset(&f, 0, sizeof(f));
	f.proto = 0x0806;
	ipv4(&f, VRSS_IPPROTO_UDP, "192.0.2.1", "192.0.2.2", 0, 0);
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 0);
	memset(&f, 0, sizeof(f));
	f.proto = VRSS_ETH_P_IP;
	assert_int_equal(parse(&f, VRSS_FLOW_ALL_PORTS, in, &l4), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ms_vectors_from_frames),
		cmocka_unit_test(test_flow_type_mask),
		cmocka_unit_test(test_other_protocols_l3),
		cmocka_unit_test(test_ipv4_options),
		cmocka_unit_test(test_fragments),
		cmocka_unit_test(test_ipv6_extension_chain),
		cmocka_unit_test(test_vlan_tags),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_malformed_headers),
	};

	return cmocka_run_group_tests_name("parse", tests, NULL, NULL);
}
