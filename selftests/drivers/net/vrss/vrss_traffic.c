// SPDX-License-Identifier: GPL-2.0
/*
 * Traffic for the vrss selftests, in C: a TCG guest starts Python in about
 * two seconds, this in a few milliseconds, and the tests start a sender
 * for almost every case.  vrss_udp.py keeps what needs no speed (the
 * independent Toeplitz, packet-socket checks, malformed frames).
 *
 *   vrss_traffic send DST FLOWS PER_FLOW [SIZE [SPORT]]
 *	PER_FLOW datagrams of SIZE bytes (default 4) on each of FLOWS flows,
 *	round robin: source port SPORT+f (default 20000), destination port
 *	7000+f, unconnected sockets (port-unreachable replies do not stop
 *	the sender).  Over the MTU: IP fragments.
 *   vrss_traffic flood DST FLOWS SIZE SPORT STOPFILE
 *	The same until STOPFILE exists; a send that fails (the link under it
 *	going down) is skipped.
 *   vrss_traffic pace DST FLOWS PER_FLOW GAP [SPORT]
 *	Light traffic: one 4-byte datagram at a time, GAP seconds apart.
 *   vrss_traffic seqsend DST FLOWS COUNT [BURST [GAP [STOPFILE]]]
 *	COUNT datagrams round robin over FLOWS flows (source port 20000+f,
 *	all to port 7000), each carrying its flow and its sequence number in
 *	that flow (two big-endian u32).  BURST datagrams of a flow per
 *	system call (UDP GSO); GAP seconds of pause after each round.
 *	FLOWS may also be a list of source ports, P1,P2,... (or one port
 *	P): flow P-20000 each, so that several senders can feed one
 *	seqrecv.  With STOPFILE:
 *	also stops once it exists, and prints "sent N".
 *   vrss_traffic seqrecv ADDR FLOWS COUNT [MODE]
 *	Receives that on ADDR port 7000 until COUNT arrived or the senders
 *	are quiet for 2 s (60 s before the first); prints "ready" once bound,
 *	then "received R reordered O foreign F": O the datagrams that came
 *	after a later one of their flow, F those too short to be seqsend's;
 *	and "first_us T" and "last_us T", when the first and the last
 *	counted datagram were read (the realtime clock, microseconds; 0 if
 *	none).
 *	MODE gro: the socket asks for UDP GRO (the stack then holds its
 *	datagrams in GRO, merged, until a flush; a line "merged M" says how
 *	many reads got more than one datagram); busy=PEER: UDP GRO too, on
 *	a socket per flow connected to PEER port 20000+f, each of which
 *	busy-polls the NAPI context its datagrams last came from
 *	(SO_BUSY_POLL, 100 us).
 *   vrss_traffic echo ADDR
 *	Sends every datagram to ADDR port 7000 back to its sender, until
 *	killed; prints "ready" once bound.
 *   vrss_traffic rr DST FLOWS COUNT
 *	COUNT transactions with echo at DST, round robin over FLOWS flows
 *	(source port 20000+f): a 4-byte request, then its answer awaited
 *	for up to a second.  Prints "transactions N lost L slow S max_ms M":
 *	L unanswered, S answered after over 200 ms, M the slowest answer.
 *   vrss_traffic tcpecho ADDR
 *	Accepts TCP connections on ADDR port 7000 and sends every byte back
 *	(a child process each), until killed; prints "ready" once listening.
 *   vrss_traffic tcprr DST SECONDS
 *	An SSH session's stand-in: one TCP connection to tcpecho at DST,
 *	a 4-byte request every 10 ms for SECONDS or until SIGTERM, each
 *	answer awaited for up to 10 s.  Prints "transactions N lost L slow
 *	S max_ms M": L
 *	unanswered (the connection broke or stalled: the run ends there), S
 *	answered after over 200 ms; fails if the connection could not be
 *	made.
 *   vrss_traffic syn DST FLOWS PER_FLOW
 *	TCP connection attempts to a port nobody listens on: PER_FLOW on
 *	each of FLOWS flows, round robin, source port 20000+f to port
 *	7000+f, each a SYN answered by a reset (awaited for up to 0.9 s,
 *	before TCP would send the SYN again).  Prints "refused R of N"; fails
 *	unless every attempt was refused.
 *   vrss_traffic duty PERCENT SECONDS
 *	A CPU hog that spins PERCENT of every period (5 to 15 ms, at random)
 *	and sleeps the rest, for SECONDS: a known partial load.
 *   vrss_traffic raw IFACE DSTMAC ETHERTYPE LEN COUNT
 *	COUNT Ethernet frames to DSTMAC of type ETHERTYPE (hex) with LEN zero
 *	bytes of payload, through a packet socket on IFACE.
 *   vrss_traffic frame IFACE FILE COUNT
 *	COUNT copies of the Ethernet frame in FILE (vrss_udp.py malformed
 *	writes them), through a packet socket on IFACE; sends the device
 *	refuses (ENOBUFS: over its peer's MTU) are the caller's to count.
 *   vrss_traffic flip DEV QUEUES STOPFILE [KEY OTHERKEY]
 *	Until STOPFILE exists: DEV's threshold alternately 0 and 100 every
 *	millisecond, and every 50 flips `ethtool -L DEV rx QUEUES-1` for 6
 *	flips and rxhash off for 6 flips; then threshold 80, QUEUES queues,
 *	rxhash on.  Prints "ready" after the first flip, and at the end
 *	"flips N channels N rxhash N".  With KEY and OTHERKEY (ethtool -X
 *	hkey's form), every 50 flips also OTHERKEY for 6 flips, then KEY,
 *	and udp4 hashed on addresses only for 6 flips; then a line "rehash
 *	N", the key and field changes.  QUEUES 0: the queue count is left
 *	alone (a queue ethtool -L takes away loses its RPS settings).
 *   vrss_traffic rekey DEV STOPFILE KEY OTHERKEY
 *	Until STOPFILE exists, every 2 ms the next of: OTHERKEY, udp4
 *	hashed on addresses only, KEY, udp4 on ports too.  Prints "ready"
 *	after the first, and at the end "rehash N".
 *
 * Before any command, for a measurement whose window must hold no process
 * start or exit (cost.sh, under the instruction meter):
 *   vrss_traffic [--delay S] [--hold S] CMD ARGS...
 *	--delay: prints "waiting" once started, then waits S seconds before
 *	the command; --hold: once the command is done (its output flushed),
 *	stays S seconds before exiting, or until killed.
 *
 * Exit status 0, or 1 with a message on stderr.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <sys/uio.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif
#ifndef UDP_GRO
#define UDP_GRO		104
#endif
#ifndef SO_BUSY_POLL
#define SO_BUSY_POLL	46
#endif

#define SPORT		20000
#define DPORT		7000
#define MAX_FLOWS	1024
#define MAX_SIZE	65507
#define MAX_BURST	64

extern char **environ;

static void die(const char *what)
{
	fprintf(stderr, "vrss_traffic: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fputs("usage: vrss_traffic send|flood|pace|seqsend|seqrecv|echo|rr|tcpecho|tcprr|syn|duty|flip|rekey|raw|frame ARGS (see the source)\n",
	      stderr);
	exit(1);
}

static long num(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "vrss_traffic: bad number '%s' (%ld..%ld)\n", s, min, max);
		exit(1);
	}
	return v;
}

static double seconds(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < 0 || v > 3600) {
		fprintf(stderr, "vrss_traffic: bad number of seconds '%s'\n", s);
		exit(1);
	}
	return v;
}

static void pause_for(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* @addr and @port as a socket address; its length. */
static socklen_t sockaddr(const char *addr, int port, struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		return sizeof(*s4);
	}
	if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		return sizeof(*s6);
	}
	fprintf(stderr, "vrss_traffic: bad address '%s'\n", addr);
	exit(1);
}

