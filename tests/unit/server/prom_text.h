/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Prometheus text format for the server's tests (GET /metrics), with
 * cmocka assertions: a failure fails the calling test.
 */
#ifndef TWL_TEST_PROM_TEXT_H
#define TWL_TEST_PROM_TEXT_H

/*
 * prom_check_exposition - check @text as the exposition format: every
 * sample line well formed, its metric declared by a TYPE line before it
 * (histograms: its _bucket, _sum and _count), no series twice. Returns the
 * number of samples.
 */
int prom_check_exposition(const char *text);

/* prom_value_of - the value of @series (name and labels, exactly). */
long long prom_value_of(const char *text, const char *series);

#endif /* TWL_TEST_PROM_TEXT_H */
