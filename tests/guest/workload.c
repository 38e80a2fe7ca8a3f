// SPDX-License-Identifier: GPL-2.0
/*
 * twl-workload: use cgroup v1 memory controller knobs from a named process in
 * a named cgroup, and log exactly what was done. Runs inside QEMU guests
 * (statically linked, no sanitizers); later tests compare BPF counts and
 * agent reports against its log.
 *
 * Usage:
 *   twl-workload [-c DIR] [-n N] [-N COMM] [-m MARK] [-s] [-u UID] ACTION [ARGS]
 *   (options end at ACTION, so a VALUE such as -1 is not taken for one)
 *
 *   -c DIR   cgroup directory to act in, e.g. /sys/fs/cgroup/memory/a. It is
 *            created if missing and the process moves itself into it
 *            (writes its pid to DIR/cgroup.procs) before acting. Default:
 *            the current directory, without moving.
 *   -n N     repeat the action N times (1..100000, events 1..1000); default 1
 *   -N COMM  set the process name (prctl PR_SET_NAME, max 15 bytes) first
 *   -m MARK  after the action, write MARK as one record to /dev/kmsg (so
 *            kernel messages printed by the action sit before the marker)
 *   -s       "skip move": act on DIR without moving into it
 *   -u UID   after moving (which needs root), drop to uid and gid UID before
 *            acting, so that the counters' uid attribution can be checked
 *   -e       write: VALUE has escapes (\n, \t, \\, \xHH), decoded before
 *            writing, so values with spaces and newlines can be written;
 *            the log shows VALUE as given (one word)
 *
 * Actions (FILE is a name inside DIR, e.g. memory.soft_limit_in_bytes):
 *   write FILE VALUE   open, write VALUE, close; N times
 *   read FILE          open, read it all, close; N times
 *   event FILE [ARGS]  register a new eventfd for FILE through
 *                      DIR/cgroup.event_control ("<efd> <fd> ARGS"); N times;
 *                      the eventfds stay open until the process exits
 *   mount FSTYPE OPTS  mount(2) FSTYPE with the option string OPTS on DIR
 *                      (-s: DIR is the mount point, not a cgroup); N times,
 *                      unmounting after each success. A cgroup v1 mount
 *                      with an unknown controller name fails with EINVAL
 *                      after the kernel printed "cgroup: Unknown subsys
 *                      name '<OPTS>'" (facility 0): a kernel message whose
 *                      text user space chooses. Each repetition then waits
 *                      50 ms: a guest's printk clock may tick in jiffies
 *                      (TCG: 4 ms), and an agent from before record_dedup.h
 *                      numbered repeats took two records with the same
 *                      stamp and text for one
 *   kmsg-dump          print every record currently in /dev/kmsg to stdout,
 *                      one per line, without waiting for new ones
 *
 * Log: one line per action on stdout, key=value separated by spaces:
 *   workload op=write file=memory.soft_limit_in_bytes dir=/sys/fs/cgroup/memory/a
 *     cgroup=/a value=1048576 n=5 ok=5 failed=0 errno=0 comm=twl-soft pid=42
 *     uid=0
 * (one line). cgroup= is the process's memory cgroup from /proc/self/cgroup
 * after the move ("-" if none); errno= is the last error (symbolic, 0 if
 * none); failed counts the repetitions whose open/write/read/register
 * failed. Exit status: 0 if every repetition succeeded, 1 if some failed
 * (the test decides whether that was expected, e.g. use_hierarchy=0 fails
 * with EINVAL by design), 2 on usage errors or setup failures.
 *
 * Safety: write, event and moving into a cgroup change kernel state; they
 * are refused unless /twilight/lib.sh exists, i.e. inside a guest booted
 * with kernel/mkinitramfs, never on the build host.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_COUNT 100000
#define MAX_EVENTS 1000
#define KMSG_RECORD_MAX 8192
#define GUEST_MARKER "/twilight/lib.sh"

struct opts {
	const char *dir;
	const char *comm;
	const char *mark;
	long count;
	int move;
	long uid; /* -1: keep */
	const char *action;
	const char *file; /* a plain name inside dir */
	const char *value; /* write: the value; event: ARGS ("" if none) */
	int escapes; /* -e: value has escapes */
	char data[256]; /* write: the bytes written (value, decoded) */
};

/* What the repetitions of the action came to, for the log line. */
struct tally {
	long ok;
	long failed;
	int last_err; /* errno of the last failure, 0 if none */
};

