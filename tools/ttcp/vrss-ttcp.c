// SPDX-License-Identifier: GPL-2.0
/*
 * vrss-ttcp: a multi-stream, multi-threaded throughput tool in the spirit
 * of ntttcp, for showing what receive spreading buys.  One thread per
 * stream on both ends (Debian's iperf3 3.12 runs every stream on one
 * thread, so it cannot show multi-vCPU receive gains).
 *
 *   vrss-ttcp -r [-m N[,CPU|*]] [-u] [-6] [-p PORT] [-t SEC] [-W SEC] [--json]
 *   vrss-ttcp -s ADDR [-m N[,CPU|*]] [-u [-g SEGS]] [-p PORT] [-P SPORT[,STEP]]
 *             [-t SEC] [-l LEN] [-b MBIT]
 *
 * Stream i uses port PORT + i, and with -P source port SPORT + i * STEP
 * (STEP 1 unless given), so that a benchmark can choose where RSS puts
 * each stream; a TCP stream then ends with a reset, leaving no TIME_WAIT
 * to block the next run.  -g sends SEGS datagrams of LEN bytes per
 * system call (UDP GSO), so that a sender on one vCPU can outrun the
 * receive processing; the UDP receiver takes them 64 at a time (recvmmsg).
 * -b paces each stream to MBIT Mbit/s (a fixed load; a paced TCP stream
 * writes 64 KiB at a time, not 256).  The receiver waits for every stream
 * (TCP) or the first datagram (UDP), lets the warm-up pass, then measures for
 * -t seconds and reports, for the whole machine it runs on: throughput
 * (total and per stream), per-CPU utilisation (user, sys, softirq, idle
 * from /proc/stat), NET_RX softirqs and packets processed per CPU
 * (/proc/softirqs, /proc/net/softnet_stat), function-call IPIs per frame
 * received (/proc/interrupts CAL over the rx_packets of the devices at the
 * bottom of the stack, which count each frame once: softnet's processed
 * counts a frame stacked devices send through the receive core again, as
 * vrss0's inline path and its spread queues' polls do), TCP retransmits
 * (/proc/net/snmp) and CPU cycles per byte (CPU time times the nominal
 * MHz of /proc/cpuinfo: an estimate, not a cycle counter), plus one
 * sample per second, as text or JSON.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAX_STREAMS	256
#define MAX_CPUS	256
#define MAX_SAMPLES	3600
#define BUF_SIZE	(256 * 1024)
#define BATCH		64
#define PACED_TCP_WRITE	(64 * 1024)	/* smoother than BUF_SIZE bursts */
#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif

struct opts {
	bool receiver;
	const char *addr;
	bool udp;
	bool ipv6;
	int port;
	int sport;
	int sport_step;
	int streams;
	int cpu;		/* -1: no pinning; -2: round robin ('*') */
	int duration;
	int warmup;
	int len;
	int segs;
	double mbit;
	bool json;
};

static struct opts o = {
	.port = 5001, .streams = 4, .cpu = -1, .duration = 10, .warmup = 2,
	.len = 1400, .segs = 1,
};

static atomic_bool stop;
static atomic_int ready;

struct stream {
	pthread_t thread;
	int index;
	int fd;
	_Atomic uint64_t bytes;
	_Atomic uint64_t msgs;
};

static struct stream streams[MAX_STREAMS];

/* System counters at one instant. */
struct cpu_times {
	uint64_t user, nice, sys, idle, iowait, irq, softirq, steal;
};

struct snapshot {
	double t;
	int ncpu;
	struct cpu_times cpu[MAX_CPUS];
	uint64_t net_rx[MAX_CPUS];
	uint64_t processed[MAX_CPUS];
	uint64_t ipis[MAX_CPUS];
	uint64_t retrans;
	uint64_t bytes;
	uint64_t frames;	/* rx_packets of the bottom devices */
};

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int index)
{
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), cpu;
	cpu_set_t set;

	if (o.cpu == -1)
		return;
	cpu = o.cpu == -2 ? index % ncpu : o.cpu;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* ---- reading /proc ---------------------------------------------------- */

