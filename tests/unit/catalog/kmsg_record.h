/* SPDX-License-Identifier: GPL-2.0 */
/* Catalog tests: kernel texts written as /dev/kmsg records. */
#ifndef TWL_TEST_KMSG_RECORD_H
#define TWL_TEST_KMSG_RECORD_H

#include <stddef.h>

/*
 * kmsg_record - write @text as the kernel's devkmsg_read() does:
 * "PRI,SEQ,TS,FLAG[,caller=CALLER];" with PRI = @prefix (facility * 8 +
 * level), then the text with bytes < 0x20, >= 0x7f and '\\' as \xNN, then
 * "\n". Fails the test when @cap is too small; returns the length written.
 */
size_t kmsg_record(char *out, size_t cap, int prefix, unsigned long long seq,
		   const char *caller, const char *text);

#endif /* TWL_TEST_KMSG_RECORD_H */
