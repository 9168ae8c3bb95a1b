// SPDX-License-Identifier: GPL-2.0
/*
 * selinux-probe: runs inside the guest as root and reports what the kernel does with
 * SELinux's runtime-disable node, as KTAP. Each argument is one step, run in order:
 *
 *   state:LABEL            lsm list, selinuxfs registered/mounted, attr/current, enforce
 *   mount                  mount selinuxfs on /sys/fs/selinux if it is not (libselinux
 *                          unmounts it after writing "disable"); reports if it could
 *   write:LABEL:DATA[:OFF[:UID]]
 *                          write DATA to /sys/fs/selinux/disable at offset OFF as UID;
 *                          DATA "@N" means N bytes of '1', "@page" one page of them
 *                          (the selinuxfs handlers refuse count >= PAGE_SIZE: 4 KiB on
 *                          most arches, 64 KiB on ppc64le), "-" means empty
 *   wnode:NODE:LABEL:DATA[:OFF[:UID]]
 *                          the same, to /sys/fs/selinux/NODE (e.g. checkreqprot)
 *   read:LABEL:NODE        first line of /sys/fs/selinux/NODE
 *   rie:LABEL[:CONTEXT]    in a child (in CONTEXT if given, set through attr/current):
 *                          does SELinux check execute for PROT_READ under the
 *                          READ_IMPLIES_EXEC personality? (checkreqprot=1 says no)
 *   config:MODE            set SELINUX=MODE in /etc/selinux/config
 *   load:LABEL[:ARGS]      run /sbin/load_policy ARGS ("-i" or nothing), report its status
 *   concurrent:LABEL       4 writers on the node while load_policy runs
 *   klog:LABEL:TEXT        how many kernel log lines contain TEXT
 *   hooks:PTDUMP           for each LSM hook table in /proc/kallsyms: is its page RW or ro
 *                          in the kernel's page-table dump PTDUMP (a debugfs file);
 *                          "hooks:" with no PTDUMP: the arch has no dump (no-dump)
 *   cmd:LABEL:PROGRAM [ARG...]  run PROGRAM with the space-separated ARGs, report its
 *                          status and first line
 *
 * Observations are KTAP diagnostic lines "# obs: NAME=VALUE"; each step is one KTAP test,
 * "not ok" only when the probe itself could not observe (the host judges the values).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define SELINUXFS "/sys/fs/selinux"
#define NODE SELINUXFS "/disable"

static int step_no;
/* The node write steps go to: "disable", unless a wnode step names another. */
static const char *node_path = NODE;

static void obs(const char *name, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void obs(const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("# obs: %s=", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void result(int ok, const char *step)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++step_no, step);
	fflush(stdout);
}

static const char *errname(int e)
{
	switch (e) {
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case ENOMEM: return "ENOMEM";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case ENODEV: return "ENODEV";
	default: return strerror(e);
	}
}

/*
 * First line of a file, newline and trailing NULs stripped: "absent" if it cannot be
 * opened, "error:ERRNO" if reading fails (attr/current without an LSM answers EINVAL).
 */
static void read_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0) {
		snprintf(buf, len, "absent");
		return;
	}
	n = read(fd, buf, len - 1);
	if (n < 0) {
		snprintf(buf, len, "error:%s", errname(errno));
		close(fd);
		return;
	}
	close(fd);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (!buf[0])
		snprintf(buf, len, "empty");
}

static int file_has_word(const char *path, const char *word)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, word) != NULL;
	fclose(f);
	return found;
}

static int selinuxfs_mounted(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/mounts", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strncmp(line, "selinuxfs ", 10) == 0;
	fclose(f);
	return found;
}

static void step_state(const char *label)
{
	char buf[256], name[64];

	read_line("/sys/kernel/security/lsm", buf, sizeof(buf));
	snprintf(name, sizeof(name), "%s.lsm", label);
	obs(name, "%s", buf);
	snprintf(name, sizeof(name), "%s.selinuxfs_registered", label);
	obs(name, "%s", file_has_word("/proc/filesystems", "selinuxfs") ? "yes" : "no");
	snprintf(name, sizeof(name), "%s.selinuxfs_mounted", label);
	obs(name, "%s", selinuxfs_mounted() ? "yes" : "no");
	read_line("/proc/self/attr/current", buf, sizeof(buf));
	snprintf(name, sizeof(name), "%s.attr_current", label);
	obs(name, "%s", buf);
	snprintf(name, sizeof(name), "%s.enforce", label);
	if (selinuxfs_mounted()) {
		read_line(SELINUXFS "/enforce", buf, sizeof(buf));
		obs(name, "%s", buf);
	} else {
		obs(name, "unmounted");
	}
	result(1, label);
}