/* A UDP socket of @dst's family bound to the wildcard address, @sport. */
static int udp_socket(const char *dst, int sport)
{
	struct sockaddr_storage ss;
	int fd;

	sockaddr(dst, 0, &ss);
	fd = socket(ss.ss_family, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket");
	if (ss.ss_family == AF_INET6) {
		struct sockaddr_in6 any = { .sin6_family = AF_INET6, .sin6_port = htons(sport) };

		if (bind(fd, (struct sockaddr *)&any, sizeof(any)))
			die("bind");
	} else {
		struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons(sport) };

		if (bind(fd, (struct sockaddr *)&any, sizeof(any)))
			die("bind");
	}
	return fd;
}

struct flows {
	int n;
	int fd[MAX_FLOWS];
	struct sockaddr_storage to[MAX_FLOWS];
	socklen_t len[MAX_FLOWS];
};

static void flows_open(struct flows *fl, const char *dst, int n, int sport)
{
	int f;

	fl->n = n;
	for (f = 0; f < n; f++) {
		fl->fd[f] = udp_socket(dst, sport + f);
		fl->len[f] = sockaddr(dst, DPORT + f, &fl->to[f]);
	}
}

/*
 * One round over the flows; @tolerant skips failed sends (flood).  The
 * sockets are unconnected: a port-unreachable reply is no send error.
 */
