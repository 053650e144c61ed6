// SPDX-License-Identifier: GPL-2.0
/*
 * vrss's instruction meter: a QEMU TCG plugin that counts the instructions
 * each vCPU of the guest executes, kernel and user apart, and writes every
 * vCPU's counts whenever the guest executes a mark (mark.h).  Under TCG
 * every guest instruction is translated by QEMU, so the counts do not
 * depend on how busy the host is: the cost figure that time per byte on a
 * shared 2-core host cannot give.
 *
 *   qemu-system-x86_64 ... -plugin vrss-insn.so,out=FILE
 *
 * Each mark appends one line to FILE:
 *
 *   SEQ VCPU K0 U0 K1 U1 ...
 *
 * the mark's sequence number, the vCPU that executed it, then each vCPU's
 * kernel and user instructions since boot.  The profiling mark also
 * writes FILE.prof.SEQ: the instructions executed since the previous
 * profiling mark, by translation block start address, a line each:
 *
 *   ADDR INSNS EXECS    (hex, decimal, decimal; blocks that ran in the
 *                        window, EXECS the times they ran)
 *
 * A translation block ends at the first branch, so it lies in one
 * function: with the guest's /proc/kallsyms that is a per-function
 * profile, and the [module] tags there give what a module itself executed
 * (tools/insn/profile.py).  A block that starts at a function's first
 * instruction runs once per call: its EXECS count the calls.
 *
 * Memory: a record per translation, never freed (a guest run of minutes
 * translates some hundred thousand blocks, some tens of megabytes).
 *
 * Counting is per translation block: QEMU calls us when a block starts,
 * and the whole block is counted.  A block cut short by an exception (a
 * page fault, say) is counted whole and its rest again when it resumes: a
 * few instructions per fault.  Interrupts are taken between blocks only.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mark.h"
#include "qemu-plugin-api.h"

VRSS_PLUGIN_EXPORT int qemu_plugin_version = VRSS_QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 256

/* One vCPU's totals, written only by that vCPU's thread (MTTCG). */
struct vcpu_count {
	uint64_t insns[2];	/* [0] user, [1] kernel */
} __attribute__((aligned(64)));

/* One translation of a block; the same address may be translated again. */
struct block {
	uint64_t vaddr;
	uint32_t n_insns;
	uint32_t kernel;
	uint64_t profiled;	/* executions up to the last profiling mark */
	struct block *next;
	uint64_t execs[];	/* per vCPU */
};

static struct vcpu_count counts[MAX_VCPUS];
static unsigned int n_vcpus;
static struct block *blocks;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;
static char *prof_path;	/* FILE.prof. */
static uint64_t seq;

static const unsigned char mark_bytes[] = VRSS_INSN_MARK_BYTES;

static uint64_t load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Only the vCPU's own thread writes these: no atomic add needed. */
static void add(uint64_t *p, uint64_t n)
{
	__atomic_store_n(p, load(p) + n, __ATOMIC_RELAXED);
}

static void block_exec(unsigned int vcpu, void *udata)
{
	struct block *b = udata;

	if (vcpu >= n_vcpus)
		return;
	add(&counts[vcpu].insns[b->kernel], b->n_insns);
	add(&b->execs[vcpu], 1);
}

static void write_counts(unsigned int vcpu)
{
	unsigned int i;

	fprintf(out, "%" PRIu64 " %u", seq, vcpu);
	for (i = 0; i < n_vcpus; i++)
		fprintf(out, " %" PRIu64 " %" PRIu64, load(&counts[i].insns[1]),
			load(&counts[i].insns[0]));
	fputc('\n', out);
	fflush(out);
}

static void write_profile(void)
{
	char path[4096];
	struct block *b;
	unsigned int i;
	FILE *prof;
	uint64_t e;

	snprintf(path, sizeof(path), "%s%" PRIu64, prof_path, seq);
	prof = fopen(path, "w");
	if (!prof)
		return;
	for (b = blocks; b; b = b->next) {
		for (e = 0, i = 0; i < n_vcpus; i++)
			e += load(&b->execs[i]);
		if (e == b->profiled)
			continue;
		fprintf(prof, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", b->vaddr,
			(e - b->profiled) * b->n_insns, e - b->profiled);
		b->profiled = e;
	}
	fclose(prof);
}

/* udata: non-NULL for the profiling mark. */
static void mark_exec(unsigned int vcpu, void *udata)
{
	pthread_mutex_lock(&lock);
	if (!out) {		/* QEMU is exiting */
		pthread_mutex_unlock(&lock);
		return;
	}
	seq++;
	write_counts(vcpu);
	if (udata)
		write_profile();
	pthread_mutex_unlock(&lock);
}

/*
 * The counting mark is mark.h's NOP; the profiling mark the same with
 * 0x70 ('p') as its displacement's low byte.
 */
static int is_mark(struct qemu_plugin_insn *insn, int *profile)
{
	unsigned char d[sizeof(mark_bytes)];

	if (qemu_plugin_insn_size(insn) != sizeof(mark_bytes) ||
	    qemu_plugin_insn_data(insn, d, sizeof(d)) != sizeof(d) ||
	    memcmp(d + 4, mark_bytes + 4, sizeof(mark_bytes) - 4) ||
	    memcmp(d, mark_bytes, 3))
		return 0;
	if (d[3] == mark_bytes[3]) {
		*profile = 0;
		return 1;
	}
	if (d[3] == 0x70) {
		*profile = 1;
		return 1;
	}
	return 0;
}

static void block_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct block *b;
	int profile;

	(void)id;
	b = calloc(1, sizeof(*b) + n_vcpus * sizeof(b->execs[0]));
	if (!b)
		abort();
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->n_insns = n;
	b->kernel = b->vaddr >= VRSS_INSN_KERNEL_BASE;
	pthread_mutex_lock(&lock);
	b->next = blocks;
	blocks = b;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, block_exec,
					     QEMU_PLUGIN_CB_NO_REGS, b);
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (is_mark(insn, &profile))
			qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_exec,
							       QEMU_PLUGIN_CB_NO_REGS,
							       profile ? b : NULL);
	}
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	(void)id;
	(void)udata;
	pthread_mutex_lock(&lock);
	fclose(out);
	out = NULL;
	pthread_mutex_unlock(&lock);
}

VRSS_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = NULL;
	char msg[256];
	int i;

	if (!info->system_emulation || info->system.max_vcpus < 1 ||
	    info->system.max_vcpus > MAX_VCPUS) {
		qemu_plugin_outs("vrss-insn: system emulation with 1-256 vCPUs only\n");
		return -1;
	}
	n_vcpus = info->system.max_vcpus;
	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			path = argv[i] + 4;
		} else {
			snprintf(msg, sizeof(msg), "vrss-insn: unknown argument '%s' (out=FILE)\n",
				 argv[i]);
			qemu_plugin_outs(msg);
			return -1;
		}
	}
	if (!path || !*path) {
		qemu_plugin_outs("vrss-insn: out=FILE is needed\n");
		return -1;
	}
	out = fopen(path, "w");
	prof_path = malloc(strlen(path) + sizeof(".prof."));
	if (!out || !prof_path) {
		qemu_plugin_outs("vrss-insn: cannot create the output file\n");
		return -1;
	}
	strcpy(prof_path, path);
	strcat(prof_path, ".prof.");
	qemu_plugin_register_vcpu_tb_trans_cb(id, block_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