static void step_mount(void)
{
	const char *res = "already";

	if (!selinuxfs_mounted()) {
		if (mount("selinuxfs", SELINUXFS, "selinuxfs", 0, NULL) == 0)
			res = "mounted";
		else
			res = errname(errno);
	}
	obs("mount", "%s", res);
	result(1, "mount");
}

/* The result of one write: "count" when the whole buffer was taken, else the errno. */
static const char *do_write(const char *data, size_t len, off_t off)
{
	static char buf[64];
	ssize_t n;
	int fd = open(node_path, O_WRONLY);

	if (fd < 0)
		return errname(errno);
	n = pwrite(fd, data, len, off);
	if (n < 0)
		snprintf(buf, sizeof(buf), "%s", errname(errno));
	else if ((size_t)n == len)
		snprintf(buf, sizeof(buf), "count");
	else
		snprintf(buf, sizeof(buf), "short:%zd", n);
	close(fd);
	return buf;
}

static void step_write(char *spec)
{
	char *label = strsep(&spec, ":");
	char *data = strsep(&spec, ":");
	char *off_s = strsep(&spec, ":");
	char *uid_s = strsep(&spec, ":");
	char *payload;
	size_t len;
	off_t off = off_s ? atol(off_s) : 0;
	char name[96];
	int pipefd[2];
	char res[64] = "";
	pid_t pid;

	if (!label || !data) {
		result(0, "write: bad step");
		return;
	}
	if (data[0] == '@') {
		if (strcmp(data, "@page") == 0)
			len = (size_t)sysconf(_SC_PAGESIZE);
		else
			len = strtoul(data + 1, NULL, 10);
		payload = malloc(len + 1);
		memset(payload, '1', len);
		payload[len] = '\0';
	} else if (strcmp(data, "-") == 0) {
		payload = strdup("");
		len = 0;
	} else {
		payload = strdup(data);
		len = strlen(payload);
	}
	snprintf(name, sizeof(name), "write.%s", label);
	if (!uid_s) {
		obs(name, "%s", do_write(payload, len, off));
		free(payload);
		result(1, name);
		return;
	}
	/* As another user: in a child that drops to UID, so the probe stays root. */
	if (pipe(pipefd) < 0) {
		result(0, name);
		return;
	}
	pid = fork();
	if (pid == 0) {
		const char *r;
		uid_t uid = atoi(uid_s);

		close(pipefd[0]);
		if (setgid(uid) < 0 || setuid(uid) < 0)
			r = "setuid-failed";
		else
			r = do_write(payload, len, off);
		if (write(pipefd[1], r, strlen(r)) < 0)
			_exit(1);
		_exit(0);
	}
	close(pipefd[1]);
	if (read(pipefd[0], res, sizeof(res) - 1) < 0)
		res[0] = '\0';
	close(pipefd[0]);
	waitpid(pid, NULL, 0);
	obs(name, "%s", res[0] ? res : "no-answer");
	free(payload);
	result(res[0] != '\0', name);
}

static void step_read(char *spec)
{
	char *label = strsep(&spec, ":");
	char path[PATH_MAX], buf[256], name[96];

	if (!label || !spec || strchr(spec, '/')) {
		result(0, "read: bad step");
		return;
	}
	snprintf(path, sizeof(path), SELINUXFS "/%s", spec);
	read_line(path, buf, sizeof(buf));
	snprintf(name, sizeof(name), "read.%s", label);
	obs(name, "%s", buf);
	result(1, name);
}

/* Sum of the per-CPU "lookups" column of the AVC statistics; -1 if unreadable. */
static long avc_lookups(void)
{
	FILE *f = fopen(SELINUXFS "/avc/cache_stats", "r");
	char line[256];
	unsigned long v;
	long sum = 0;

	if (!f)
		return -1;
	/* The header line does not parse as a number and is skipped. */
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lu", &v) == 1)
			sum += v;
	fclose(f);
	return sum;
}