static void flows_round(struct flows *fl, const char *buf, size_t size, bool tolerant)
{
	int f;

	for (f = 0; f < fl->n; f++)
		if (sendto(fl->fd[f], buf, size, 0, (struct sockaddr *)&fl->to[f],
			   fl->len[f]) < 0 && !tolerant)
			die("sendto");
}

static char payload[MAX_SIZE];

static int cmd_send(int argc, char **argv)
{
	static struct flows fl;
	long per_flow, size = 4, i;

	if (argc < 3 || argc > 5)
		usage();
	per_flow = num(argv[2], 0, 100000000);
	if (argc > 3)
		size = num(argv[3], 0, MAX_SIZE);
	flows_open(&fl, argv[0], num(argv[1], 1, MAX_FLOWS),
		   argc > 4 ? num(argv[4], 1, 65535) : SPORT);
	memset(payload, 'v', size);
	for (i = 0; i < per_flow; i++)
		flows_round(&fl, payload, size, false);
	return 0;
}

static int cmd_flood(int argc, char **argv)
{
	static struct flows fl;
	long size;
	int i;

	if (argc != 5)
		usage();
	size = num(argv[2], 0, MAX_SIZE);
	flows_open(&fl, argv[0], num(argv[1], 1, MAX_FLOWS), num(argv[3], 1, 65535));
	memset(payload, 'v', size);
	while (access(argv[4], F_OK)) {
		for (i = 0; i < 64; i++)
			flows_round(&fl, payload, size, true);
	}
	return 0;
}

static int cmd_pace(int argc, char **argv)
{
	static struct flows fl;
	long per_flow, i;
	double gap;
	int f;

	if (argc < 4 || argc > 5)
		usage();
	per_flow = num(argv[2], 0, 100000000);
	gap = seconds(argv[3]);
	flows_open(&fl, argv[0], num(argv[1], 1, MAX_FLOWS),
		   argc > 4 ? num(argv[4], 1, 65535) : SPORT);
	for (i = 0; i < per_flow; i++) {
		for (f = 0; f < fl.n; f++) {
			if (sendto(fl.fd[f], "vvvv", 4, 0, (struct sockaddr *)&fl.to[f],
				   fl.len[f]) < 0)
				die("sendto");
			pause_for(gap);
		}
	}
	return 0;
}

struct seq {
	uint32_t flow;
	uint32_t seq;
};

static int cmd_seqsend(int argc, char **argv)
{
	static struct seq burst[MAX_BURST];
	static int fd[MAX_FLOWS], id[MAX_FLOWS];
	static uint32_t next[MAX_FLOWS];
	struct sockaddr_storage to;
	long count, sent = 0, b = 1, n, k, rounds = 0;
	const char *stop = NULL;
	double gap = 0;
	socklen_t len;
	int flows, f;

	if (argc < 3 || argc > 6)
		usage();
	/* A list of ports, or one port (a number past any flow count). */
	if (strchr(argv[1], ',') || strtol(argv[1], NULL, 10) >= SPORT) {
		char *list = argv[1], *p;

		for (flows = 0; (p = strsep(&list, ",")); flows++) {
			if (flows == MAX_FLOWS)
				usage();
			id[flows] = num(p, SPORT, SPORT + MAX_FLOWS - 1) - SPORT;
		}
	} else {
		flows = num(argv[1], 1, MAX_FLOWS);
		for (f = 0; f < flows; f++)
			id[f] = f;
	}
	count = num(argv[2], 0, 1000000000);
	if (argc > 3)
		b = num(argv[3], 1, MAX_BURST);
	if (argc > 4)
		gap = seconds(argv[4]);
	if (argc > 5)
		stop = argv[5];
	len = sockaddr(argv[0], DPORT, &to);
	for (f = 0; f < flows; f++) {
		int seg = sizeof(struct seq);

		fd[f] = udp_socket(argv[0], SPORT + id[f]);
		if (connect(fd[f], (struct sockaddr *)&to, len))
			die("connect");
		if (b > 1 && setsockopt(fd[f], SOL_UDP, UDP_SEGMENT, &seg, sizeof(seg)))
			die("UDP_SEGMENT");
	}
	while (sent < count) {
		f = (sent / b) % flows;
		n = count - sent < b ? count - sent : b;
		for (k = 0; k < n; k++) {
			burst[k].flow = htonl(id[f]);
			burst[k].seq = htonl(next[f] + k);
		}
		if (send(fd[f], burst, n * sizeof(burst[0]), 0) < 0) {
			/* The port-unreachable of a receiver not yet bound. */
			if (errno == ECONNREFUSED)
				continue;
			die("send");
		}
		next[f] += n;
		sent += n;
		if (gap > 0 && f == flows - 1)
			pause_for(gap);
		if (stop && f == flows - 1 && ++rounds % 16 == 0 && !access(stop, F_OK))
			break;
	}
	if (stop)
		printf("sent %ld\n", sent);
	return 0;
}

