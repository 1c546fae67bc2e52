/* SPDX-License-Identifier: Apache-2.0
 *
 * Unit tests of pdcp-agent's --stats opening (agent/statsfile.c): a fifo nobody reads must
 * be refused at once, never block the agent. An alarm turns a hang into a failure.
 * The last line of output is `N passed, N failed` (CI reads it).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "statsfile.h"

#define HANG_S 5 /* open(2) of a fifo blocks forever without O_NONBLOCK */

static char dir[] = "/tmp/test_statsfile.XXXXXX";
static char path[sizeof(dir) + 64];

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "FAIL: stats_file_open blocked (a fifo without a reader)\n";
	(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	_exit(1);
}

static const char *in_dir(const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static void test_fifo_without_reader_is_refused_at_once(void)
{
	char err[512] = "";

	CHECK(mkfifo(in_dir("noreader"), 0600) == 0);
	alarm(HANG_S);
	CHECK(stats_file_open(path, err, sizeof(err)) == NULL);
	alarm(0);
	CHECK(strstr(err, "noreader: a fifo that nobody reads (start its reader first") != NULL);
}

static void test_fifo_with_reader_gets_whole_lines(void)
{
	char err[512] = "", buf[64] = "";

	CHECK(mkfifo(in_dir("reader"), 0600) == 0);
	int rd = open(path, O_RDONLY | O_NONBLOCK); /* the reader is there first */
	CHECK(rd >= 0);
	alarm(HANG_S);
	FILE *f = stats_file_open(path, err, sizeof(err));
	alarm(0);
	CHECK(f != NULL);
	/* writes block again once open (a full pipe waits for the reader, no torn line) */
	CHECK((fcntl(fileno(f), F_GETFL) & O_NONBLOCK) == 0);
	CHECK(fputs("{\"ts_ms\":1}\n", f) >= 0 && fflush(f) == 0);
	CHECK_EQ(read(rd, buf, sizeof(buf) - 1), strlen("{\"ts_ms\":1}\n"));
	CHECK(strcmp(buf, "{\"ts_ms\":1}\n") == 0);
	fclose(f);
	close(rd);
}

static void test_regular_file_is_created_and_truncated(void)
{
	char err[512] = "";
	struct stat st;

	FILE *old = fopen(in_dir("stats.jsonl"), "w");
	CHECK(old != NULL && fputs("an earlier run's lines\n", old) >= 0 && fclose(old) == 0);
	FILE *f = stats_file_open(path, err, sizeof(err));
	CHECK(f != NULL);
	CHECK(stat(path, &st) == 0 && st.st_size == 0);
	fclose(f);
}

static void test_unwritable_path_names_the_reason(void)
{
	char err[512] = "";

	CHECK(stats_file_open(in_dir("missing/stats.jsonl"), err, sizeof(err)) == NULL);
	CHECK(strstr(err, "missing/stats.jsonl: No such file or directory") != NULL);
	CHECK(stats_file_open(dir, err, sizeof(err)) == NULL);
	CHECK(strstr(err, ": Is a directory") != NULL);
}

static const struct check_test tests[] = {
	TEST(test_fifo_without_reader_is_refused_at_once),
	TEST(test_fifo_with_reader_gets_whole_lines),
	TEST(test_regular_file_is_created_and_truncated),
	TEST(test_unwritable_path_names_the_reason),
};

int main(void)
{
	int rc;

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	signal(SIGALRM, on_alarm);
	rc = check_run(tests, sizeof(tests) / sizeof(tests[0]));
	const char *names[] = {"noreader", "reader", "stats.jsonl"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(in_dir(names[i]));
	rmdir(dir);
	return rc;
}