/* What /proc/self/maps says of the mapping holding addr: "r--p", "r-xp", ... */
static void map_perms(const void *addr, char *out, size_t len)
{
	unsigned long s, e, a = (unsigned long)addr;
	char line[512], perms[8];
	FILE *f = fopen("/proc/self/maps", "r");

	snprintf(out, len, "unmapped");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) == 3 && a >= s && a < e) {
			snprintf(out, len, "%s", perms);
			break;
		}
	}
	if (f)
		fclose(f);
}

#define RIE_ROUNDS 256

/*
 * AVC lookups done while mapping RIE_ROUNDS anonymous pages PROT_READ (or, with
 * mprotect, while turning RIE_ROUNDS read-write pages PROT_READ). Without an execute
 * check SELinux looks nothing up for these, so the count is noise from other tasks;
 * with one (execmem) it grows by about RIE_ROUNDS. Works with or without a policy.
 */
static long rie_lookups(int use_mprotect)
{
	static void *pages[RIE_ROUNDS];
	long before, after;
	int i;

	for (i = 0; use_mprotect && i < RIE_ROUNDS; i++)
		pages[i] = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	before = avc_lookups();
	for (i = 0; i < RIE_ROUNDS; i++) {
		if (use_mprotect) {
			if (pages[i] != MAP_FAILED)
				mprotect(pages[i], 4096, PROT_READ);
		} else {
			pages[i] = mmap(NULL, 4096, PROT_READ,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		}
	}
	after = avc_lookups();
	for (i = 0; i < RIE_ROUNDS; i++)
		if (pages[i] != MAP_FAILED)
			munmap(pages[i], 4096);
	return before < 0 || after < 0 ? -1 : after - before;
}

/* The child of step_rie: prints its own observations, then exits. */
static void rie_child(const char *label, const char *context)
{
	long plain_mmap, plain_mprotect, rie_mmap, rie_mprotect;
	char name[96], buf[256];
	void *p, *q;

	if (context) {
		int fd = open("/proc/self/attr/current", O_WRONLY);
		const char *r = "ok";

		if (fd < 0 || write(fd, context, strlen(context)) < 0)
			r = errname(errno);
		if (fd >= 0)
			close(fd);
		snprintf(name, sizeof(name), "rie.%s.setcon", label);
		obs(name, "%s", r);
	}
	read_line("/proc/self/attr/current", buf, sizeof(buf));
	snprintf(name, sizeof(name), "rie.%s.context", label);
	obs(name, "%s", buf);

	/* The same work without the personality first: the noise floor. */
	plain_mmap = rie_lookups(0);
	plain_mprotect = rie_lookups(1);

	q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (personality(READ_IMPLIES_EXEC) < 0) {
		snprintf(name, sizeof(name), "rie.%s.personality", label);
		obs(name, "%s", errname(errno));
		fflush(stdout);
		_exit(1);
	}
	/* What the kernel applies (not SELinux's business): r-xp under the personality. */
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		snprintf(buf, sizeof(buf), "%s", errname(errno));
	else
		map_perms(p, buf, sizeof(buf));
	snprintf(name, sizeof(name), "rie.%s.mmap", label);
	obs(name, "%s", buf);
	if (q == MAP_FAILED || mprotect(q, 4096, PROT_READ) < 0)
		snprintf(buf, sizeof(buf), "%s", errname(errno));
	else
		map_perms(q, buf, sizeof(buf));
	snprintf(name, sizeof(name), "rie.%s.mprotect", label);
	obs(name, "%s", buf);
	rie_mmap = rie_lookups(0);
	rie_mprotect = rie_lookups(1);
	/*
	 * The raw counts vary from boot to boot (other tasks look things up too) and need
	 * CONFIG_SECURITY_SELINUX_AVC_STATS (-1 without): a comment, not an observation.
	 */
	printf("# rie %s: AVC lookups for %d mappings, plain/personality: mmap %ld/%ld, mprotect %ld/%ld\n",
	       label, RIE_ROUNDS, plain_mmap, rie_mmap, plain_mprotect, rie_mprotect);
	fflush(stdout);
	_exit(0);
}

/* Kernel log records holding both a and b (b may be NULL); -1 if unreadable. */
static int klog_count(const char *a, const char *b)
{
	char rec[8192];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	int count = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	/* One record per read; stop at EAGAIN (end of buffer). EPIPE: overwritten, go on. */
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (strstr(rec, a) && (!b || strstr(rec, b)))
			count++;
	}
	close(fd);
	return count;
}