/*
 * Receives one datagram, or with UDP GRO one merged run of them, into
 * @buf; the size of each in @seg (the whole length without GRO).
 */
static ssize_t recv_run(int fd, char *buf, size_t size, size_t *seg)
{
	char control[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control, .msg_controllen = sizeof(control),
	};
	struct cmsghdr *c;
	ssize_t n;

	n = recvmsg(fd, &msg, MSG_DONTWAIT);
	if (n <= 0)
		return n;
	*seg = n;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int gso;

			memcpy(&gso, CMSG_DATA(c), sizeof(gso));
			if (gso > 0)
				*seg = gso;
		}
	return n;
}

/*
 * seqrecv's socket on @ss, in mode @mode; connected to @peer port @sport
 * if @peer (a socket per flow, which the stack tells the NAPI context of
 * every datagram it receives, not only of the first).
 */
static int seq_socket(const struct sockaddr_storage *ss, socklen_t len,
		      const char *mode, const char *peer, int sport)
{
	int rcvbuf = 64 << 20, on = 1, usecs = 100;
	struct sockaddr_storage to;
	int fd;

	fd = socket(ss->ss_family, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket");
	/* Up to net.core.rmem_max: the tests raise it. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)))
		die("SO_RCVBUF");
	if (strcmp(mode, "plain") && setsockopt(fd, SOL_UDP, UDP_GRO, &on, sizeof(on)))
		die("UDP_GRO");
	if (peer) {
		if (setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &usecs, sizeof(usecs)))
			die("SO_BUSY_POLL");
		if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)))
			die("SO_REUSEADDR");
	}
	if (bind(fd, (const struct sockaddr *)ss, len))
		die("bind");
	if (peer && connect(fd, (struct sockaddr *)&to, sockaddr(peer, sport, &to)))
		die("connect");
	return fd;
}

static int cmd_seqrecv(int argc, char **argv)
{
	static struct pollfd p[MAX_FLOWS];
	static int64_t last[MAX_FLOWS];
	static char buf[1 << 16];
	long count, received = 0, reordered = 0, foreign = 0, merged = 0;
	struct timespec first_ts = { 0, 0 }, last_ts = { 0, 0 };
	const char *mode = "plain", *peer = NULL;
	struct sockaddr_storage ss;
	int timeout = 60000;
	int nfd = 1, flows, f, i;
	struct seq s;
	socklen_t len;
	size_t seg, off;
	ssize_t n;

	if (argc != 3 && argc != 4)
		usage();
	flows = num(argv[1], 1, MAX_FLOWS);
	count = num(argv[2], 0, 1000000000);
	len = sockaddr(argv[0], DPORT, &ss);
	if (argc == 4) {
		mode = argv[3];
		if (!strncmp(mode, "busy=", 5)) {
			peer = mode + 5;
			nfd = flows;
		} else if (strcmp(mode, "gro") && strcmp(mode, "plain")) {
			usage();
		}
	}
	for (i = 0; i < nfd; i++) {
		p[i].fd = seq_socket(&ss, len, mode, peer, SPORT + i);
		p[i].events = POLLIN;
	}
	for (f = 0; f < flows; f++)
		last[f] = -1;
	printf("ready\n");
	fflush(stdout);
	while (received < count) {
		if (poll(p, nfd, timeout) <= 0)
			break;
		for (i = 0; i < nfd; i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			n = recv_run(p[i].fd, buf, sizeof(buf), &seg);
			if (n < 0) {
				if (errno == EAGAIN || errno == EINTR)
					continue;
				die("recv");
			}
			merged += (size_t)n > seg;
			for (off = 0; off < (size_t)n; off += seg) {
				size_t k = (size_t)n - off < seg ? (size_t)n - off : seg;

				memcpy(&s, buf + off, k < sizeof(s) ? k : sizeof(s));
				f = ntohl(s.flow);
				if (k != sizeof(s) || f >= flows) {
					/* Not ours (another sender to the port): the caller sees it. */
					foreign++;
					continue;
				}
				timeout = 2000;
				received++;
				clock_gettime(CLOCK_REALTIME, &last_ts);
				if (received == 1)
					first_ts = last_ts;
				if ((int64_t)ntohl(s.seq) < last[f])
					reordered++;
				else
					last[f] = ntohl(s.seq);
			}
		}
	}
	printf("received %ld reordered %ld foreign %ld\nmerged %ld\n", received, reordered,
	       foreign, merged);
	printf("first_us %lld\nlast_us %lld\n",
	       (long long)first_ts.tv_sec * 1000000 + first_ts.tv_nsec / 1000,
	       (long long)last_ts.tv_sec * 1000000 + last_ts.tv_nsec / 1000);
	return 0;
}

