/* SPDX-License-Identifier: Apache-2.0
 * linkem's C tests' harness: CHECK(cond, fmt, ...) counts a pass or prints the failure with
 * its values and goes on; each test's main prints "N passed, N failed" last (make
 * linkem-unit and CI read it) and exits 1 when any failed. */
#ifndef LINKEM_TESTS_CHECK_H
#define LINKEM_TESTS_CHECK_H

#include <stdio.h>

static int passed, failed;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			passed++;                                                                  \
		} else {                                                                           \
			failed++;                                                                  \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                     \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

#endif /* LINKEM_TESTS_CHECK_H */