/*
 * checkreqprot=1 made SELinux check the protection asked for (PROT_READ) instead of
 * the one applied (PROT_READ|PROT_EXEC under READ_IMPLIES_EXEC). Where it is in force
 * the lookup counts stay at the noise floor and no execmem denial is logged; where it
 * is not, each mapping costs an execmem check, which a domain without execmem sees
 * denied (permissive: logged once, then cached as granted).
 */
static void step_rie(char *spec)
{
	char *label = strsep(&spec, ":");
	char name[96], pidword[32];
	int status = -1;
	pid_t pid;

	if (!label || !*label) {
		result(0, "rie: bad step");
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		rie_child(label, spec && *spec ? spec : NULL);
	if (pid < 0 || waitpid(pid, &status, 0) < 0) {
		result(0, "rie");
		return;
	}
	snprintf(pidword, sizeof(pidword), " pid=%d ", (int)pid);
	/*
	 * The observation: execmem denials logged for the child. The probe runs as kernel_t,
	 * which Debian's policy does not allow execmem; in permissive mode the first denial is
	 * logged and the AVC then grants it, so in a fresh boot the first rie step logs 1 where
	 * SELinux checked execute and 0 where checkreqprot=1 kept it from asking.
	 */
	snprintf(name, sizeof(name), "rie.%s.execmem_denials", label);
	obs(name, "%d", klog_count("{ execmem }", pidword));
	snprintf(name, sizeof(name), "rie.%s", label);
	result(WIFEXITED(status) && WEXITSTATUS(status) == 0, name);
}

static void step_config(const char *mode)
{
	char cmd[256];
	int rc;

	snprintf(cmd, sizeof(cmd), "sed -i 's/^SELINUX=.*/SELINUX=%s/' /etc/selinux/config", mode);
	rc = system(cmd);
	obs("config", "%s", rc == 0 ? mode : "failed");
	result(rc == 0, "config");
}

/* Run a program, return its exit status (or 128+signal), first output line in line. */
static int run(char *const argv[], char *line, size_t len)
{
	int pipefd[2], status;
	ssize_t n;
	pid_t pid;

	line[0] = '\0';
	if (pipe(pipefd) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pipefd[1]);
	n = read(pipefd[0], line, len - 1);
	line[n > 0 ? n : 0] = '\0';
	line[strcspn(line, "\n")] = '\0';
	/* Drain the rest so the child never blocks on a full pipe. */
	{
		char sink[4096];

		while (read(pipefd[0], sink, sizeof(sink)) > 0)
			;
	}
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void step_load(char *spec)
{
	char *label = strsep(&spec, ":");
	char *args = spec;
	char *argv[] = { "/sbin/load_policy", args, NULL };
	char line[256], name[96];
	int rc;

	if (!args || !args[0])
		argv[1] = NULL;
	rc = run(argv, line, sizeof(line));
	snprintf(name, sizeof(name), "load.%s", label);
	obs(name, "%d", rc);
	result(rc >= 0, name);
}

static void step_cmd(char *spec)
{
	char *label = strsep(&spec, ":");
	char *argv[9] = { NULL };
	char line[256], name[96];
	int rc, n = 0;

	while (spec && n < 8) {
		char *w = strsep(&spec, " ");

		if (*w)
			argv[n++] = w;
	}
	if (!n) {
		result(0, "cmd: bad step");
		return;
	}
	rc = run(argv, line, sizeof(line));
	snprintf(name, sizeof(name), "cmd.%s", label);
	obs(name, "%d %s", rc, line);
	result(rc >= 0, name);
}

static void step_concurrent(const char *label)
{
	char *argv[] = { "/sbin/load_policy", NULL };
	char line[256], name[96], seen[256] = "";
	int pipefd[2], i, rc;
	pid_t writers[4];
	FILE *in;

	if (pipe(pipefd) < 0) {
		result(0, "concurrent");
		return;
	}
	for (i = 0; i < 4; i++) {
		writers[i] = fork();
		if (writers[i] == 0) {
			/* Write until the load is over, at least three times, at most 1000. */
			int k;

			close(pipefd[0]);
			for (k = 0; k < 1000; k++) {
				dprintf(pipefd[1], "%s\n", do_write("1", 1, 0));
				if (k >= 2 && access("/run/probe-stop", F_OK) == 0)
					break;
			}
			_exit(0);
		}
	}
	close(pipefd[1]);
	rc = run(argv, line, sizeof(line));
	if (creat("/run/probe-stop", 0600) < 0)
		perror("creat");
	in = fdopen(pipefd[0], "r");
	while (in && fgets(line, sizeof(line), in)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strstr(seen, line) && strlen(seen) + strlen(line) + 2 < sizeof(seen)) {
			if (seen[0])
				strcat(seen, ",");
			strcat(seen, line);
		}
	}
	if (in)
		fclose(in);
	for (i = 0; i < 4; i++)
		waitpid(writers[i], NULL, 0);
	unlink("/run/probe-stop");
	snprintf(name, sizeof(name), "concurrent.%s.writes", label);
	obs(name, "%s", seen[0] ? seen : "none");
	snprintf(name, sizeof(name), "concurrent.%s.load", label);
	obs(name, "%d", rc);
	result(1, "concurrent");
}

static void step_klog(char *spec)
{
	char *label = strsep(&spec, ":");
	char name[96];
	int count = spec ? klog_count(spec, NULL) : -1;

	if (count < 0) {
		result(0, "klog");
		return;
	}
	snprintf(name, sizeof(name), "klog.%s", label);
	obs(name, "%d", count);
	result(1, name);
}

struct range {
	unsigned long start, end;
	int rw;
};

/*
 * The kernel's own page-table dump: "0xSTART-0xEND  SIZE ... RW|ro ..." per line (x86,
 * arm, arm64); s390's says "RO" where they say "ro"; 64-bit powerpc's prints read and
 * write as two columns, "r" and "w" (blank when clear), so its read-only page is "r"
 * without "w". (32-bit powerpc's says "rw" for writable and uses a lone "w" for
 * write-through: "rw" is read as RW first, but its read-only pages are not told apart.)
 */
static struct range *read_page_tables(const char *path, size_t *count)
{
	FILE *f = fopen(path, "r");
	struct range *r = NULL;
	size_t n = 0, cap = 0;
	char line[512];

	if (!f) {
		if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) == 0)
			f = fopen(path, "r");
		if (!f)
			return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		char *tok, *save;
		int rw = -1, col_r = 0, col_w = 0;

		if (sscanf(line, "0x%lx-0x%lx", &s, &e) != 2)
			continue;
		for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
			if (strcmp(tok, "RW") == 0 || strcmp(tok, "rw") == 0)
				rw = 1;
			else if (strcmp(tok, "ro") == 0 || strcmp(tok, "RO") == 0)
				rw = 0;
			else if (strcmp(tok, "r") == 0)
				col_r = 1;
			else if (strcmp(tok, "w") == 0)
				col_w = 1;
		}
		if (rw < 0 && (col_r || col_w))
			rw = col_w;
		if (rw < 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			r = realloc(r, cap * sizeof(*r));
		}
		r[n].start = s;
		r[n].end = e;
		r[n].rw = rw;
		n++;
	}
	fclose(f);
	*count = n;
	return r;
}