static int cmd_echo(int argc, char **argv)
{
	struct sockaddr_storage ss, from;
	char buf[2048];
	socklen_t len;
	ssize_t n;
	int fd;

	if (argc != 1)
		usage();
	len = sockaddr(argv[0], DPORT, &ss);
	fd = socket(ss.ss_family, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket");
	if (bind(fd, (struct sockaddr *)&ss, len))
		die("bind");
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		len = sizeof(from);
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("recvfrom");
		}
		/* A full socket buffer at the client: its loss, counted there. */
		sendto(fd, buf, n, 0, (struct sockaddr *)&from, len);
	}
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmd_rr(int argc, char **argv)
{
	static int fd[MAX_FLOWS];
	long count, i, lost = 0, slow = 0;
	struct sockaddr_storage to;
	double max = 0, t0, ms;
	uint32_t req, ans;
	int flows, f, left;
	socklen_t len;

	if (argc != 3)
		usage();
	flows = num(argv[1], 1, MAX_FLOWS);
	count = num(argv[2], 1, 1000000000);
	len = sockaddr(argv[0], DPORT, &to);
	for (f = 0; f < flows; f++) {
		fd[f] = udp_socket(argv[0], SPORT + f);
		if (connect(fd[f], (struct sockaddr *)&to, len))
			die("connect");
	}
	for (i = 0; i < count; i++) {
		f = i % flows;
		req = htonl(i);
		t0 = now_ms();
		if (send(fd[f], &req, sizeof(req), 0) < 0)
			die("send");
		/* Until its own answer (a late one of an earlier request is skipped). */
		for (;;) {
			struct pollfd p = { .fd = fd[f], .events = POLLIN };

			left = 1000 - (int)(now_ms() - t0);
			if (left <= 0 || poll(&p, 1, left) <= 0) {
				lost++;
				break;
			}
			if (recv(fd[f], &ans, sizeof(ans), MSG_DONTWAIT) != sizeof(ans) ||
			    ans != req)
				continue;
			ms = now_ms() - t0;
			if (ms > max)
				max = ms;
			slow += ms > 200;
			break;
		}
	}
	printf("transactions %ld lost %ld slow %ld max_ms %.1f\n", count, lost, slow, max);
	return 0;
}

static int cmd_tcpecho(int argc, char **argv)
{
	struct sockaddr_storage ss;
	char buf[4096];
	int fd, c, one = 1;
	socklen_t len;
	ssize_t n;

	if (argc != 1)
		usage();
	len = sockaddr(argv[0], DPORT, &ss);
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 4))
		die("bind");
	/* Killing the server (its process group) ends its children too. */
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		c = accept(fd, NULL, NULL);
		if (c < 0) {
			if (errno == EINTR)
				continue;
			die("accept");
		}
		if (fork() == 0) {
			close(fd);
			setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			while ((n = read(c, buf, sizeof(buf))) > 0)
				if (write(c, buf, n) != n)
					break;
			_exit(0);
		}
		close(c);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	return 0;
}