static void read_stat(struct snapshot *s)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512];
	int cpu;

	if (!f)
		die("/proc/stat");
	s->ncpu = 0;
	while (fgets(line, sizeof(line), f)) {
		struct cpu_times c = { 0 };

		if (strncmp(line, "cpu", 3) || line[3] == ' ')
			continue;
		if (sscanf(line, "cpu%d %lu %lu %lu %lu %lu %lu %lu %lu", &cpu,
			   &c.user, &c.nice, &c.sys, &c.idle, &c.iowait,
			   &c.irq, &c.softirq, &c.steal) < 8 || cpu >= MAX_CPUS)
			continue;
		s->cpu[cpu] = c;
		if (cpu + 1 > s->ncpu)
			s->ncpu = cpu + 1;
	}
	fclose(f);
}

/* A row of per-CPU counts after a label, in /proc/softirqs or interrupts. */
static void read_row(const char *path, const char *label, uint64_t *out)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *p, *end;
	size_t cap = 0;
	int i;

	memset(out, 0, sizeof(uint64_t) * MAX_CPUS);
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		p = line + strspn(line, " ");
		if (strncmp(p, label, strlen(label)))
			continue;
		p += strlen(label);
		for (i = 0; i < MAX_CPUS; i++) {
			uint64_t v = strtoull(p, &end, 10);

			if (end == p)
				break;
			out[i] = v;
			p = end;
		}
		break;
	}
	free(line);
	fclose(f);
}

static void read_softnet(uint64_t *out)
{
	FILE *f = fopen("/proc/net/softnet_stat", "r");
	char line[512];
	unsigned int processed, cpu_col = 0;
	int i = 0, n;

	memset(out, 0, sizeof(uint64_t) * MAX_CPUS);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && i < MAX_CPUS) {
		if (sscanf(line, "%x", &processed) != 1)
			continue;
		/* Since 5.x the 13th column is the CPU; offline CPUs have no row. */
		n = sscanf(line, "%*x %*x %*x %*x %*x %*x %*x %*x %*x %*x %*x %*x %x",
			   &cpu_col);
		out[n == 1 && cpu_col < MAX_CPUS ? cpu_col : (unsigned int)i] = processed;
		i++;
	}
	fclose(f);
}

static uint64_t read_snmp(const char *proto, const char *field)
{
	FILE *f = fopen("/proc/net/snmp", "r");
	char names[2048], values[2048], *n, *v, *sn, *sv;
	uint64_t result = 0;

	if (!f)
		return 0;
	while (fgets(names, sizeof(names), f) && fgets(values, sizeof(values), f)) {
		if (strncmp(names, proto, strlen(proto)))
			continue;
		n = strtok_r(names, " \n", &sn);
		v = strtok_r(values, " \n", &sv);
		while (n && v) {
			if (!strcmp(n, field))
				result = strtoull(v, NULL, 10);
			n = strtok_r(NULL, " \n", &sn);
			v = strtok_r(NULL, " \n", &sv);
		}
	}
	fclose(f);
	return result;
}

/*
 * The frames received, each once: the rx_packets of every device stacked
 * on no other (no lower_* link in sysfs: lo, veth0 or the NIC; not vrss0,
 * a VLAN or a bridge).
 */
static uint64_t read_rx_frames(void)
{
	char path[512], name[256];
	struct dirent *d, *l;
	uint64_t sum = 0;
	unsigned long long v;
	bool stacked;
	DIR *dir, *dev;
	FILE *f;

	dir = opendir("/sys/class/net");
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' ||
		    strlen(d->d_name) >= sizeof(name))
			continue;
		strcpy(name, d->d_name);
		snprintf(path, sizeof(path), "/sys/class/net/%s", name);
		dev = opendir(path);
		if (!dev)
			continue;
		stacked = false;
		while ((l = readdir(dev)))
			if (!strncmp(l->d_name, "lower_", 6))
				stacked = true;
		closedir(dev);
		if (stacked)
			continue;
		snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_packets", name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", &v) == 1)
			sum += v;
		fclose(f);
	}
	closedir(dir);
	return sum;
}

