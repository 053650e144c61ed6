/* SPDX-License-Identifier: GPL-2.0 */
/* Host build of the pure-C headers: the kernel's fixed-width type names. */
#ifndef _VRSS_SHIM_LINUX_TYPES_H
#define _VRSS_SHIM_LINUX_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

#endif