static void usage(void)
{
	fprintf(stderr,
		"usage: twl-workload [-c DIR] [-n N] [-N COMM] [-m MARK] [-s] [-u UID] [-e] ACTION [ARGS]\n"
		"actions: write FILE VALUE | read FILE | event FILE [ARGS] |\n"
		"         mount FSTYPE OPTS | kmsg-dump\n");
}

static const char *errname(int e)
{
	switch (e) {
	case 0:
		return "0";
	case EINVAL:
		return "EINVAL";
	case EBUSY:
		return "EBUSY";
	case ENOENT:
		return "ENOENT";
	case EACCES:
		return "EACCES";
	case EPERM:
		return "EPERM";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case ENOMEM:
		return "ENOMEM";
	case EBADF:
		return "EBADF";
	case ENOSPC:
		return "ENOSPC";
	default:
		return "EOTHER";
	}
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Write a whole small file; returns 0 or -errno. */
static int write_file(const char *path, const char *value)
{
	int fd, ret;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = write_all(fd, value, strlen(value));
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

/* Read a file to its end, discarding the data; returns 0 or -errno. */
static int read_file(const char *path)
{
	char buf[4096];
	int fd, ret = 0;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
	}
	close(fd);
	return ret;
}

/*
 * Register one eventfd for @file via cgroup.event_control in @dir. The
 * eventfd and the target file stay open (the registration lives as long as
 * the eventfd). Returns 0 or -errno.
 */
static int register_event(const char *dir, const char *file, const char *args)
{
	char path[PATH_MAX], line[256];
	int efd, cfd, ret;

	efd = eventfd(0, EFD_CLOEXEC);
	if (efd < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	cfd = open(path, O_RDONLY | O_CLOEXEC);
	if (cfd < 0) {
		ret = -errno;
		close(efd);
		return ret;
	}
	if (args && *args)
		snprintf(line, sizeof(line), "%d %d %s", efd, cfd, args);
	else
		snprintf(line, sizeof(line), "%d %d", efd, cfd);
	snprintf(path, sizeof(path), "%s/cgroup.event_control", dir);
	ret = write_file(path, line);
	if (ret) {
		close(cfd);
		close(efd);
	}
	return ret;
}

/* The process's memory cgroup path from /proc/self/cgroup, or "-". */
static void own_cgroup(char *out, size_t cap)
{
	char line[512];
	FILE *f = fopen("/proc/self/cgroup", "re");

	snprintf(out, cap, "-");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *ctrl = strchr(line, ':');
		char *path = ctrl ? strchr(ctrl + 1, ':') : NULL;
		char *nl;

		if (!path)
			continue;
		*path++ = '\0';
		ctrl++;
		nl = strchr(path, '\n');
		if (nl)
			*nl = '\0';
		/* "memory" alone or in a comma-separated controller list */
		for (char *tok = strtok(ctrl, ","); tok;
		     tok = strtok(NULL, ",")) {
			if (!strcmp(tok, "memory")) {
				snprintf(out, cap, "%s", path);
				fclose(f);
				return;
			}
		}
	}
	fclose(f);
}

static int mark_kmsg(const char *mark)
{
	int fd, ret;

	fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = write_all(fd, mark, strlen(mark));
	close(fd);
	return ret;
}

/* Print each record now in /dev/kmsg; a lost-records EPIPE is reported. */
static int kmsg_dump(void)
{
	static char rec[KMSG_RECORD_MAX];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "twl-workload: open /dev/kmsg: %s\n",
			strerror(errno));
		return 2;
	}
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EPIPE) {
				/* records were overwritten before we read them */
				printf("workload op=kmsg-dump lost-records=1\n");
				continue;
			}
			if (errno == EAGAIN)
				break;
			fprintf(stderr, "twl-workload: read /dev/kmsg: %s\n",
				strerror(errno));
			close(fd);
			return 2;
		}
		if (n == 0)
			break;
		fwrite(rec, 1, (size_t)n, stdout);
		if (rec[n - 1] != '\n')
			putchar('\n');
	}
	close(fd);
	return 0;
}

static int move_self(const char *dir)
{
	char path[PATH_MAX], pid[32];
	int ret;

	if (mkdir(dir, 0755) && errno != EEXIST) {
		fprintf(stderr, "twl-workload: mkdir %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	ret = write_file(path, pid);
	if (ret) {
		fprintf(stderr, "twl-workload: moving into %s: %s\n", path,
			strerror(-ret));
		return -1;
	}
	return 0;
}

static int parse_count(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > MAX_COUNT)
		return -1;
	*out = v;
	return 0;
}

/* -u: a uid (also used as gid) to drop to, 0..65534; 0 or -1. */
static int parse_uid(const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v > 65534)
		return -1;
	*out = v;
	return 0;
}