static uint64_t total_bytes(void)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < o.streams; i++)
		sum += atomic_load_explicit(&streams[i].bytes, memory_order_relaxed);
	return sum;
}

static void snap(struct snapshot *s)
{
	s->t = now();
	s->bytes = total_bytes();
	read_stat(s);
	read_row("/proc/softirqs", "NET_RX:", s->net_rx);
	read_row("/proc/interrupts", "CAL:", s->ipis);
	read_softnet(s->processed);
	s->frames = read_rx_frames();
	s->retrans = read_snmp("Tcp:", "RetransSegs");
}

static uint64_t busy_of(const struct cpu_times *c)
{
	return c->user + c->nice + c->sys + c->irq + c->softirq + c->steal;
}

static uint64_t all_of(const struct cpu_times *c)
{
	return busy_of(c) + c->idle + c->iowait;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0;
}

/* ---- streams ---------------------------------------------------------- */

static int make_addr(const char *host, int port, struct sockaddr_storage *ss,
		     socklen_t *len)
{
	struct addrinfo hints = { .ai_family = o.ipv6 ? AF_INET6 : AF_UNSPEC },
			*res;
	char service[16];

	hints.ai_socktype = o.udp ? SOCK_DGRAM : SOCK_STREAM;
	hints.ai_flags = host ? 0 : AI_PASSIVE;
	snprintf(service, sizeof(service), "%d", port);
	if (getaddrinfo(host, service, &hints, &res))
		return -1;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static void *receiver_thread(void *arg)
{
	struct stream *st = arg;
	struct timeval tv = { .tv_usec = 200000 };
	char *buf = malloc(BUF_SIZE);
	struct sockaddr_storage ss;
	int fd = st->fd, one = 1;
	socklen_t len;
	ssize_t n;

	pin(st->index);
	if (!o.udp) {
		/* Accept one connection, polling for the stop flag. */
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		for (;;) {
			len = sizeof(ss);
			fd = accept(st->fd, (struct sockaddr *)&ss, &len);
			if (fd >= 0 || atomic_load(&stop))
				break;
		}
		if (fd < 0)
			goto out;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	atomic_fetch_add(&ready, 1);
	while (o.udp && !atomic_load_explicit(&stop, memory_order_relaxed)) {
		struct mmsghdr msgs[BATCH];
		struct iovec iov[BATCH];
		int i, got;

		for (i = 0; i < BATCH; i++) {
			iov[i].iov_base = buf + i * (BUF_SIZE / BATCH);
			iov[i].iov_len = BUF_SIZE / BATCH;
			memset(&msgs[i].msg_hdr, 0, sizeof(msgs[i].msg_hdr));
			msgs[i].msg_hdr.msg_iov = &iov[i];
			msgs[i].msg_hdr.msg_iovlen = 1;
		}
		got = recvmmsg(fd, msgs, BATCH, MSG_WAITFORONE, NULL);
		if (got < 0 && errno != EAGAIN && errno != EINTR)
			break;
		for (i = 0; i < got; i++) {
			atomic_fetch_add_explicit(&st->bytes, msgs[i].msg_len,
						  memory_order_relaxed);
			atomic_fetch_add_explicit(&st->msgs, 1, memory_order_relaxed);
		}
	}
	while (!o.udp && !atomic_load_explicit(&stop, memory_order_relaxed)) {
		n = recv(fd, buf, BUF_SIZE, 0);
		if (n > 0) {
			atomic_fetch_add_explicit(&st->bytes, n, memory_order_relaxed);
			atomic_fetch_add_explicit(&st->msgs, 1, memory_order_relaxed);
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
			break;
		}
	}
	if (fd != st->fd)
		close(fd);
out:
	free(buf);
	return NULL;
}

/* -P: the stream's own source port; no TIME_WAIT after a TCP stream. */
static void bind_sport(int fd, int family, int port)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct sockaddr_storage any = { .ss_family = family };
	int one = 1;

	if (family == AF_INET6)
		((struct sockaddr_in6 *)&any)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)&any)->sin_port = htons(port);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (!o.udp && setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg))))
		die("setsockopt");
	if (bind(fd, (struct sockaddr *)&any, family == AF_INET6 ?
		 sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)))
		die("bind");
}