static volatile sig_atomic_t tcprr_stop;

static void tcprr_term(int sig)
{
	(void)sig;
	tcprr_stop = 1;
}

static int cmd_tcprr(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = tcprr_term };
	long count = 0, lost = 0, slow = 0;
	struct sockaddr_storage to;
	double max = 0, t0, end, ms;
	uint32_t req, ans;
	int fd, one = 1;
	socklen_t len;

	if (argc != 2)
		usage();
	len = sockaddr(argv[0], DPORT, &to);
	end = now_ms() + 1000 * seconds(argv[1]);
	fd = socket(to.ss_family, SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	if (connect(fd, (struct sockaddr *)&to, len))
		die("connect");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	sigaction(SIGTERM, &sa, NULL);
	while (!tcprr_stop && now_ms() < end) {
		size_t got = 0;

		req = htonl(count++);
		t0 = now_ms();
		if (send(fd, &req, sizeof(req), MSG_NOSIGNAL) != sizeof(req)) {
			lost++;
			break;
		}
		while (got < sizeof(ans)) {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			int left = 10000 - (int)(now_ms() - t0), r;
			ssize_t n;

			if (left <= 0)
				break;
			/* A SIGTERM ends the run, not the transaction. */
			r = poll(&p, 1, left);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			n = recv(fd, (char *)&ans + got, sizeof(ans) - got, 0);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += n;
		}
		if (got < sizeof(ans) || ans != req) {
			lost++;
			break;
		}
		ms = now_ms() - t0;
		if (ms > max)
			max = ms;
		slow += ms > 200;
		pause_for(0.01);
	}
	printf("transactions %ld lost %ld slow %ld max_ms %.1f\n", count, lost, slow, max);
	return 0;
}