/*
 * The LSM tables: the shared heads and blob sizes, and each LSM's "<lsm>..._hooks" and
 * "*_blob_sizes". Other "*_hooks" symbols (arm64's sys64_hooks, netfilter's) are not LSM's.
 */
static int is_hook_table(const char *sym)
{
	static const char *const lsms[] = {
		"selinux", "smack", "tomoyo", "apparmor", "landlock", "yama", "loadpin",
		"lockdown", "bpf_lsm", "capability", "safesetid", "integrity", "ima", "evm",
	};
	size_t l = strlen(sym), i;

	/* 6.1's hook lists; 6.12 calls hooks through static_calls_table instead. */
	if (strcmp(sym, "security_hook_heads") == 0 || strcmp(sym, "blob_sizes") == 0 ||
	    strcmp(sym, "static_calls_table") == 0)
		return 1;
	if (l > 11 && strcmp(sym + l - 11, "_blob_sizes") == 0)
		return 1;
	if (l <= 6 || strcmp(sym + l - 6, "_hooks") != 0)
		return 0;
	for (i = 0; i < sizeof(lsms) / sizeof(lsms[0]); i++)
		if (strncmp(sym, lsms[i], strlen(lsms[i])) == 0)
			return 1;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void step_hooks(const char *ptdump)
{
	char *writable[256];
	int nw = 0, k;
	size_t nr = 0, i;
	/* PROBE_KALLSYMS: a captured list instead, for the host test of this parser. */
	const char *ksyms = getenv("PROBE_KALLSYMS");
	struct range *r;
	FILE *f;
	char line[512], sym[256], type, name[300];
	unsigned long addr;
	int rw_count = 0, ro_count = 0, unknown = 0;
	char rw_list[1024] = "";

	/*
	 * No dump named: the arch has none (MIPS runs the kernel from an unmapped segment, so
	 * no page table covers the tables and nothing can make them read-only). Said as a
	 * value that the expectations of arches with a dump ("none" or a list) never take.
	 */
	if (ptdump && !*ptdump) {
		obs("hooks.writable", "no-dump");
		obs("hooks.summary", "no page-table dump on this arch");
		result(1, "hooks");
		return;
	}
	/* A bare "hooks" names nothing at all: a scenario's mistake, not an arch's fact. */
	r = ptdump ? read_page_tables(ptdump, &nr) : NULL;
	f = fopen(ksyms ? ksyms : "/proc/kallsyms", "r");
	if (!r || !f) {
		obs("hooks", "unobservable");
		result(0, "hooks");
		if (f)
			fclose(f);
		free(r);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		int where = -1;

		if (sscanf(line, "%lx %c %255s", &addr, &type, sym) != 3)
			continue;
		/* Data objects only (d, D, r, R, b, B); the lsm list is in security/. */
		if (!strchr("dDrRbB", type) || !is_hook_table(sym))
			continue;
		if (addr == 0) {
			unknown++;
			continue;
		}
		for (i = 0; i < nr; i++) {
			if (addr >= r[i].start && addr < r[i].end) {
				where = r[i].rw;
				break;
			}
		}
		snprintf(name, sizeof(name), "hooks.%s", sym);
		obs(name, "%s", where < 0 ? "unmapped" : where ? "RW" : "ro");
		if (where == 1) {
			rw_count++;
			if (nw < 256)
				writable[nw++] = strdup(sym);
		} else if (where == 0) {
			ro_count++;
		} else {
			unknown++;
		}
	}
	fclose(f);
	free(r);
	/* Sorted by name, so that the list does not depend on link order. */
	qsort(writable, nw, sizeof(writable[0]), cmp_str);
	for (k = 0; k < nw; k++) {
		if (strlen(rw_list) + strlen(writable[k]) + 2 < sizeof(rw_list)) {
			if (rw_list[0])
				strcat(rw_list, ",");
			strcat(rw_list, writable[k]);
		}
		free(writable[k]);
	}
	obs("hooks.writable", "%s", rw_list[0] ? rw_list : "none");
	obs("hooks.summary", "%d ro, %d RW, %d unknown", ro_count, rw_count, unknown);
	/* Zero addresses mean kptr_restrict hid them: nothing was observed. */
	result(ro_count + rw_count > 0, "hooks");
}

int main(int argc, char **argv)
{
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("KTAP version 1\n1..%d\n", argc - 1);
	for (i = 1; i < argc; i++) {
		char *arg = strdup(argv[i]);
		char *rest = arg;
		char *verb = strsep(&rest, ":");

		if (strcmp(verb, "state") == 0)
			step_state(rest ? rest : "state");
		else if (strcmp(verb, "mount") == 0)
			step_mount();
		else if (strcmp(verb, "write") == 0 && rest)
			step_write(rest);
		else if (strcmp(verb, "wnode") == 0 && rest && strchr(rest, ':')) {
			static char path[PATH_MAX];
			char *node = strsep(&rest, ":");

			if (strchr(node, '/')) {
				result(0, argv[i]);
			} else {
				snprintf(path, sizeof(path), SELINUXFS "/%s", node);
				node_path = path;
				step_write(rest);
				node_path = NODE;
			}
		} else if (strcmp(verb, "read") == 0 && rest)
			step_read(rest);
		else if (strcmp(verb, "rie") == 0 && rest)
			step_rie(rest);
		else if (strcmp(verb, "config") == 0 && rest)
			step_config(rest);
		else if (strcmp(verb, "load") == 0 && rest)
			step_load(rest);
		else if (strcmp(verb, "concurrent") == 0)
			step_concurrent(rest ? rest : "c");
		else if (strcmp(verb, "klog") == 0 && rest)
			step_klog(rest);
		else if (strcmp(verb, "hooks") == 0)
			step_hooks(rest);
		else if (strcmp(verb, "cmd") == 0 && rest)
			step_cmd(rest);
		else
			result(0, argv[i]);
		free(arg);
	}
	return 0;
}