static void *sender_thread(void *arg)
{
	struct stream *st = arg;
	char *buf = calloc(1, BUF_SIZE);
	struct sockaddr_storage ss;
	int fd = -1, tries;
	double start, end;
	socklen_t len;
	ssize_t n;

	pin(st->index);
	if (make_addr(o.addr, o.port + st->index, &ss, &len)) {
		fprintf(stderr, "vrss-ttcp: cannot resolve %s\n", o.addr);
		exit(1);
	}
	/* The receiver may still be starting: retry for 30 s. */
	for (tries = 0; tries < 300; tries++) {
		fd = socket(ss.ss_family, o.udp ? SOCK_DGRAM : SOCK_STREAM, 0);
		if (fd < 0)
			die("socket");
		if (o.sport)
			bind_sport(fd, ss.ss_family, o.sport + st->index * o.sport_step);
		if (!connect(fd, (struct sockaddr *)&ss, len))
			break;
		close(fd);
		fd = -1;
		usleep(100000);
	}
	if (fd < 0) {
		fprintf(stderr, "vrss-ttcp: stream %d: cannot connect\n", st->index);
		exit(1);
	}
	if (o.udp && o.segs > 1 &&
	    setsockopt(fd, IPPROTO_UDP, UDP_SEGMENT, &o.len, sizeof(o.len)))
		die("UDP_SEGMENT");
	start = now();
	end = start + o.duration + o.warmup;
	while (!atomic_load_explicit(&stop, memory_order_relaxed) && now() < end) {
		/* Paced: ahead of MBIT Mbit/s since the start?  Wait. */
		if (o.mbit > 0) {
			double ahead = atomic_load(&st->bytes) * 8 / (o.mbit * 1e6) -
				       (now() - start);

			if (ahead > 0)
				usleep(ahead * 1e6);
		}
		n = send(fd, buf, o.udp ? o.len * o.segs :
			 o.mbit > 0 ? PACED_TCP_WRITE : BUF_SIZE, 0);
		if (n > 0) {
			atomic_fetch_add_explicit(&st->bytes, n, memory_order_relaxed);
		} else if (!o.udp || (errno != ECONNREFUSED && errno != ENOBUFS &&
				      errno != EAGAIN)) {
			break;	/* TCP: the receiver is done */
		}
	}
	close(fd);
	free(buf);
	return NULL;
}

static int listen_on(int port)
{
	struct sockaddr_storage ss;
	int fd, one = 1, big = 16 << 20;
	socklen_t len;

	if (make_addr(o.addr, port, &ss, &len))
		return -1;
	fd = socket(ss.ss_family, o.udp ? SOCK_DGRAM : SOCK_STREAM, 0);
	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (o.udp)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (bind(fd, (struct sockaddr *)&ss, len))
		die("bind");
	if (!o.udp && listen(fd, 1))
		die("listen");
	return fd;
}

/* ---- reporting -------------------------------------------------------- */

struct sample {
	double t;
	double mbps;
	double busy[MAX_CPUS];
	double softirq[MAX_CPUS];
};

static struct sample samples[MAX_SAMPLES];
static int nsamples;

