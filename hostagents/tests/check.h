/* SPDX-License-Identifier: Apache-2.0
 *
 * The agent's C tests' harness: CHECK/CHECK_EQ end the current test on the first failure,
 * check_run runs a table of TEST(fn) entries and prints `N passed, N failed` last (CI reads it).
 */
#ifndef HOSTAGENTS_TESTS_CHECK_H
#define HOSTAGENTS_TESTS_CHECK_H

#include <stddef.h>
#include <stdio.h>

static int current_failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("    %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);        \
			current_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);     \
		if (a_ != b_) {                                                                    \
			printf("    %s:%d: %s == %llu, expected %s == %llu\n", __FILE__, __LINE__, \
			       #a, a_, #b, b_);                                                    \
			current_failed = 1;                                                        \
			return;                                                                    \
		}                                                                                  \
	} while (0)

struct check_test {
	const char *name;
	void (*fn)(void);
};

#define TEST(fn)                                                                                   \
	{                                                                                          \
#fn, fn                                                                            \
	}

static inline int check_run(const struct check_test *tests, size_t n)
{
	unsigned int passed = 0, failed = 0;

	for (size_t i = 0; i < n; i++) {
		current_failed = 0;
		tests[i].fn();
		printf("%s %s\n", current_failed ? "FAIL" : "ok  ", tests[i].name);
		if (current_failed)
			failed++;
		else
			passed++;
	}
	printf("%u passed, %u failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif /* HOSTAGENTS_TESTS_CHECK_H */