/* One SYN from @sport to @to, answered by a reset: true if refused. */
static bool syn_refused(const struct sockaddr_storage *to, socklen_t len, int sport)
{
	struct sockaddr_storage from;
	struct pollfd p = { .events = POLLOUT };
	int one = 1, err = 0;
	socklen_t elen = sizeof(err);

	sockaddr(to->ss_family == AF_INET6 ? "::" : "0.0.0.0", sport, &from);
	p.fd = socket(to->ss_family, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (p.fd < 0)
		die("socket");
	/* A refused attempt leaves no TIME_WAIT: the port is free again. */
	if (setsockopt(p.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(p.fd, (struct sockaddr *)&from, len))
		die("bind");
	if (connect(p.fd, (const struct sockaddr *)to, len) && errno != EINPROGRESS)
		err = errno;
	/* Within the SYN's first retransmission (1 s): one SYN an attempt. */
	else if (poll(&p, 1, 900) == 1)
		getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &err, &elen);
	close(p.fd);
	return err == ECONNREFUSED;
}

static int cmd_syn(int argc, char **argv)
{
	static struct sockaddr_storage to[MAX_FLOWS];
	static socklen_t len[MAX_FLOWS];
	long per_flow, i, refused = 0;
	int flows, f;

	if (argc != 3)
		usage();
	flows = num(argv[1], 1, MAX_FLOWS);
	per_flow = num(argv[2], 1, 1000000);
	for (f = 0; f < flows; f++)
		len[f] = sockaddr(argv[0], DPORT + f, &to[f]);
	for (i = 0; i < per_flow; i++)
		for (f = 0; f < flows; f++)
			refused += syn_refused(&to[f], len[f], SPORT + f);
	printf("refused %ld of %ld\n", refused, per_flow * flows);
	return refused == per_flow * flows ? 0 : 1;
}

static int cmd_duty(int argc, char **argv)
{
	double end, busy, period, start;
	struct timespec ts;

	if (argc != 2)
		usage();
	busy = num(argv[0], 0, 100) / 100.0;
	end = now_ms() + seconds(argv[1]) * 1e3;
	srand(getpid());
	start = now_ms();
	while (start < end) {
		/*
		 * 5 to 15 ms, at random: off the scheduler tick's beat, whose
		 * samples are what CPU time accounting counts as busy.
		 */
		period = 5 + rand() % 11;
		while (now_ms() - start < period * busy)
			;
		start += period;
		/* On absolute deadlines; a late wake-up starts the next at once. */
		if (start < now_ms()) {
			start = now_ms();
			continue;
		}
		ts.tv_sec = (time_t)(start / 1e3);
		ts.tv_nsec = (long)((start - ts.tv_sec * 1e3) * 1e6);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	return 0;
}

/* A packet socket that sends on @iface; its MAC address in @mac. */
static int packet_socket(const char *iface, struct sockaddr_ll *ll, unsigned char *mac)
{
	socklen_t len = sizeof(*ll);
	int fd = socket(AF_PACKET, SOCK_RAW, 0);

	if (fd < 0)
		die("packet socket");
	memset(ll, 0, sizeof(*ll));
	ll->sll_family = AF_PACKET;
	ll->sll_ifindex = if_nametoindex(iface);
	if (!ll->sll_ifindex)
		die(iface);
	if (bind(fd, (struct sockaddr *)ll, sizeof(*ll)) ||
	    getsockname(fd, (struct sockaddr *)ll, &len))
		die("bind packet socket");
	if (mac)
		memcpy(mac, ll->sll_addr, ETH_ALEN);
	return fd;
}

static void send_frames(int fd, const void *frame, size_t len, long count, bool tolerant)
{
	long i;

	for (i = 0; i < count; i++)
		if (send(fd, frame, len, 0) < 0 && !(tolerant && errno == ENOBUFS))
			die("send frame");
}

static int cmd_raw(int argc, char **argv)
{
	static unsigned char frame[ETH_HLEN + 9000];
	struct sockaddr_ll ll;
	unsigned int m[ETH_ALEN], type;
	long len, count;
	int fd, i;

	if (argc != 5)
		usage();
	if (sscanf(argv[1], "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
		   &m[5]) != ETH_ALEN || sscanf(argv[2], "%x", &type) != 1 || type > 0xffff) {
		fprintf(stderr, "vrss_traffic: bad MAC address or ethertype\n");
		return 1;
	}
	len = num(argv[3], 0, 9000);
	count = num(argv[4], 0, 100000000);
	fd = packet_socket(argv[0], &ll, frame + ETH_ALEN);
	for (i = 0; i < ETH_ALEN; i++)
		frame[i] = m[i];
	frame[12] = type >> 8;
	frame[13] = type & 0xff;
	send_frames(fd, frame, ETH_HLEN + len, count, false);
	return 0;
}

static int cmd_frame(int argc, char **argv)
{
	static unsigned char frame[ETH_HLEN + 65536];
	struct sockaddr_ll ll;
	ssize_t len;
	int fd, file;

	if (argc != 3)
		usage();
	file = open(argv[1], O_RDONLY);
	if (file < 0)
		die(argv[1]);
	len = read(file, frame, sizeof(frame));
	if (len < 0)
		die(argv[1]);
	close(file);
	fd = packet_socket(argv[0], &ll, NULL);
	send_frames(fd, frame, len, num(argv[2], 0, 100000000), true);
	return 0;
}

/* Run ethtool with @args; fails the flipper if it fails. */
static void ethtool(char *const args[])
{
	int status;
	pid_t pid;

	errno = posix_spawnp(&pid, "ethtool", NULL, NULL, args, environ);
	if (errno)
		die("ethtool");
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "vrss_traffic: ethtool %s %s %s %s failed\n",
			args[1], args[2], args[3], args[4]);
		exit(1);
	}
}

