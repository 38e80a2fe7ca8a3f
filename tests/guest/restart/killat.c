// SPDX-License-Identifier: GPL-2.0
/*
 * twl-killat PID DIR N SECONDS MAP...: SIGKILL process PID as soon as DIR
 * (a bpffs pin directory) holds N entries that are not one of the MAP
 * names, i.e. N pinned links. Runs in the restart test's guest, where a
 * shell polling the directory is far too slow to land between two links of
 * one agent start. The guest kernels have no inotify, so the directory is
 * read every millisecond: the kill lands within an attach or two of the
 * Nth pin. It runs SCHED_FIFO so that a loaded host, which gives the
 * guest's one CPU little time, cannot let the agent run on past the Nth
 * pin before the poll gets the CPU back (seen: 11 links wanted, all 12
 * pinned before the kill, with the host's load at 18).
 *
 * Prints the number of links seen. Exit status: 0 killed, 1 usage or
 * system error, 2 SECONDS passed first, 3 PID was gone first.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_NAMES 64

static char seen[MAX_NAMES][256];
static int nseen;

/* Count @name once if it is a link (not one of the maps in @maps). */
static void note(const char *name, char **maps, int nmaps)
{
	int i;

	if (name[0] == '.' || strlen(name) >= sizeof(seen[0]))
		return;
	for (i = 0; i < nmaps; i++)
		if (!strcmp(name, maps[i]))
			return;
	for (i = 0; i < nseen; i++)
		if (!strcmp(name, seen[i]))
			return;
	if (nseen < MAX_NAMES)
		strcpy(seen[nseen++], name);
}

/* Whether @pid runs (a zombie does not). */
static int alive(pid_t pid)
{
	char path[64], line[256];
	int ret = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "State:", 6)) {
			ret = !strchr(line, 'Z');
			break;
		}
	fclose(f);
	return ret;
}

static int scan(const char *dir, char **maps, int nmaps)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	while ((de = readdir(d)))
		note(de->d_name, maps, nmaps);
	closedir(d);
	return 0;
}

/* Run SCHED_FIFO: a wake-up of the poll preempts the agent at once. */
static int realtime(void)
{
	struct sched_param sp = { .sched_priority = 50 };

	if (!sched_setscheduler(0, SCHED_FIFO, &sp))
		return 0;
	fprintf(stderr,
		"twl-killat: cannot run SCHED_FIFO: %s (the guest runs it as root; a kill at normal priority could land late)\n",
		strerror(errno));
	return -1;
}

int main(int argc, char **argv)
{
	const struct timespec ms = { .tv_nsec = 1000000 };
	pid_t pid;
	int want, secs;
	time_t end;

	if (argc < 5) {
		fprintf(stderr, "usage: twl-killat PID DIR N SECONDS MAP...\n");
		return 1;
	}
	pid = atoi(argv[1]);
	want = atoi(argv[3]);
	secs = atoi(argv[4]);
	if (pid <= 0 || want <= 0 || secs <= 0) {
		fprintf(stderr, "twl-killat: bad PID, N or SECONDS\n");
		return 1;
	}
	if (realtime())
		return 1;
	end = time(NULL) + secs;
	for (;;) {
		if (scan(argv[2], argv + 5, argc - 5)) {
			fprintf(stderr, "twl-killat: cannot read %s: %s\n",
				argv[2], strerror(errno));
			return 1;
		}
		if (nseen >= want)
			break;
		if (!alive(pid))
			return printf("%d\n", nseen), 3;
		if (time(NULL) >= end)
			return printf("%d\n", nseen), 2;
		nanosleep(&ms, NULL);
	}
	if (kill(pid, SIGKILL)) {
		fprintf(stderr, "twl-killat: kill %d: %s\n", (int)pid,
			strerror(errno));
		return 1;
	}
	printf("%d\n", nseen);
	return 0;
}
