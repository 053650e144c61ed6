/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The instruction meter's mark: an x86 NOP with a displacement nothing else
 * uses, `nopl 0x76727373(%rax)` ("ssrv"), 7 bytes.  The CPU does nothing
 * with it; the meter (insn.c) sees it being translated and, each time a
 * vCPU executes it, writes every vCPU's instruction counts at that instant.
 */
#ifndef VRSS_INSN_MARK_H
#define VRSS_INSN_MARK_H

#define VRSS_INSN_MARK_BYTES { 0x0f, 0x1f, 0x80, 0x73, 0x73, 0x72, 0x76 }

/* Kernel text on x86-64 (the upper half of the address space). */
#define VRSS_INSN_KERNEL_BASE 0xffff800000000000ULL

static inline void vrss_insn_mark(void)
{
	__asm__ __volatile__(".byte 0x0f, 0x1f, 0x80, 0x73, 0x73, 0x72, 0x76"
			     ::: "memory");
}

#endif