/*
 * The options before ACTION into @o ("+": getopt stops at ACTION, so a VALUE
 * such as -1 is not taken for an option); 0, or 2 after saying why.
 */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int c;

	while ((c = getopt(argc, argv, "+c:n:N:m:su:e")) != -1) {
		switch (c) {
		case 'c':
			o->dir = optarg;
			break;
		case 'n':
			if (parse_count(optarg, &o->count)) {
				fprintf(stderr,
					"twl-workload: -n wants 1..%d, got '%s'\n",
					MAX_COUNT, optarg);
				return 2;
			}
			break;
		case 'N':
			o->comm = optarg;
			break;
		case 'm':
			o->mark = optarg;
			break;
		case 's':
			o->move = 0;
			break;
		case 'e':
			o->escapes = 1;
			break;
		case 'u':
			if (parse_uid(optarg, &o->uid)) {
				fprintf(stderr,
					"twl-workload: -u wants 0..65534, got '%s'\n",
					optarg);
				return 2;
			}
			break;
		default:
			usage();
			return 2;
		}
	}
	return 0;
}

/* The hex digit @c's value, or -1. */
static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/*
 * -e: decode \n, \t, \\ and \xHH (not \x00) in @in into @out (@cap bytes,
 * NUL-terminated); 0, or -1 for another escape or an overlong value.
 */