static void report(const struct snapshot *a, const struct snapshot *b,
		   const uint64_t *bytes0, const uint64_t *bytes1)
{
	double secs = b->t - a->t, mbps = (b->bytes - a->bytes) * 8 / secs / 1e6;
	uint64_t packets = 0, ipis = 0, busy_ticks = 0;
	double mhz = 0, cpb;
	FILE *f;
	char line[256];
	int i, c;

	f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu MHz : %lf", &mhz) == 1)
			break;
	if (f)
		fclose(f);
	packets = b->frames - a->frames;
	for (c = 0; c < b->ncpu; c++) {
		ipis += b->ipis[c] - a->ipis[c];
		busy_ticks += busy_of(&b->cpu[c]) - busy_of(&a->cpu[c]);
	}
	/* USER_HZ ticks -> cycles, per byte received. */
	cpb = b->bytes > a->bytes ?
	      busy_ticks / (double)sysconf(_SC_CLK_TCK) * mhz * 1e6 /
	      (b->bytes - a->bytes) : 0;

	if (o.json) {
		printf("{\"mode\": \"%s\", \"streams\": %d, \"seconds\": %.3f,"
		       " \"start_monotonic\": %.6f,\n",
		       o.udp ? "udp" : "tcp", o.streams, secs, a->t);
		printf(" \"throughput_mbps\": %.1f, \"per_stream_mbps\": [", mbps);
		for (i = 0; i < o.streams; i++)
			printf("%s%.1f", i ? ", " : "",
			       (bytes1[i] - bytes0[i]) * 8 / secs / 1e6);
		printf("],\n \"tcp_retransmits\": %lu, \"packets\": %lu,"
		       " \"ipis_per_packet\": %.4f, \"cycles_per_byte\": %.2f,"
		       " \"cycles_per_byte_basis\": \"CPU time x /proc/cpuinfo MHz\",\n",
		       b->retrans - a->retrans, packets,
		       packets ? (double)ipis / packets : 0, cpb);
		printf(" \"cpus\": [");
		for (c = 0; c < b->ncpu; c++) {
			const struct cpu_times *x = &a->cpu[c], *y = &b->cpu[c];
			uint64_t all = all_of(y) - all_of(x);

			printf("%s\n  {\"cpu\": %d, \"user\": %.1f, \"sys\": %.1f,"
			       " \"softirq\": %.1f, \"idle\": %.1f, \"busy\": %.1f,"
			       " \"net_rx\": %lu, \"packets\": %lu, \"ipis\": %lu}",
			       c ? "," : "", c,
			       pct(y->user + y->nice - x->user - x->nice, all),
			       pct(y->sys - x->sys, all),
			       pct(y->softirq - x->softirq, all),
			       pct(y->idle + y->iowait - x->idle - x->iowait, all),
			       pct(busy_of(y) - busy_of(x), all),
			       b->net_rx[c] - a->net_rx[c],
			       b->processed[c] - a->processed[c],
			       b->ipis[c] - a->ipis[c]);
		}
		printf("],\n \"samples\": [");
		for (i = 0; i < nsamples; i++) {
			printf("%s\n  {\"t\": %.1f, \"mbps\": %.1f, \"busy\": [",
			       i ? "," : "", samples[i].t, samples[i].mbps);
			for (c = 0; c < b->ncpu; c++)
				printf("%s%.1f", c ? ", " : "", samples[i].busy[c]);
			printf("], \"softirq\": [");
			for (c = 0; c < b->ncpu; c++)
				printf("%s%.1f", c ? ", " : "", samples[i].softirq[c]);
			printf("]}");
		}
		printf("]}\n");
		return;
	}

	printf("%s, %d streams, %.1f s: %.1f Mbit/s\n", o.udp ? "UDP" : "TCP",
	       o.streams, secs, mbps);
	for (i = 0; i < o.streams; i++)
		printf("  stream %d: %.1f Mbit/s\n", i,
		       (bytes1[i] - bytes0[i]) * 8 / secs / 1e6);
	printf("  cpu   user%%   sys%% softirq%%  idle%%   NET_RX  packets     IPIs\n");
	for (c = 0; c < b->ncpu; c++) {
		const struct cpu_times *x = &a->cpu[c], *y = &b->cpu[c];
		uint64_t all = all_of(y) - all_of(x);

		printf("  %3d %6.1f %6.1f %8.1f %6.1f %8lu %8lu %8lu\n", c,
		       pct(y->user + y->nice - x->user - x->nice, all),
		       pct(y->sys - x->sys, all), pct(y->softirq - x->softirq, all),
		       pct(y->idle + y->iowait - x->idle - x->iowait, all),
		       b->net_rx[c] - a->net_rx[c], b->processed[c] - a->processed[c],
		       b->ipis[c] - a->ipis[c]);
	}
	printf("  frames received %lu, TCP retransmits %lu, IPIs per frame %.3f,"
	       " cycles per byte %.2f (CPU time x cpuinfo's %.0f MHz)\n",
	       packets, b->retrans - a->retrans,
	       packets ? (double)ipis / packets : 0, cpb, mhz);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: vrss-ttcp -r | -s ADDR [-m N[,CPU|*]] [-u] [-6] [-p PORT] [-P SPORT[,STEP]]\n"
		"                 [-t SEC] [-W SEC] [-l LEN] [-g SEGS] [-b MBIT] [--json]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *comma;
	int c;

	while ((c = getopt_long(argc, argv, "rs:m:u6p:P:t:W:l:g:b:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': o.receiver = true; break;
		case 's': o.addr = optarg; break;
		case 'm':
			o.streams = atoi(optarg);
			comma = strchr(optarg, ',');
			if (comma)
				o.cpu = comma[1] == '*' ? -2 : atoi(comma + 1);
			break;
		case 'u': o.udp = true; break;
		case '6': o.ipv6 = true; break;
		case 'p': o.port = atoi(optarg); break;
		case 'P':
			o.sport = atoi(optarg);
			comma = strchr(optarg, ',');
			o.sport_step = comma ? atoi(comma + 1) : 1;
			break;
		case 't': o.duration = atoi(optarg); break;
		case 'W': o.warmup = atoi(optarg); break;
		case 'l': o.len = atoi(optarg); break;
		case 'g': o.segs = atoi(optarg); break;
		case 'b': o.mbit = atof(optarg); break;
		case 'j': o.json = true; break;
		default: usage();
		}
	}
	if (o.receiver == !!o.addr || o.streams < 1 || o.streams > MAX_STREAMS ||
	    o.duration < 1 || o.warmup < 0 || o.len < 1 || o.segs < 1 ||
	    o.segs > 64 || (o.segs > 1 && !o.udp) || o.len * o.segs > 65000)
		usage();
}

int main(int argc, char **argv)
{
	static struct snapshot a, b, prev, cur;
	static uint64_t bytes0[MAX_STREAMS], bytes1[MAX_STREAMS];
	double start, deadline;
	int i, c;

	parse(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < o.streams; i++) {
		streams[i].index = i;
		if (o.receiver)
			streams[i].fd = listen_on(o.port + i);
		if (pthread_create(&streams[i].thread, NULL,
				   o.receiver ? receiver_thread : sender_thread,
				   &streams[i]))
			die("pthread_create");
	}
	if (!o.receiver) {
		for (i = 0; i < o.streams; i++)
			pthread_join(streams[i].thread, NULL);
		return 0;
	}

	/* Every TCP stream connected, or the first UDP datagram in. */
	deadline = now() + 60;
	while (now() < deadline &&
	       (o.udp ? total_bytes() == 0 : atomic_load(&ready) < o.streams))
		usleep(10000);
	if (now() >= deadline) {
		fprintf(stderr, "vrss-ttcp: no sender within 60 s\n");
		return 1;
	}
	usleep(o.warmup * 1000000);

	snap(&a);
	for (i = 0; i < o.streams; i++)
		bytes0[i] = atomic_load(&streams[i].bytes);
	prev = a;
	start = a.t;
	while (now() < start + o.duration) {
		usleep(1000000 - (useconds_t)((now() - start) * 1e6) % 1000000);
		snap(&cur);
		if (nsamples < MAX_SAMPLES) {
			struct sample *s = &samples[nsamples++];

			s->t = cur.t - start;
			s->mbps = (cur.bytes - prev.bytes) * 8 / (cur.t - prev.t) / 1e6;
			for (c = 0; c < cur.ncpu; c++) {
				uint64_t all = all_of(&cur.cpu[c]) - all_of(&prev.cpu[c]);

				s->busy[c] = pct(busy_of(&cur.cpu[c]) - busy_of(&prev.cpu[c]), all);
				s->softirq[c] = pct(cur.cpu[c].softirq - prev.cpu[c].softirq, all);
			}
		}
		prev = cur;
	}
	b = cur;
	for (i = 0; i < o.streams; i++)
		bytes1[i] = atomic_load(&streams[i].bytes);
	atomic_store(&stop, true);
	for (i = 0; i < o.streams; i++) {
		pthread_join(streams[i].thread, NULL);
		close(streams[i].fd);
	}
	report(&a, &b, bytes0, bytes1);
	return 0;
}
