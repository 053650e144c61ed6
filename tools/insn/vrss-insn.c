// SPDX-License-Identifier: GPL-2.0
/*
 * vrss-insn: the guest's side of the instruction meter (insn.c), in a
 * guest booted with `tools/vm/run --count-insns`.
 *
 *   vrss-insn mark [--profile]   set a mark; print its line:
 *                                SEQ VCPU K0 U0 K1 U1 ... (every vCPU's
 *                                kernel and user instructions so far)
 *   vrss-insn serve              the mark server: for each line "mark"
 *                                or "profile" read from stdin, that mark,
 *                                then "ok" on stdout; so that a script's
 *                                marks (bash: a coprocess) start no
 *                                process inside the window they bound.
 *                                The marks' lines are not read back:
 *                                the caller reads them from $VRSS_INSNS
 *                                after the window
 *   vrss-insn loop N             the meter's own test: between two marks
 *                                on one vCPU, a user loop of exactly 2N
 *                                instructions; prints
 *                                "expected E user U kernel K"
 *
 * The meter appends the line to $VRSS_INSNS (the rig's job share) before
 * the marking instruction retires, so it is there to read right after.
 * The process pins itself to the vCPU it runs on first, so that the line
 * it reads back names that vCPU: marks from two processes at once are not
 * supported, and a line from another vCPU is an error, not a guess.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mark.h"

static void profile_mark(void)
{
	/* mark.h's NOP with 'p' as the displacement's low byte. */
	__asm__ __volatile__(".byte 0x0f, 0x1f, 0x80, 0x70, 0x73, 0x72, 0x76"
			     ::: "memory");
}

static int pin(void)
{
	cpu_set_t set;
	int cpu = sched_getcpu();

	if (cpu < 0)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -1;
	return sched_getcpu();
}

/*
 * The last two lines of PATH into PREV and LAST (PREV may be NULL);
 * 0, or -1 without a complete last line.
 */
static int last_lines(const char *path, char *prev, char *last, size_t size)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	int found = 0;
	long end;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	end = ftell(f);
	fseek(f, end > 2 * (long)sizeof(line) ? end - 2 * (long)sizeof(line) : 0, SEEK_SET);
	while (fgets(line, sizeof(line), f)) {
		if (!line[0] || line[strlen(line) - 1] != '\n')
			continue;
		if (prev)
			snprintf(prev, size, "%s", last);
		snprintf(last, size, "%s", line);
		found++;
	}
	fclose(f);
	return found >= (prev ? 2 : 1) ? 0 : -1;
}

static void set_mark(int profile)
{
	if (profile)
		profile_mark();
	else
		vrss_insn_mark();
}

/* Whether LINE is a mark of vCPU CPU; an error message if not. */
static int mark_of(const char *line, int cpu)
{
	unsigned long long seq;
	int vcpu;

	if (sscanf(line, "%llu %d", &seq, &vcpu) == 2 && vcpu == cpu)
		return 1;
	fprintf(stderr, "vrss-insn: the mark read back is not this one (vCPU %d): %s",
		cpu, line);
	return 0;
}

static int read_marks(const char *path, int cpu, char *prev, char *last, size_t size)
{
	if (last_lines(path, prev, last, size)) {
		fprintf(stderr, "vrss-insn: no mark in %s: is the meter on (tools/vm/run --count-insns)?\n",
			path);
		return -1;
	}
	if ((prev && !mark_of(prev, cpu)) || !mark_of(last, cpu))
		return -1;
	return 0;
}

/* Field I (0-based) of a mark line. */
static unsigned long long field(const char *line, int i)
{
	const char *p = line;

	while (i-- > 0) {
		p = strchr(p, ' ');
		if (!p)
			return 0;
		p++;
	}
	return strtoull(p, NULL, 10);
}

/* The marks are read back after the second: nothing but the loop between. */
static int loop(const char *path, int cpu, unsigned long n)
{
	char a[4096] = "", b[4096] = "";
	unsigned long i = n;
	int k = 2 + 2 * cpu;

	set_mark(0);
	/* Two instructions an iteration. */
	__asm__ __volatile__("1: dec %0\n\tjnz 1b" : "+r"(i) :: "cc");
	set_mark(0);
	if (read_marks(path, cpu, a, b, sizeof(a)))
		return 1;
	printf("expected %lu user %llu kernel %llu\n", 2 * n,
	       field(b, k + 1) - field(a, k + 1), field(b, k) - field(a, k));
	return 0;
}

/*
 * No stdio on the request path: one read and one write system call per
 * mark, the same every time.
 */
static int serve(void)
{
	char req[64];
	size_t len = 0;
	ssize_t n;

	for (;;) {
		char *nl;

		n = read(0, req + len, sizeof(req) - 1 - len);
		if (n <= 0)
			return n < 0;
		len += n;
		req[len] = 0;
		while ((nl = strchr(req, '\n'))) {
			*nl = 0;
			if (!strcmp(req, "mark") || !strcmp(req, "profile")) {
				set_mark(req[0] == 'p');
				if (write(1, "ok\n", 3) != 3)
					return 1;
			} else {
				fprintf(stderr, "vrss-insn: serve: not a request: %s\n", req);
				if (write(1, "bad\n", 4) != 4)
					return 1;
			}
			len -= nl + 1 - req;
			memmove(req, nl + 1, len + 1);
		}
		if (len == sizeof(req) - 1) {
			fprintf(stderr, "vrss-insn: serve: request too long\n");
			return 1;
		}
	}
}

int main(int argc, char **argv)
{
	const char *path = getenv("VRSS_INSNS");
	char line[4096];
	int cpu;

	if (!path || !*path)
		path = "/run/vrss-job/insns";
	cpu = pin();
	if (cpu < 0) {
		perror("vrss-insn: pinning to this vCPU");
		return 1;
	}
	if (argc >= 2 && !strcmp(argv[1], "mark") &&
	    (argc == 2 || (argc == 3 && !strcmp(argv[2], "--profile")))) {
		set_mark(argc == 3);
		if (read_marks(path, cpu, NULL, line, sizeof(line)))
			return 1;
		fputs(line, stdout);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "serve"))
		return serve();
	if (argc == 3 && !strcmp(argv[1], "loop")) {
		char *end;
		unsigned long n;

		errno = 0;
		n = strtoul(argv[2], &end, 10);
		if (errno || *end || !n) {
			fprintf(stderr, "vrss-insn: loop: not a positive count: %s\n", argv[2]);
			return 2;
		}
		return loop(path, cpu, n);
	}
	fprintf(stderr, "usage: vrss-insn mark [--profile] | serve | loop N\n");
	return 2;
}