static int decode_escapes(const char *in, char *out, size_t cap)
{
	size_t o = 0;

	for (; *in; in++) {
		char c = *in;

		if (c == '\\') {
			c = *++in;
			if (c == 'n') {
				c = '\n';
			} else if (c == 't') {
				c = '\t';
			} else if (c == 'x' && hexval(in[1]) >= 0 &&
				   hexval(in[2]) >= 0) {
				c = (char)(hexval(in[1]) * 16 + hexval(in[2]));
				in += 2;
			} else if (c != '\\') {
				return -1;
			}
			if (!c)
				return -1;
		}
		if (o + 1 >= cap)
			return -1;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

/*
 * The @nargs arguments after o->action into o->file and o->value, checked
 * against what the action takes; 0, or 2 after saying why.
 */
static int parse_action_args(int nargs, char **args, struct opts *o)
{
	if (!strcmp(o->action, "write") || !strcmp(o->action, "mount")) {
		if (nargs != 2) {
			usage();
			return 2;
		}
		o->file = args[0];
		o->value = args[1];
		if (o->escapes ?
			    decode_escapes(o->value, o->data, sizeof(o->data)) :
			    (size_t)snprintf(o->data, sizeof(o->data), "%s",
					     o->value) >= sizeof(o->data)) {
			fprintf(stderr,
				"twl-workload: bad or overlong value '%s'\n",
				o->value);
			return 2;
		}
	} else if (!strcmp(o->action, "read")) {
		if (nargs != 1) {
			usage();
			return 2;
		}
		o->file = args[0];
	} else if (!strcmp(o->action, "event")) {
		if (nargs < 1 || nargs > 2) {
			usage();
			return 2;
		}
		o->file = args[0];
		o->value = nargs == 2 ? args[1] : "";
		if (o->count > MAX_EVENTS) {
			fprintf(stderr, "twl-workload: event: -n at most %d\n",
				MAX_EVENTS);
			return 2;
		}
	} else {
		fprintf(stderr, "twl-workload: unknown action '%s'\n",
			o->action);
		usage();
		return 2;
	}
	return 0;
}

/*
 * FILE must name something inside DIR, and DIR/FILE must fit a path; 0, or
 * 2 after saying why.
 */
static int check_file(const struct opts *o)
{
	if (strchr(o->file, '/') ||
	    strlen(o->dir) + strlen(o->file) + 2 > PATH_MAX) {
		fprintf(stderr,
			"twl-workload: FILE must be a plain name inside DIR: '%s'\n",
			o->file);
		return 2;
	}
	return 0;
}

/*
 * Anything but a plain read changes kernel state: refuse it outside a
 * twilight guest; 0, or 2 after saying why.
 */
static int guest_only(const struct opts *o)
{
	if ((strcmp(o->action, "read") || (o->move && strcmp(o->dir, "."))) &&
	    access(GUEST_MARKER, F_OK)) {
		fprintf(stderr,
			"twl-workload: %s refused: %s missing, this is not a twilight guest (run it via kernel/guest-run)\n",
			o->action, GUEST_MARKER);
		return 2;
	}
	return 0;
}

/*
 * Become the process the log line names: set the name, move into DIR, note
 * the resulting @comm and memory cgroup @cg, then drop to -u (after moving,
 * which needs root). 0, or 2 after saying what failed.
 */
static int setup_process(const struct opts *o, char *comm, size_t comm_cap,
			 char *cg, size_t cg_cap)
{
	if (o->comm && prctl(PR_SET_NAME, o->comm, 0, 0, 0)) {
		fprintf(stderr, "twl-workload: prctl(PR_SET_NAME): %s\n",
			strerror(errno));
		return 2;
	}
	if (prctl(PR_GET_NAME, comm, 0, 0, 0))
		snprintf(comm, comm_cap, "?");
	if (o->move && strcmp(o->dir, ".") && move_self(o->dir))
		return 2;
	own_cgroup(cg, cg_cap);
	if (o->uid >= 0 && (setgid((gid_t)o->uid) || setuid((uid_t)o->uid))) {
		fprintf(stderr, "twl-workload: -u %ld: %s\n", o->uid,
			strerror(errno));
		return 2;
	}
	return 0;
}

/*
 * One mount of @fstype on @dir with @opts, unmounted again, then a pause
 * past the next printk clock tick (see "mount" above); 0 or -errno.
 */
static int mount_once(const char *dir, const char *fstype, const char *opts)
{
	const struct timespec gap = { .tv_nsec = 50 * 1000 * 1000 };
	int ret = 0;

	if (mount("none", dir, fstype, 0, opts))
		ret = -errno;
	else if (umount(dir))
		ret = -errno;
	nanosleep(&gap, NULL);
	return ret;
}

/* Do the action o->count times on @path, counting successes and failures. */
static void run_action(const struct opts *o, const char *path, struct tally *t)
{
	for (long i = 0; i < o->count; i++) {
		int ret;

		if (!strcmp(o->action, "write"))
			ret = write_file(path, o->data);
		else if (!strcmp(o->action, "read"))
			ret = read_file(path);
		else if (!strcmp(o->action, "mount"))
			ret = mount_once(o->dir, o->file, o->value);
		else
			ret = register_event(o->dir, o->file, o->value);
		if (ret) {
			t->failed++;
			t->last_err = -ret;
		} else {
			t->ok++;
		}
	}
}

/* -m: the marker record after the action; 0, or 2 after saying why. */
static int write_marker(const char *mark)
{
	int ret = mark_kmsg(mark);

	if (ret) {
		fprintf(stderr,
			"twl-workload: writing marker to /dev/kmsg: %s\n",
			strerror(-ret));
		return 2;
	}
	return 0;
}

/* The one log line (format in the header comment; awk scripts parse it). */
static void print_log(const struct opts *o, const char *cg, const char *comm,
		      const struct tally *t)
{
	printf("workload op=%s file=%s dir=%s cgroup=%s value=%s n=%ld ok=%ld failed=%ld errno=%s comm=%s pid=%d uid=%u\n",
	       o->action, o->file, o->dir, cg,
	       o->value && *o->value ? o->value : "-", o->count, t->ok,
	       t->failed, errname(t->last_err), comm, (int)getpid(),
	       (unsigned)getuid());
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct opts o = { .dir = ".", .count = 1, .move = 1, .uid = -1 };
	char path[PATH_MAX], cg[256], comm[32] = "";
	struct tally t = { 0 };

	if (parse_opts(argc, argv, &o))
		return 2;
	if (optind >= argc) {
		usage();
		return 2;
	}
	o.action = argv[optind++];
	if (!strcmp(o.action, "kmsg-dump"))
		return kmsg_dump();
	if (parse_action_args(argc - optind, argv + optind, &o) ||
	    check_file(&o) || guest_only(&o) ||
	    setup_process(&o, comm, sizeof(comm), cg, sizeof(cg)))
		return 2;
	snprintf(path, sizeof(path), "%s/%s", o.dir, o.file);
	run_action(&o, path, &t);
	if (o.mark && write_marker(o.mark))
		return 2;
	print_log(&o, cg, comm, &t);
	return t.failed ? 1 : 0;
}