static int cmd_flip(int argc, char **argv)
{
	char path[256], less[24], all[24];
	long flips = 0, changes = 0, toggles = 0, rehash = 0, queues;
	char *dev, *key = NULL, *other = NULL;
	int fd;

	if (argc != 3 && argc != 5)
		usage();
	if (argc == 5) {
		key = argv[3];
		other = argv[4];
	}
	dev = argv[0];
	queues = num(argv[1], 0, 4096);
	if (queues == 1)
		usage();
	snprintf(less, sizeof(less), "%d", (int)queues - 1);
	snprintf(all, sizeof(all), "%s", argv[1]);
	char *const chan_less[] = { "ethtool", "-L", dev, "rx", less, NULL };
	char *const chan_all[] = { "ethtool", "-L", dev, "rx", all, NULL };
	char *const hash_off[] = { "ethtool", "-K", dev, "rxhash", "off", NULL };
	char *const hash_on[] = { "ethtool", "-K", dev, "rxhash", "on", NULL };
	char *const key_other[] = { "ethtool", "-X", dev, "hkey", other, NULL };
	char *const key_back[] = { "ethtool", "-X", dev, "hkey", key, NULL };
	char *const fields_sd[] = { "ethtool", "-N", dev, "rx-flow-hash", "udp4", "sd", NULL };
	char *const fields_sdfn[] = { "ethtool", "-N", dev, "rx-flow-hash", "udp4", "sdfn", NULL };

	snprintf(path, sizeof(path), "/sys/class/net/%s/vrss/threshold", dev);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		die(path);
	while (access(argv[2], F_OK)) {
		if (pwrite(fd, flips % 2 ? "100\n" : "0\n", flips % 2 ? 4 : 2, 0) < 0)
			die("threshold");
		if (!flips) {
			printf("ready\n");
			fflush(stdout);
		}
		flips++;
		pause_for(0.001);
		switch (flips % 50) {
		case 0:
		case 6:
			if (!queues)
				break;
			ethtool(flips % 50 ? chan_all : chan_less);
			changes++;
			break;
		case 25:
			ethtool(hash_off);
			toggles++;
			break;
		case 31:
			ethtool(hash_on);
			toggles++;
			break;
		case 12:
		case 18:
		case 37:
		case 43:
			if (!key)
				break;
			ethtool(flips % 50 == 12 ? key_other : flips % 50 == 18 ? key_back :
				flips % 50 == 37 ? fields_sd : fields_sdfn);
			rehash++;
			break;
		}
	}
	if (pwrite(fd, "80\n", 3, 0) < 0)
		die("threshold");
	close(fd);
	if (queues)
		ethtool(chan_all);
	ethtool(hash_on);
	if (key) {
		ethtool(key_back);
		ethtool(fields_sdfn);
	}
	printf("flips %ld channels %ld rxhash %ld\nrehash %ld\n", flips, changes, toggles,
	       rehash);
	return 0;
}

static int cmd_rekey(int argc, char **argv)
{
	long rehash = 0;

	if (argc != 4)
		usage();
	char *const steps[][7] = {
		{ "ethtool", "-X", argv[0], "hkey", argv[3], NULL },
		{ "ethtool", "-N", argv[0], "rx-flow-hash", "udp4", "sd", NULL },
		{ "ethtool", "-X", argv[0], "hkey", argv[2], NULL },
		{ "ethtool", "-N", argv[0], "rx-flow-hash", "udp4", "sdfn", NULL },
	};

	while (access(argv[1], F_OK) || rehash % 4) {
		ethtool(steps[rehash % 4]);
		if (!rehash++) {
			printf("ready\n");
			fflush(stdout);
		}
		pause_for(0.002);
	}
	printf("rehash %ld\n", rehash);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{ "send", cmd_send }, { "flood", cmd_flood }, { "pace", cmd_pace },
		{ "seqsend", cmd_seqsend }, { "seqrecv", cmd_seqrecv }, { "echo", cmd_echo },
		{ "rr", cmd_rr }, { "flip", cmd_flip }, { "rekey", cmd_rekey },
		{ "syn", cmd_syn }, { "duty", cmd_duty }, { "raw", cmd_raw },
		{ "tcpecho", cmd_tcpecho }, { "tcprr", cmd_tcprr },
		{ "frame", cmd_frame },
	};
	double delay = 0, hold = 0;
	size_t i;
	int rc;

	while (argc >= 3 && (!strcmp(argv[1], "--delay") || !strcmp(argv[1], "--hold"))) {
		*(argv[1][2] == 'd' ? &delay : &hold) = seconds(argv[2]);
		argc -= 2;
		argv += 2;
	}
	if (argc < 2)
		usage();
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			break;
	if (i == sizeof(cmds) / sizeof(cmds[0]))
		usage();
	if (delay > 0) {
		printf("waiting\n");
		fflush(stdout);
		pause_for(delay);
	}
	rc = cmds[i].fn(argc - 2, argv + 2);
	if (hold > 0) {
		fflush(stdout);
		pause_for(hold);
	}
	return rc;
}
