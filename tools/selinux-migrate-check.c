// SPDX-License-Identifier: GPL-2.0
/*
 * selinux-migrate-check: where does this machine stand with SELinux today, and what will
 * it do on a kernel without SELinux runtime disable (Linux 6.4+, or 6.1 with the
 * backport)? Reads the live system (or a copy of it under --root) and prints one screen.
 *
 *   selinux-migrate-check [--root DIR] [--target-config FILE | --target-kernel VER]
 *                         [--json | --summary]
 *
 * --target-config FILE  the new kernel's config (plain or .gz); it must carry its
 *                       "# Linux/<arch> <version> Kernel Configuration" header unless it
 *                       is a config of this 6.1 backport, and CONFIG_LSM if it builds SELinux.
 * --target-kernel VER   the running kernel's config built as VER: "6.4" or later (no switch,
 *                       the disable node accepts), "6.1-patched" (the backport, rejecting
 *                       by default), "6.1-patched-accept", or an older version such as
 *                       "6.1" (no runtime disable: the node rejects).
 * Without either, the target is this kernel's config without runtime disable: the backport's
 * own answer if the config has it, else upstream's (accept).
 *
 * --summary prints one line,
 * "today: STATE; new kernel: STATE; action: yes|no[; freeze][; checkreqprot 1 -> 0]".
 * --json prints one object; on exit 2 it prints {"error": "..."}.
 * Exit: 0 nothing to do, 1 action needed, 2 an input could not be read or made no sense
 * (one line on stderr naming it). It refuses rather than guesses.
 *
 * It models what decides the outcome: the kernel's command line parser (quotes, a bare "--",
 * the last occurrence wins, kstrtoul base 0), the LSM order (CONFIG_LSM, lsm=, security=,
 * LSMs that are not built are skipped, exclusive LSMs), libselinux 3.4's reading of
 * /etc/selinux/config and of enforcing= (selinux_getenforcemode, selinux_init_load_policy),
 * systemd's freeze when a policy load fails with enforcing requested, and checkreqprot
 * (CONFIG_SECURITY_SELINUX_CHECKREQPROT_VALUE, checkreqprot=, the node; always 0 from 6.4).
 *
 * Files under --root are opened with every symlink resolved inside the root, only regular
 * files are read and each read is bounded; no program from the tree is run. A gzip'd
 * config is fed to "gzip -dc" (from the caller's PATH) on its standard input, with no shell.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define __printf(a, b)	__attribute__((format(printf, a, b)))
#define __noreturn	__attribute__((noreturn))
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define MAXV		1024
#define MAX_BIG		(4 << 20)	/* configs (uncompressed), /proc/mounts */
#define MAX_SMALL	(256 << 10)	/* everything else */
#define MAX_LINKS	40
#define MAX_DEPTH	64

/* Our own error codes beside errno values. */
#define E_NOTREG	10001
#define E_TOOBIG	10002
#define E_GZIP		10003

static const char *root = "";
static int rootfd = -1;
static int json, summary;

/* ------------------------------------------------------------------ output */

/* Length of the UTF-8 sequence at s (at most n bytes) and its code point; 0 if invalid. */
static size_t utf8_next(const unsigned char *s, size_t n, unsigned int *cp)
{
	unsigned int c = s[0], min, v;
	size_t len, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0) {
		len = 2; v = c & 0x1f; min = 0x80;
	} else if ((c & 0xf0) == 0xe0) {
		len = 3; v = c & 0x0f; min = 0x800;
	} else if ((c & 0xf8) == 0xf0) {
		len = 4; v = c & 0x07; min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

/* Control characters, C0 and C1, and DEL: what a terminal may act on. */
static int is_control(unsigned int cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp < 0xa0);
}

/* Text from the tree, for a terminal: controls and invalid bytes become '?'. */
static void put_text(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), l;
	unsigned int cp;

	while (n) {
		l = utf8_next(p, n, &cp);
		if (!l || is_control(cp)) {
			fputc('?', f);
			l = l ? l : 1;
		} else {
			fwrite(p, 1, l, f);
		}
		p += l;
		n -= l;
	}
}

/* A JSON string: controls escaped, invalid bytes as U+FFFD. */
static void put_json(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), l;
	unsigned int cp;

	fputc('"', f);
	while (n) {
		l = utf8_next(p, n, &cp);
		if (!l) {
			fputs("\\ufffd", f);
			l = 1;
		} else if (cp == '"' || cp == '\\') {
			fprintf(f, "\\%c", (char)cp);
		} else if (is_control(cp)) {
			fprintf(f, "\\u%04x", cp);
		} else {
			fwrite(p, 1, l, f);
		}
		p += l;
		n -= l;
	}
	fputc('"', f);
}

/* printf for the text report: the format is ours and printed as is, %s arguments are not. */
static void emit(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			putchar(*fmt);
			continue;
		}
		fmt++;
		if (*fmt == 's')
			put_text(stdout, va_arg(ap, const char *));
		else if (*fmt == 'd')
			printf("%d", va_arg(ap, int));
		else if (*fmt == '%')
			putchar('%');
		else
			break;
	}
	va_end(ap);
}

static void fail(const char *fmt, ...) __printf(1, 2) __noreturn;
static void fail(const char *fmt, ...)
{
	char msg[2 * MAXV];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fflush(stdout);
	if (json) {
		fputs("{\"error\": ", stdout);
		put_json(stdout, msg);
		fputs("}\n", stdout);
		fflush(stdout);
	}
	fputs("selinux-migrate-check: error: ", stderr);
	put_text(stderr, msg);
	fputc('\n', stderr);
	exit(2);
}

static const char *err_str(int e)
{
	switch (e) {
	case E_NOTREG:
		return "not a regular file";
	case E_TOOBIG:
		return "too large";
	case E_GZIP:
		return "gzip -dc failed (truncated or not gzip data)";
	default:
		return strerror(e);
	}
}

/* ------------------------------------------------------------------ reading files */

static char *path_of(const char *p)
{
	static char buf[4][PATH_MAX + 64];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s%s", root, p);
	return buf[i];
}

/*
 * Open rel ("/proc/cmdline") under the root, resolving every symlink inside the root as
 * openat2(RESOLVE_IN_ROOT) would: an absolute target restarts at the root and ".." stops
 * there. Each step uses O_NOFOLLOW, so a symlink swapped in meanwhile fails the open.
 * Only a regular file is opened. Returns an fd or -errno.
 */
static int open_in_root(const char *rel)
{
	char pend[2 * PATH_MAX], tmp[2 * PATH_MAX], comp[NAME_MAX + 1], lnk[PATH_MAX];
	int stack[MAX_DEPTH], top = 0, links = 0, fd = -1, e = 0, last;
	struct stat st;
	const char *p;
	size_t n;
	ssize_t l;

	stack[0] = rootfd;
	if (snprintf(pend, sizeof(pend), "%s", rel) >= (int)sizeof(pend))
		return -ENAMETOOLONG;
	p = pend;
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p) {
			e = EISDIR;
			break;
		}
		n = strcspn(p, "/");
		if (n > NAME_MAX) {
			e = ENAMETOOLONG;
			break;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		while (*p == '/')
			p++;
		last = !*p;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			if (top)
				close(stack[top--]);
			continue;
		}
		if (fstatat(stack[top], comp, &st, AT_SYMLINK_NOFOLLOW)) {
			e = errno;
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			if (++links > MAX_LINKS) {
				e = ELOOP;
				break;
			}
			l = readlinkat(stack[top], comp, lnk, sizeof(lnk) - 1);
			if (l < 0) {
				e = errno;
				break;
			}
			lnk[l] = '\0';
			if (lnk[0] == '/')
				while (top)
					close(stack[top--]);
			if (snprintf(tmp, sizeof(tmp), "%s/%s", lnk, p) >= (int)sizeof(tmp)) {
				e = ENAMETOOLONG;
				break;
			}
			memcpy(pend, tmp, strlen(tmp) + 1);
			p = pend;
			continue;
		}
		if (last) {
			if (!S_ISREG(st.st_mode)) {
				e = S_ISDIR(st.st_mode) ? EISDIR : E_NOTREG;
				break;
			}
			fd = openat(stack[top], comp,
				    O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
			if (fd < 0)
				e = errno;
			break;
		}
		if (top + 1 >= MAX_DEPTH) {
			e = ENAMETOOLONG;
			break;
		}
		fd = openat(stack[top], comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			e = errno;
			break;
		}
		stack[++top] = fd;
		fd = -1;
	}
	while (top)
		close(stack[top--]);
	return fd >= 0 ? fd : -e;
}

/* A path of the caller's (--target-config): a regular file only, opened without blocking. */
static int open_host(const char *p)
{
	struct stat st;
	int fd;

	if (stat(p, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -E_NOTREG;
	fd = open(p, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

/* Read fd to EOF, at most max bytes, into a NUL-terminated malloc'd buffer; 0 or -error. */
static int read_all(int fd, size_t max, int check_reg, char **out, size_t *outlen)
{
	size_t len = 0, cap = 4096;
	struct stat st;
	char *b, *nb;
	ssize_t r;

	*out = NULL;
	*outlen = 0;
	if (check_reg && (fstat(fd, &st) || !S_ISREG(st.st_mode)))
		return -E_NOTREG;
	b = malloc(cap + 1);
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (len == cap) {
			if (cap > max) {
				free(b);
				return -E_TOOBIG;
			}
			cap *= 2;
			nb = realloc(b, cap + 1);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
		}
		r = read(fd, b + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			free(b);
			return e;
		}
		if (r == 0)
			break;
		len += r;
	}
	if (len > max) {
		free(b);
		return -E_TOOBIG;
	}
	b[len] = '\0';
	*out = b;
	*outlen = len;
	return 0;
}

/* A gzip'd regular file: "gzip -dc" with the file on its standard input; 0 or -error. */
static int read_gzip(int fd, size_t max, char **out, size_t *outlen)
{
	char *const argv[] = { "gzip", "-dc", NULL };
	int pfd[2], status, e, nul;
	struct stat st;
	pid_t pid;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return -E_NOTREG;
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		e = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return e;
	}
	if (pid == 0) {
		nul = open("/dev/null", O_WRONLY);
		if (dup2(fd, 0) < 0 || dup2(pfd[1], 1) < 0 || nul < 0 || dup2(nul, 2) < 0)
			_exit(126);
		execvp("gzip", argv);
		_exit(127);
	}
	close(pfd[1]);
	e = read_all(pfd[0], max, 0, out, outlen);
	close(pfd[0]);
	if (e)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return e ? e : -errno;
	if (!e && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		free(*out);
		*out = NULL;
		return -E_GZIP;
	}
	return e;
}

/* A small file under the root, trailing newlines and spaces removed; 0 or -error. */
static int slurp(const char *rel, size_t max, char **out, size_t *len)
{
	int fd = open_in_root(rel), e;

	if (fd < 0)
		return fd;
	e = read_all(fd, max, 1, out, len);
	close(fd);
	if (e)
		return e;
	while (*len && ((*out)[*len - 1] == '\n' || (*out)[*len - 1] == ' '))
		(*out)[--*len] = '\0';
	return 0;
}

/* ------------------------------------------------------------------ kernel config */

enum lsm_id {
	L_CAPABILITY, L_SELINUX, L_SMACK, L_TOMOYO, L_APPARMOR, L_YAMA, L_LOADPIN,
	L_SAFESETID, L_LOCKDOWN, L_LANDLOCK, L_INTEGRITY, L_BPF, NLSM
};

#define F_MAJOR	1	/* LSM_FLAG_LEGACY_MAJOR: security= turns it off unless named */
#define F_EXCL	2	/* LSM_FLAG_EXCLUSIVE: only the first of these that is enabled starts */
#define F_FIRST	4	/* LSM_ORDER_FIRST: always there, not named in lists */

/* The LSMs of 6.1 (and 6.12) with the Kconfig symbol that builds each. */
static const struct lsm_def {
	const char *name, *sym;
	int flags;
} lsms[NLSM] = {
	[L_CAPABILITY] = { "capability", NULL, F_FIRST },
	[L_SELINUX] = { "selinux", "CONFIG_SECURITY_SELINUX", F_MAJOR | F_EXCL },
	[L_SMACK] = { "smack", "CONFIG_SECURITY_SMACK", F_MAJOR | F_EXCL },
	[L_TOMOYO] = { "tomoyo", "CONFIG_SECURITY_TOMOYO", F_MAJOR },
	[L_APPARMOR] = { "apparmor", "CONFIG_SECURITY_APPARMOR", F_MAJOR | F_EXCL },
	[L_YAMA] = { "yama", "CONFIG_SECURITY_YAMA", 0 },
	[L_LOADPIN] = { "loadpin", "CONFIG_SECURITY_LOADPIN", 0 },
	[L_SAFESETID] = { "safesetid", "CONFIG_SECURITY_SAFESETID", 0 },
	[L_LOCKDOWN] = { "lockdown", "CONFIG_SECURITY_LOCKDOWN_LSM", 0 },
	[L_LANDLOCK] = { "landlock", "CONFIG_SECURITY_LANDLOCK", 0 },
	[L_INTEGRITY] = { "integrity", "CONFIG_INTEGRITY", 0 },
	[L_BPF] = { "bpf", "CONFIG_BPF_LSM", 0 },
};

enum kind { K_UNKNOWN, K_LEGACY, K_STOCK, K_PATCHED, K_UPSTREAM };

struct kconfig {
	char name[PATH_MAX + 64];	/* where it came from */
	char version[32];	/* "6.1.0", from the header; "" if not stated */
	int found;		/* any CONFIG_ line */
	int built[NLSM];	/* CONFIG_<lsm symbol>=y */
	int bootparam;		/* CONFIG_SECURITY_SELINUX_BOOTPARAM=y */
	int develop;		/* CONFIG_SECURITY_SELINUX_DEVELOP (default y) */
	int runtime_disable;	/* CONFIG_SECURITY_SELINUX_DISABLE=y */
	int shim_accept, shim_reject;	/* the backport's Kconfig choice */
	int checkreqprot;	/* CONFIG_SECURITY_SELINUX_CHECKREQPROT_VALUE (0 before 6.4) */
	int has_lsm, lsm_too_long;
	char lsm[MAXV];		/* CONFIG_LSM */
	enum kind kind;
};

static void config_init(struct kconfig *k, const char *name)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->develop = 1;
}

static int *config_field(struct kconfig *k, const char *sym, size_t n)
{
	static const struct {
		const char *sym;
		size_t off;
	} f[] = {
		{ "CONFIG_SECURITY_SELINUX_BOOTPARAM", offsetof(struct kconfig, bootparam) },
		{ "CONFIG_SECURITY_SELINUX_DEVELOP", offsetof(struct kconfig, develop) },
		{ "CONFIG_SECURITY_SELINUX_DISABLE", offsetof(struct kconfig, runtime_disable) },
		{ "CONFIG_SECURITY_SELINUX_RETIRED_DISABLE_ACCEPT",
		  offsetof(struct kconfig, shim_accept) },
		{ "CONFIG_SECURITY_SELINUX_RETIRED_DISABLE_REJECT",
		  offsetof(struct kconfig, shim_reject) },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(f); i++)
		if (strlen(f[i].sym) == n && !memcmp(f[i].sym, sym, n))
			return (int *)((char *)k + f[i].off);
	for (i = 0; i < NLSM; i++)
		if (lsms[i].sym && strlen(lsms[i].sym) == n && !memcmp(lsms[i].sym, sym, n))
			return &k->built[i];
	return NULL;
}

static const char crp_sym[] = "CONFIG_SECURITY_SELINUX_CHECKREQPROT_VALUE";

/* One line of a .config (no newline). A later line for the same symbol wins, as in Kconfig. */
static void parse_config_line(struct kconfig *k, const char *line, size_t len)
{
	static const char notset[] = " is not set";
	const char *eq, *v;
	size_t vl, nl = sizeof(notset) - 1;
	int *fld, maj, min;
	char ver[32];

	if (len > 9 && !memcmp(line, "# Linux/", 8)) {
		char hdr[256];

		snprintf(hdr, sizeof(hdr), "%.*s", (int)(len < 255 ? len : 255), line);
		if (sscanf(hdr, "# Linux/%*s %31s Kernel Configuration", ver) == 1 &&
		    sscanf(ver, "%d.%d", &maj, &min) == 2)
			snprintf(k->version, sizeof(k->version), "%s", ver);
		return;
	}
	if (len > 9 + nl && !memcmp(line, "# CONFIG_", 9) &&
	    !memcmp(line + len - nl, notset, nl)) {
		fld = config_field(k, line + 2, len - 2 - nl);
		if (fld)
			*fld = 0;
		return;
	}
	if (len < 8 || memcmp(line, "CONFIG_", 7))
		return;
	k->found = 1;
	eq = memchr(line, '=', len);
	if (!eq)
		return;
	v = eq + 1;
	vl = len - (v - line);
	if ((size_t)(eq - line) == 10 && !memcmp(line, "CONFIG_LSM", 10)) {
		if (vl < 2 || v[0] != '"' || v[vl - 1] != '"')
			return;
		if (vl - 2 >= sizeof(k->lsm)) {
			k->lsm_too_long = 1;
			return;
		}
		memcpy(k->lsm, v + 1, vl - 2);
		k->lsm[vl - 2] = '\0';
		k->has_lsm = 1;
		return;
	}
	if ((size_t)(eq - line) == sizeof(crp_sym) - 1 && !memcmp(line, crp_sym, eq - line)) {
		/* an int symbol, range 0 1 */
		k->checkreqprot = vl == 1 && v[0] == '1';
		return;
	}
	fld = config_field(k, line, eq - line);
	if (fld)
		*fld = vl == 1 && v[0] == 'y';
}

static void parse_config_buf(struct kconfig *k, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *nl;
	size_t l;

	while (p < end) {
		nl = memchr(p, '\n', end - p);
		l = (nl ? nl : end) - p;
		if (l && p[l - 1] == '\r')
			l--;
		parse_config_line(k, p, l);
		p = nl ? nl + 1 : end;
	}
}

/* 1 if version string a.b is at least maj.min. */
static int version_at_least(const char *v, int maj, int min)
{
	int a = 0, b = 0;

	if (sscanf(v, "%d.%d", &a, &b) < 2)
		return 0;
	return a > maj || (a == maj && b >= min);
}

/* Which kind of kernel a config builds; K_UNKNOWN if it cannot tell. */
static enum kind config_kind(const struct kconfig *k)
{
	if (k->shim_accept || k->shim_reject)
		return K_PATCHED;
	if (!k->version[0])
		return K_UNKNOWN;
	if (version_at_least(k->version, 6, 4))
		return K_UPSTREAM;
	return k->runtime_disable ? K_LEGACY : K_STOCK;
}

static const char *kind_str(const struct kconfig *k)
{
	switch (k->kind) {
	case K_LEGACY:
		return "runtime disable built in (CONFIG_SECURITY_SELINUX_DISABLE=y)";
	case K_STOCK:
		return "no runtime disable, no switch: the disable node rejects the write";
	case K_PATCHED:
		return k->shim_reject ?
		       "the 6.1 backport, rejecting the write by default (selinux_retired_disable= overrides)" :
		       "the 6.1 backport, accepting the write by default (selinux_retired_disable= overrides)";
	case K_UPSTREAM:
		return "6.4 or later: the disable node accepts the write and there is no switch";
	default:
		return "unknown";
	}
}

/* Read a kernel config, plain or gzip'd; fd is closed. 0 if read, else -error. */
static int read_config_fd(int fd, const char *name, struct kconfig *k)
{
	size_t l = strlen(name), len = 0;
	char *buf = NULL;
	int e;

	config_init(k, name);
	if (l > 3 && !strcmp(name + l - 3, ".gz"))
		e = read_gzip(fd, MAX_BIG, &buf, &len);
	else
		e = read_all(fd, MAX_BIG, 1, &buf, &len);
	close(fd);
	if (e)
		return e;
	parse_config_buf(k, buf, len);
	free(buf);
	return k->found ? 0 : -EINVAL;
}

/* ------------------------------------------------------------------ command line */

/* The kernel's isspace (lib/ctype.c): the C set plus 0xa0. */
static int k_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0;
}

/* The C locale's isspace, which libselinux runs under in PID 1. */
static int c_isspace(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static int digit_val(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return 99;
}

/* The kernel's kstrtoul(s, 0, &v) on a 64-bit kernel: 0 and *v, or -1 if it fails. */
static int k_kstrtoul(const char *s, unsigned long long *v)
{
	unsigned long long r = 0;
	unsigned int base = 10;
	int d, any = 0;

	if (*s == '+')
		s++;
	if (s[0] == '0') {
		if ((s[1] | 0x20) == 'x' && digit_val(s[2]) < 16) {
			base = 16;
			s += 2;
		} else {
			base = 8;
		}
	}
	for (; (d = digit_val(*s)) < (int)base; s++) {
		if (r > (~0ULL - d) / base)
			return -1;	/* -ERANGE */
		r = r * base + d;
		any = 1;
	}
	if (!any)
		return -1;
	if (*s == '\n')
		s++;
	if (*s)
		return -1;
	*v = r;
	return 0;
}

/* What the kernel takes from its command line (init/main.c, lib/cmdline.c next_arg). */
struct kcmd {
	int selinux;		/* selinux=: -1 none, else 0/1 (needs BOOTPARAM) */
	int enforcing;		/* enforcing=: -1 none, else 0/1 (needs DEVELOP) */
	int apparmor;		/* apparmor=: -1 none, else 0/1 */
	int has_lsm, has_security;
	char lsm[MAXV], security[MAXV];
	int checkreqprot;	/* checkreqprot=: -1 none, else 0/1 (its __setup, kstrtoul) */
	int retired;		/* selinux_retired_disable=: -1 none valid, 0 accept, 1 reject */
	int retired_seen;	/* the word is there */
	char retired_val[64];	/* its last value, for messages */
	char after_dashes[MAXV];	/* SELinux words after a bare "--", for init */
};

/* Parameter names compare with '-' and '_' alike, as parameqn() does. */
static int param_is(const char *param, const char *name)
{
	for (; *param && *name; param++, name++) {
		char a = *param == '-' ? '_' : *param, b = *name == '-' ? '_' : *name;

		if (a != b)
			return 0;
	}
	return !*param && !*name;
}

/* One word, split as next_arg() does: *param, *val (NULL if no '='); returns the rest. */
static char *k_next_arg(char *args, char **param, char **val)
{
	unsigned int i, equals = 0;
	int in_quote = 0, quoted = 0;

	if (*args == '"') {
		args++;
		in_quote = 1;
		quoted = 1;
	}
	for (i = 0; args[i]; i++) {
		if (k_isspace(args[i]) && !in_quote)
			break;
		if (equals == 0 && args[i] == '=')
			equals = i;
		if (args[i] == '"')
			in_quote = !in_quote;
	}
	*param = args;
	if (!equals) {
		*val = NULL;
	} else {
		args[equals] = '\0';
		*val = args + equals + 1;
		if (**val == '"') {
			(*val)++;
			if (args[i - 1] == '"')
				args[i - 1] = '\0';
		}
	}
	if (quoted && i > 0 && args[i - 1] == '"')
		args[i - 1] = '\0';
	if (args[i]) {
		args[i] = '\0';
		args += i + 1;
	} else {
		args += i;
	}
	while (k_isspace(*args))
		args++;
	return args;
}

static void kernel_cmdline_parse(const char *cmdline, struct kcmd *c)
{
	char *buf = strdup(cmdline), *args, *param, *val;
	unsigned long long v;
	int dashes = 0;

	memset(c, 0, sizeof(*c));
	c->selinux = c->enforcing = c->apparmor = c->retired = c->checkreqprot = -1;
	if (!buf)
		return;
	args = buf;
	while (k_isspace(*args))
		args++;
	while (*args) {
		args = k_next_arg(args, &param, &val);
		if (!dashes && !val && !strcmp(param, "--")) {
			dashes = 1;
			continue;
		}
		if (dashes) {
			/* Everything after "--" is init's; note the words that look like ours. */
			if (val && (param_is(param, "selinux") || param_is(param, "enforcing") ||
				    param_is(param, "lsm") || param_is(param, "security") ||
				    param_is(param, "checkreqprot") ||
				    param_is(param, "selinux_retired_disable"))) {
				size_t l = strlen(c->after_dashes);

				snprintf(c->after_dashes + l, sizeof(c->after_dashes) - l, "%s%s=%s",
					 l ? " " : "", param, val);
			}
			continue;
		}
		if (!val)
			continue;
		if (param_is(param, "selinux")) {
			if (!k_kstrtoul(val, &v))
				c->selinux = !!v;
		} else if (param_is(param, "enforcing")) {
			if (!k_kstrtoul(val, &v))
				c->enforcing = !!v;
		} else if (param_is(param, "checkreqprot")) {
			if (!k_kstrtoul(val, &v))
				c->checkreqprot = !!v;
		} else if (param_is(param, "apparmor")) {
			if (!k_kstrtoul(val, &v))
				c->apparmor = !!v;
		} else if (param_is(param, "lsm")) {
			snprintf(c->lsm, sizeof(c->lsm), "%s", val);
			c->has_lsm = 1;
		} else if (param_is(param, "security")) {
			snprintf(c->security, sizeof(c->security), "%s", val);
			c->has_security = 1;
		} else if (param_is(param, "selinux_retired_disable")) {
			c->retired_seen = 1;
			snprintf(c->retired_val, sizeof(c->retired_val), "%s", val);
			if (!strcmp(val, "reject"))
				c->retired = 1;
			else if (!strcmp(val, "accept"))
				c->retired = 0;
		}
	}
	free(buf);
}

/*
 * libselinux 3.4 (selinux_init_load_policy): the first line of /proc/cmdline as fgets()
 * reads it into a page, the first "enforcing=" in it, counted only at the start or after a
 * space, and atoi() of what follows. -1 if it finds none (or a negative number).
 */
static int libselinux_cmdline_enforcing(const char *cmdline, size_t len, long pagesize)
{
	size_t n = 0, max = pagesize > 1 ? (size_t)pagesize - 1 : 1;
	char *buf, *tmp;
	int r = -1;

	while (n < len && n < max && cmdline[n] != '\n')
		n++;
	if (n < len && n < max)
		n++;	/* fgets keeps the newline */
	buf = malloc(n + 1);
	if (!buf)
		return -1;
	memcpy(buf, cmdline, n);
	buf[n] = '\0';
	tmp = strstr(buf, "enforcing=");
	if (tmp && (tmp == buf || c_isspace(tmp[-1])))
		r = (int)strtol(tmp + sizeof("enforcing=") - 1, NULL, 10);
	free(buf);
	return r < 0 ? -1 : r;
}

/* ------------------------------------------------------------------ /etc/selinux/config */

/*
 * libselinux 3.4 (selinux_getenforcemode): fgets() chunks of one page; a chunk counts only
 * if it starts with "SELINUX=" exactly (case and all); spaces after '=' are skipped and the
 * value is matched case-insensitively on its prefix: enforcing, then permissive, then
 * disabled. The first chunk that matches wins. Returns 1, 0, -1, or -2 for none; *bad gets
 * the first SELINUX= value it could not use.
 */
static int libselinux_config_mode(const char *cfg, size_t len, long pagesize, char *bad,
				  size_t badlen)
{
	size_t pos = 0, n, max = pagesize > 1 ? (size_t)pagesize - 1 : 1;
	char *chunk, *tag;
	int r = -2;

	if (bad && badlen)
		bad[0] = '\0';
	chunk = malloc(max + 1);
	if (!chunk)
		return -2;
	while (pos < len) {
		n = 0;
		while (pos + n < len && n < max && cfg[pos + n] != '\n')
			n++;
		if (pos + n < len && n < max)
			n++;
		memcpy(chunk, cfg + pos, n);
		chunk[n] = '\0';
		pos += n;
		if (strncmp(chunk, "SELINUX=", 8))
			continue;
		tag = chunk + 8;
		while (c_isspace(*tag))
			tag++;
		if (!strncasecmp(tag, "enforcing", 9)) {
			r = 1;
			break;
		} else if (!strncasecmp(tag, "permissive", 10)) {
			r = 0;
			break;
		} else if (!strncasecmp(tag, "disabled", 8)) {
			r = -1;
			break;
		}
		if (bad && badlen && !bad[0])
			snprintf(bad, badlen, "%.*s", (int)strcspn(tag, " \t\r\n#"), tag);
	}
	free(chunk);
	return r;
}

static const char *mode_str(int m)
{
	return m == 1 ? "enforcing" : m == 0 ? "permissive" : m == -1 ? "disabled" : "absent";
}

/* ------------------------------------------------------------------ the LSM order */

static int lsm_lookup(const char *name)
{
	int i;

	for (i = 0; i < NLSM; i++)
		if (!strcmp(lsms[i].name, name))
			return i;
	return -1;
}

static int in_list(const char *list, const char *item)
{
	char buf[MAXV], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (strcmp(tok, item) == 0)
			return 1;
	return 0;
}

static void append(char *out, size_t len, const char *fmt, ...)
	__printf(3, 4);
static void append(char *out, size_t len, const char *fmt, ...)
{
	size_t l = strlen(out);
	va_list ap;

	if (l + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(out + l, len - l, fmt, ap);
	va_end(ap);
}

/*
 * Would SELinux start at boot with this config and command line? As security/security.c
 * (6.1, and the same in 6.12) decides: lsm= else CONFIG_LSM gives the order, names that are
 * not built are skipped, security= turns off every other legacy major LSM, and of the
 * exclusive LSMs only the first enabled one starts.
 */
static int selinux_starts(const struct kconfig *k, const struct kcmd *c, char *why, size_t len)
{
	int enabled[NLSM], ordered[NLSM], order[NLSM], norder = 0, i, id, exclusive = -1;
	char buf[MAXV], skipped[MAXV] = "", *name, *next;
	const char *list, *major = NULL;

	why[0] = '\0';
	if (!k->built[L_SELINUX]) {
		snprintf(why, len, "SELinux is not built into the kernel");
		return 0;
	}
	for (i = 0; i < NLSM; i++) {
		enabled[i] = k->built[i] || i == L_CAPABILITY;
		ordered[i] = 0;
	}
	if (k->bootparam && c->selinux == 0)
		enabled[L_SELINUX] = 0;
	if (c->apparmor == 0)
		enabled[L_APPARMOR] = 0;
	if (c->has_lsm) {
		list = c->lsm;
		snprintf(why, len, "lsm=%s on the command line%s", c->lsm,
			 c->has_security ? " (security= is ignored beside it)" : "");
	} else {
		list = k->lsm;
		if (c->has_security) {
			major = c->security;
			snprintf(why, len, "security=%s on the command line, CONFIG_LSM=\"%s\"",
				 c->security, k->lsm);
		} else {
			snprintf(why, len, "CONFIG_LSM=\"%s\"", k->lsm);
		}
	}
	if (major)
		for (i = 0; i < NLSM; i++)
			if ((lsms[i].flags & F_MAJOR) && strcmp(lsms[i].name, major))
				enabled[i] = 0;
	snprintf(buf, sizeof(buf), "%s", list);
	next = buf;
	while ((name = strsep(&next, ",")) != NULL) {
		id = lsm_lookup(name);
		if (id < 0 || (lsms[id].flags & F_FIRST) || !k->built[id]) {
			if (name[0] && !in_list(skipped, name))
				append(skipped, sizeof(skipped), "%s%s", skipped[0] ? "," : "", name);
			continue;
		}
		if (!ordered[id]) {
			ordered[id] = 1;
			order[norder++] = id;
		}
	}
	if (major) {
		id = lsm_lookup(major);
		if (id >= 0 && !(lsms[id].flags & F_FIRST) && k->built[id] && !ordered[id]) {
			ordered[id] = 1;
			order[norder++] = id;
		}
	}
	if (skipped[0])
		append(why, len, "; not built, so skipped: %s", skipped);
	if (k->bootparam && c->selinux == 0) {
		append(why, len, "; selinux=0 on the command line");
		return 0;
	}
	if (!k->bootparam && c->selinux == 0)
		append(why, len, "; selinux=0 is ignored (no CONFIG_SECURITY_SELINUX_BOOTPARAM)");
	if (!ordered[L_SELINUX]) {
		append(why, len, "; selinux is not in the list");
		return 0;
	}
	if (major && strcmp(major, "selinux")) {
		append(why, len, "; security=%s turns SELinux off", major);
		return 0;
	}
	for (i = 0; i < norder; i++) {
		id = order[i];
		if (!enabled[id])
			continue;
		if (lsms[id].flags & F_EXCL) {
			if (exclusive >= 0)
				continue;
			exclusive = id;
		}
	}
	if (exclusive != L_SELINUX) {
		append(why, len, "; %s, an exclusive LSM before selinux, starts instead",
		       exclusive >= 0 ? lsms[exclusive].name : "another");
		return 0;
	}
	if (c->apparmor == 0 && ordered[L_APPARMOR])
		append(why, len, "; apparmor=0 keeps AppArmor off");
	append(why, len, "; SELinux starts");
	return 1;
}

/* CONFIG_LSM without selinux: the lsm= value that keeps every other LSM. */
static void lsm_without_selinux(const char *lsm, char *out, size_t len)
{
	char buf[MAXV], *tok, *save;

	out[0] = '\0';
	snprintf(buf, sizeof(buf), "%s", lsm);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "selinux"))
			continue;
		append(out, len, "%s%s", out[0] ? "," : "", tok);
	}
}

/*
 * What a write to the disable node does on the target: "disables" (runtime disable),
 * "accept" or "reject". Only the backport knows selinux_retired_disable=.
 */
static const char *node_answer(const struct kconfig *k, const struct kcmd *c)
{
	switch (k->kind) {
	case K_LEGACY:
		return "disables";
	case K_PATCHED:
		if (c->retired >= 0)
			return c->retired ? "reject" : "accept";
		return k->shim_reject ? "reject" : "accept";
	case K_UPSTREAM:
		return "accept";
	default:
		return "reject";
	}
}

/*
 * checkreqprot 1 makes SELinux check the protection a process asked for in mmap() and
 * mprotect() instead of the one the kernel applies (READ_IMPLIES_EXEC adds PROT_EXEC), so
 * execmem and execmod are never asked for such mappings. 6.1 takes it from
 * CONFIG_SECURITY_SELINUX_CHECKREQPROT_VALUE, then the last valid checkreqprot= on the
 * command line, then writes to /sys/fs/selinux/checkreqprot. From 6.4 (a7e4676e8e2c), and
 * with the backport, it is always 0: the word and the writes only log.
 */
static int honours_checkreqprot(const struct kconfig *k)
{
	return k->kind != K_PATCHED && k->kind != K_UPSTREAM;
}

/* ------------------------------------------------------------------ /proc parsers */

/* Is name a line's second field ("nodev\tselinuxfs") in /proc/filesystems? */
static int fs_registered(const char *fs, const char *name)
{
	const char *p = fs, *nl, *f;
	size_t l, nlen = strlen(name);

	while (*p) {
		nl = strchr(p, '\n');
		l = nl ? (size_t)(nl - p) : strlen(p);
		f = memchr(p, '\t', l);
		f = f ? f + 1 : p;
		while (f < p + l && (*f == ' ' || *f == '\t'))
			f++;
		if ((size_t)(p + l - f) == nlen && !memcmp(f, name, nlen))
			return 1;
		p = nl ? nl + 1 : p + l;
	}
	return 0;
}

/* Is the last mount on /sys/fs/selinux in /proc/mounts of type selinuxfs? */
static int selinuxfs_mounted(const char *mounts)
{
	const char *p = mounts, *nl;
	char dev[256], mnt[256], type[64];
	int mounted = 0;

	while (*p) {
		char line[1024];
		size_t l;

		nl = strchr(p, '\n');
		l = nl ? (size_t)(nl - p) : strlen(p);
		snprintf(line, sizeof(line), "%.*s", (int)(l < sizeof(line) - 1 ? l : sizeof(line) - 1), p);
		if (sscanf(line, "%255s %255s %63s", dev, mnt, type) == 3 &&
		    !strcmp(mnt, "/sys/fs/selinux"))
			mounted = !strcmp(type, "selinuxfs");
		p = nl ? nl + 1 : p + l;
	}
	return mounted;
}

/* ------------------------------------------------------------------ the report */

struct report {
	char today[64], today_why[2 * MAXV];
	char target[64], target_why[2 * MAXV];
	int mode;		/* libselinux's reading of the config: 1, 0, -1, -2 none, -3 no file */
	int freeze, latent;
	const char *answer;
	int lib_enforcing;	/* libselinux's enforcing= (-1 none) */
	int crp_today, crp_target;	/* checkreqprot where SELinux runs today; -1 not judged */
	const char *crp_src;	/* what set checkreqprot to 1 today */
	int crp_change;		/* 1 today, 0 on a target that loads a policy */
	char action[3 * MAXV];
	char notes[6][2 * MAXV];
	int nnotes;
	const char *file;
};

static void note(struct report *r, const char *fmt, ...) __printf(2, 3);
static void note(struct report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nnotes >= 6)
		return;
	va_start(ap, fmt);
	vsnprintf(r->notes[r->nnotes++], sizeof(r->notes[0]), fmt, ap);
	va_end(ap);
}

static const char *mode_name(int mode)
{
	return mode == -3 ? "absent" : mode_str(mode);
}

static void print_json_field(const char *k, const char *v, int last)
{
	printf("  \"%s\": ", k);
	put_json(stdout, v);
	printf("%s\n", last ? "" : ",");
}

static void print_json_int(const char *k, int v)
{
	if (v < 0)
		printf("  \"%s\": null,\n", k);
	else
		printf("  \"%s\": %d,\n", k, v);
}

#ifndef MIGRATE_CHECK_NO_MAIN
static void print_usage(void)
{
	printf("usage: selinux-migrate-check [--root DIR] [--target-config FILE | --target-kernel VER]\n"
	       "                             [--json | --summary]\n"
	       "  --target-kernel VER: 6.4 or later (e.g. 6.12), 6.1-patched, 6.1-patched-accept,\n"
	       "                       or an older version without runtime disable (e.g. 6.1)\n"
	       "exit: 0 nothing to do, 1 action needed, 2 an input could not be read or made no sense\n");
}

/* --target-kernel: the running config, built as that kernel. */
static void target_kernel(struct kconfig *t, const struct kconfig *cur, const char *v)
{
	int maj, min, n = 0;

	*t = *cur;
	t->runtime_disable = 0;
	t->shim_accept = t->shim_reject = 0;
	snprintf(t->name, sizeof(t->name), "this kernel's config built as %s (--target-kernel)", v);
	if (!strcmp(v, "6.1-patched") || !strcmp(v, "6.1-patched-accept")) {
		snprintf(t->version, sizeof(t->version), "6.1");
		t->shim_accept = !strcmp(v, "6.1-patched-accept");
		t->shim_reject = !t->shim_accept;
		t->kind = K_PATCHED;
		return;
	}
	if (sscanf(v, "%d.%d%n", &maj, &min, &n) != 2 || (v[n] && v[n] != '.' && v[n] != '-') ||
	    maj < 2 || maj > 99 || min < 0 || min > 999)
		fail("--target-kernel %s: not a version such as 6.12, nor 6.1-patched or 6.1-patched-accept",
		     v);
	snprintf(t->version, sizeof(t->version), "%s", v);
	t->kind = version_at_least(v, 6, 4) ? K_UPSTREAM : K_STOCK;
}

/* Refuse a config whose verdict would be a guess. */
static void check_config(const struct kconfig *k, const char *what)
{
	if (k->lsm_too_long)
		fail("%s %s: CONFIG_LSM is longer than %d bytes", what, k->name, MAXV - 1);
	if (k->built[L_SELINUX] && !k->has_lsm)
		fail("%s %s has no CONFIG_LSM line: cannot tell which LSMs start", what, k->name);
	if (k->shim_accept && k->shim_reject)
		fail("%s %s sets both CONFIG_SECURITY_SELINUX_RETIRED_DISABLE_ACCEPT and _REJECT",
		     what, k->name);
}

int main(int argc, char **argv)
{
	char *cmdline = NULL, *lsm = NULL, *selcfg = NULL, *attr = NULL, *enforce = NULL;
	char *osrel = NULL, *fs = NULL, *mounts = NULL, *crp = NULL;
	char why[2 * MAXV], path[PATH_MAX + 64], bad[64], list[MAXV], offword[2 * MAXV];
	char crp_file[512];
	const char *target_path = NULL, *target_ver = NULL;
	size_t cmdlen = 0, len = 0;
	struct kconfig cur, tgt;
	struct report r;
	struct kcmd kc;
	int i, e, fd, registered, mounted, active, starts, model, same_kernel, lib_enf, had;
	long pagesize = sysconf(_SC_PAGESIZE);

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--root") && i + 1 < argc) {
			root = argv[++i];
		} else if (!strcmp(argv[i], "--target-config") && i + 1 < argc) {
			target_path = argv[++i];
		} else if (!strcmp(argv[i], "--target-kernel") && i + 1 < argc) {
			target_ver = argv[++i];
		} else if (!strcmp(argv[i], "--json")) {
			json = 1;
		} else if (!strcmp(argv[i], "--summary")) {
			summary = 1;
		} else if (strcmp(argv[i], "--help") && strcmp(argv[i], "-h")) {
			fail("unknown argument '%s' (see --help)", argv[i]);
		} else {
			print_usage();
			return 0;
		}
	}
	if (target_path && target_ver)
		fail("--target-config and --target-kernel exclude each other");
	if (pagesize < 4096)
		pagesize = 4096;
	memset(&r, 0, sizeof(r));
	rootfd = open(root[0] ? root : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		fail("cannot open --root %s: %s", root, strerror(errno));

	e = slurp("/proc/cmdline", MAX_SMALL, &cmdline, &cmdlen);
	if (e)
		fail("cannot read %s: %s", path_of("/proc/cmdline"), err_str(-e));
	e = slurp("/proc/filesystems", MAX_SMALL, &fs, &len);
	if (e)
		fail("cannot read %s: %s", path_of("/proc/filesystems"), err_str(-e));
	registered = fs_registered(fs, "selinuxfs");
	e = slurp("/proc/mounts", MAX_BIG, &mounts, &len);
	if (e)
		fail("cannot read %s: %s", path_of("/proc/mounts"), err_str(-e));
	mounted = selinuxfs_mounted(mounts);
	e = slurp("/sys/kernel/security/lsm", MAX_SMALL, &lsm, &len);
	if (e)
		fail("cannot read %s: %s (is securityfs mounted?)", path_of("/sys/kernel/security/lsm"),
		     err_str(-e));
	active = in_list(lsm, "selinux");

	/* The running kernel's config: /proc/config.gz, else /boot/config-<release>. */
	fd = open_in_root("/proc/config.gz");
	if (fd == -ENOENT) {
		e = slurp("/proc/sys/kernel/osrelease", MAX_SMALL, &osrel, &len);
		if (e)
			fail("no %s and cannot read %s: %s", path_of("/proc/config.gz"),
			     path_of("/proc/sys/kernel/osrelease"), err_str(-e));
		if (!osrel[0] || strchr(osrel, '/') || strlen(osrel) > 200)
			fail("%s: not a kernel release name", path_of("/proc/sys/kernel/osrelease"));
		snprintf(path, sizeof(path), "/boot/config-%s", osrel);
		fd = open_in_root(path);
	} else {
		snprintf(path, sizeof(path), "/proc/config.gz");
	}
	if (fd < 0)
		fail("cannot read the running kernel's config %s: %s", path_of(path), err_str(-fd));
	e = read_config_fd(fd, path_of(path), &cur);
	if (e)
		fail("cannot read the running kernel's config %s: %s", cur.name,
		     e == -EINVAL ? "no CONFIG_ lines" : err_str(-e));
	check_config(&cur, "the running kernel's config");
	cur.kind = config_kind(&cur);
	kernel_cmdline_parse(cmdline, &kc);
	lib_enf = libselinux_cmdline_enforcing(cmdline, cmdlen, pagesize);
	r.lib_enforcing = lib_enf;

	/* /etc/selinux/config as libselinux reads it; no file: SELinux userspace is not there. */
	r.mode = -3;
	e = slurp("/etc/selinux/config", MAX_BIG, &selcfg, &len);
	if (e && e != -ENOENT)
		fail("cannot read %s: %s", path_of("/etc/selinux/config"), err_str(-e));
	if (!e) {
		r.mode = libselinux_config_mode(selcfg, len, pagesize, bad, sizeof(bad));
		if (r.mode == -2 && bad[0])
			fail("%s: SELINUX=%s is not enforcing, permissive or disabled, and no later line is",
			     path_of("/etc/selinux/config"), bad);
		if (r.mode == -2)
			fail("%s has no line libselinux reads as SELINUX=enforcing, permissive or disabled (it must start with \"SELINUX=\")",
			     path_of("/etc/selinux/config"));
	}

	/* Today. */
	if (!active) {
		model = selinux_starts(&cur, &kc, why, sizeof(why));
		snprintf(r.today, sizeof(r.today), "disabled at boot");
		snprintf(r.today_why, sizeof(r.today_why), "not in the LSM list (%s): %s", lsm, why);
		if (model)
			note(&r, "%s predicts that SELinux starts, but the running LSM list (%s) has no selinux; the list is trusted (is that file this kernel's config?)",
			     cur.name, lsm);
	} else if (!registered) {
		snprintf(r.today, sizeof(r.today), "disabled at run time");
		/*
		 * libselinux wrote the node at boot because the config said disabled then; if
		 * it says something else now, that was changed since and counts from next boot.
		 */
		if (r.mode == -1)
			snprintf(r.today_why, sizeof(r.today_why),
				 "SELINUX=disabled made libselinux write /sys/fs/selinux/disable; this kernel has runtime disable");
		else
			snprintf(r.today_why, sizeof(r.today_why),
				 "a write to /sys/fs/selinux/disable (libselinux makes it at boot when SELINUX=disabled; the config now says SELINUX=%s, from the next boot); this kernel has runtime disable",
				 mode_name(r.mode));
	} else {
		e = slurp("/proc/self/attr/current", MAX_SMALL, &attr, &len);
		if (e)
			fail("cannot read %s: %s", path_of("/proc/self/attr/current"), err_str(-e));
		if (!strcmp(attr, "kernel")) {
			snprintf(r.today, sizeof(r.today), "enabled, no policy");
			snprintf(r.today_why, sizeof(r.today_why),
				 "SELinux runs but no policy was loaded (SELINUX=%s)%s", mode_name(r.mode),
				 mounted ? "" : "; selinuxfs unmounted, so getenforce says Disabled");
		} else {
			if (!mounted)
				fail("a policy is loaded (context %s) but selinuxfs is not mounted on %s",
				     attr, path_of("/sys/fs/selinux"));
			e = slurp("/sys/fs/selinux/enforce", MAX_SMALL, &enforce, &len);
			if (e)
				fail("a policy is loaded (context %s) but %s cannot be read: %s", attr,
				     path_of("/sys/fs/selinux/enforce"), err_str(-e));
			if (strcmp(enforce, "0") && strcmp(enforce, "1"))
				fail("%s: '%s' is neither 0 nor 1", path_of("/sys/fs/selinux/enforce"),
				     enforce);
			snprintf(r.today, sizeof(r.today), "%s",
				 !strcmp(enforce, "1") ? "enforcing" : "permissive");
			snprintf(r.today_why, sizeof(r.today_why), "policy loaded, SELINUX=%s",
				 mode_name(r.mode));
		}
	}

	/* The target kernel: a config, a version, or this one without runtime disable. */
	same_kernel = !target_path;
	if (target_path) {
		fd = open_host(target_path);
		if (fd < 0)
			fail("cannot read --target-config %s: %s", target_path, err_str(-fd));
		e = read_config_fd(fd, target_path, &tgt);
		if (e)
			fail("cannot read --target-config %s: %s", target_path,
			     e == -EINVAL ? "no CONFIG_ lines" : err_str(-e));
		check_config(&tgt, "--target-config");
		tgt.kind = config_kind(&tgt);
		if (tgt.kind == K_UNKNOWN)
			fail("--target-config %s has no \"# Linux/<arch> <version> Kernel Configuration\" header: cannot tell whether the kernel is 6.4 or later",
			     target_path);
	} else if (target_ver) {
		target_kernel(&tgt, &cur, target_ver);
	} else {
		tgt = cur;
		tgt.runtime_disable = 0;
		if (cur.kind != K_PATCHED) {
			tgt.kind = K_UPSTREAM;
			snprintf(tgt.version, sizeof(tgt.version), "6.4");
		}
		snprintf(tgt.name, sizeof(tgt.name), "this kernel's config without runtime disable");
	}
	r.answer = node_answer(&tgt, &kc);
	model = starts = selinux_starts(&tgt, &kc, why, sizeof(why));
	if (same_kernel && model != active) {
		/* Same config, same command line: what the running kernel did is the answer. */
		starts = active;
		snprintf(why, sizeof(why), "the running LSM list (%s) %s selinux", lsm,
			 active ? "has" : "has no");
		note(&r, "the config and command line predict that SELinux %s, the running LSM list says otherwise; the list is trusted",
		     model ? "starts" : "does not start");
	}
	if (!starts) {
		snprintf(r.target, sizeof(r.target), "disabled at boot");
		snprintf(r.target_why, sizeof(r.target_why), "%s", why);
	} else if (r.mode == -1 || r.mode == -3) {
		/* libselinux: enforce from the command line, else the config, else 0. */
		int want = lib_enf >= 0 ? lib_enf : 0;

		if (!strcmp(r.answer, "disables")) {
			snprintf(r.target, sizeof(r.target), "disabled at run time");
			snprintf(r.target_why, sizeof(r.target_why),
				 "the target kernel still has runtime disable");
		} else {
			snprintf(r.target, sizeof(r.target), "enabled, no policy");
			if (r.mode == -1)
				snprintf(r.target_why, sizeof(r.target_why),
					 "%s; SELINUX=disabled only stops the policy load; the disable node answers '%s'",
					 why, r.answer);
			else
				snprintf(r.target_why, sizeof(r.target_why),
					 "%s; no /etc/selinux/config, so libselinux loads no policy", why);
		}
		/*
		 * systemd freezes when the load fails with enforce > 0 and no policy was loaded
		 * before. SELINUX=disabled: the write succeeded and enforce stayed as asked;
		 * a refused write sets it to 0. No config at all: the load itself fails.
		 */
		if (want > 0 && (r.mode == -3 || strcmp(r.answer, "reject")))
			r.freeze = 1;
		else if (want > 0 && r.mode == -1)
			r.latent = 1;
	} else {
		int enf = lib_enf >= 0 ? lib_enf > 0 : r.mode == 1;

		snprintf(r.target, sizeof(r.target), "%s",
			 enf || !tgt.develop ? "enforcing" : "permissive");
		snprintf(r.target_why, sizeof(r.target_why), "SELINUX=%s, policy loaded at boot%s",
			 mode_name(r.mode),
			 !tgt.develop ? " (no CONFIG_SECURITY_SELINUX_DEVELOP: always enforcing)" :
			 lib_enf >= 0 ? ", mode from enforcing= on the command line" : "");
	}

	/* What the two parsers of the command line make of it. */
	if (kc.enforcing >= 0 && lib_enf >= 0 && (lib_enf > 0) != kc.enforcing)
		note(&r, "the kernel reads enforcing=%d (the last valid one) but libselinux reads enforcing=%d (the first \"enforcing=\" after a space); libselinux's value decides the mode and the freeze",
		     kc.enforcing, lib_enf);
	else if (kc.enforcing > 0 && lib_enf < 0)
		note(&r, "the kernel reads enforcing=1 but libselinux does not (it only looks at the first \"enforcing=\" in the line, and only after a space or at the start)");
	else if (kc.enforcing < 0 && lib_enf > 0)
		note(&r, "libselinux reads enforcing=%d but the kernel does not (quotes, \"--\" or a value kstrtoul refuses); libselinux's value decides the freeze",
		     lib_enf);
	if (kc.after_dashes[0])
		note(&r, "after \"--\" the kernel passes words to init and ignores them itself: %s",
		     kc.after_dashes);
	if (kc.retired_seen && tgt.kind != K_PATCHED)
		note(&r, "the target kernel (%s) does not know selinux_retired_disable=%s: it logs \"Unknown kernel command line parameters\" and hands the word to init as an environment variable, so the switch stops working there",
		     kind_str(&tgt), kc.retired_val);
	else if (kc.retired_seen && kc.retired < 0)
		note(&r, "selinux_retired_disable=%s is neither reject nor accept: the kernel logs that and keeps its built-in answer",
		     kc.retired_val);
	if (r.latent)
		note(&r, "no freeze here only because the disable node rejects the write (%s); a kernel that accepts it (6.4 and later, e.g. Debian trixie's 6.12, or selinux_retired_disable=accept) stops this boot: remove enforcing=1 from the command line or set SELINUX=permissive",
		     kc.retired == 1 && tgt.kind == K_PATCHED ? "selinux_retired_disable=reject" :
		     kind_str(&tgt));

	/* checkreqprot, where SELinux runs today: the node if it can be read, else the model. */
	r.crp_today = r.crp_target = -1;
	if (strncmp(r.today, "disabled", 8)) {
		static const char node_src[] =
			"a write of 1 to /sys/fs/selinux/checkreqprot since boot (neither the command line nor the kernel config sets it)";
		int boot = honours_checkreqprot(&cur) ?
			   (kc.checkreqprot >= 0 ? kc.checkreqprot : cur.checkreqprot) : 0;

		r.crp_today = boot;
		r.crp_src = kc.checkreqprot > 0 ? "checkreqprot=1 on the kernel command line" :
			    "CONFIG_SECURITY_SELINUX_CHECKREQPROT_VALUE=1 in the running kernel's config";
		e = mounted ? slurp("/sys/fs/selinux/checkreqprot", MAX_SMALL, &crp, &len) : -ENOENT;
		if (e && e != -ENOENT)
			fail("cannot read %s: %s", path_of("/sys/fs/selinux/checkreqprot"), err_str(-e));
		if (!e) {
			if (strcmp(crp, "0") && strcmp(crp, "1"))
				fail("%s: '%s' is neither 0 nor 1", path_of("/sys/fs/selinux/checkreqprot"),
				     crp);
			r.crp_today = crp[0] == '1';
			if (r.crp_today && !boot)
				r.crp_src = node_src;
			else if (!r.crp_today && boot)
				note(&r, "the boot set checkreqprot to 1 (%s) but %s reads 0: a write of 0 since boot, undone by the next boot",
				     r.crp_src, path_of("/sys/fs/selinux/checkreqprot"));
		}
		if (!honours_checkreqprot(&tgt))
			r.crp_target = 0;
		else if (kc.checkreqprot >= 0)
			r.crp_target = kc.checkreqprot;
		else
			r.crp_target = r.crp_src == node_src ? r.crp_today : tgt.checkreqprot;
		r.crp_change = r.crp_today == 1 && r.crp_target == 0 &&
			       (!strcmp(r.target, "enforcing") || !strcmp(r.target, "permissive"));
	}
	if (kc.checkreqprot > 0 && !honours_checkreqprot(&cur))
		note(&r, "checkreqprot=1 on the command line does nothing on this kernel (it only logs at boot): it can go");
	if (r.crp_change && !strcmp(r.target, "permissive"))
		note(&r, "checkreqprot is 1 today (%s) and always 0 on the new kernel: SELinux will check the protection the kernel applies, so a mapping that READ_IMPLIES_EXEC makes executable (an old binary, an executable stack) asks for execmem or execmod; permissive only logs those denials: fix the program or the policy before enforcing",
		     r.crp_src);

	/* What to do. */
	r.file = "/etc/default/grub (GRUB_CMDLINE_LINUX), then update-grub";
	offword[0] = '\0';
	if (!strcmp(r.target, "enabled, no policy")) {
		if (tgt.bootparam) {
			snprintf(offword, sizeof(offword),
				 "add selinux=0 to the kernel command line to keep SELinux off");
		} else if (kc.has_lsm) {
			/* lsm= on the command line wins over security= and CONFIG_LSM. */
			lsm_without_selinux(kc.lsm, list, sizeof(list));
			snprintf(offword, sizeof(offword),
				 "change lsm=%s to lsm=%s on the kernel command line (selinux=0 would be ignored: the target kernel lacks CONFIG_SECURITY_SELINUX_BOOTPARAM)",
				 kc.lsm, list);
		} else if (kc.has_security && !strcmp(kc.security, "selinux")) {
			snprintf(offword, sizeof(offword),
				 "remove security=selinux from the kernel command line (selinux=0 would be ignored: the target kernel lacks CONFIG_SECURITY_SELINUX_BOOTPARAM)");
		} else {
			lsm_without_selinux(tgt.lsm, list, sizeof(list));
			snprintf(offword, sizeof(offword),
				 "add lsm=%s to the kernel command line (selinux=0 would be ignored: the target kernel lacks CONFIG_SECURITY_SELINUX_BOOTPARAM)",
				 list);
		}
	}
	if (r.freeze) {
		snprintf(r.action, sizeof(r.action),
			 "remove enforcing=1 (every enforcing= word) from the kernel command line, or set SELINUX=permissive or enforcing in /etc/selinux/config: %s; %s%s",
			 r.mode == -1 ? "with SELINUX=disabled the target kernel accepts libselinux's write to the disable node and systemd freezes the boot" :
			 "with no /etc/selinux/config libselinux loads no policy and systemd freezes the boot",
			 offword[0] ? "to keep SELinux off, also " : "", offword);
		if (tgt.kind == K_PATCHED && r.mode == -1)
			append(r.action, sizeof(r.action),
			       "%sselinux_retired_disable=reject also avoids the freeze, but only on this 6.1 backport: 6.4 and later do not know it",
			       offword[0] ? "; " : "");
	} else {
		snprintf(r.action, sizeof(r.action), "%s", offword);
	}
	had = r.action[0] != '\0';
	if (r.crp_change && !strcmp(r.target, "enforcing")) {
		/* The durable fix is the program or the policy: the knob is gone for good. */
		append(r.action, sizeof(r.action),
		       "%scheckreqprot is 1 today (%s) and always 0 on the new kernel, which then denies, enforcing, every mapping that READ_IMPLIES_EXEC makes executable (an old binary, an executable stack) unless the policy allows execmem or execmod: before the upgrade, write 0 to /sys/fs/selinux/checkreqprot (or boot with checkreqprot=0) in permissive mode, look for execmem, execmod and execheap denials, and fix the program or the policy, not the knob%s",
		       r.action[0] ? "; also: " : "", r.crp_src,
		       kc.checkreqprot > 0 ? "; then remove checkreqprot=1 from the kernel command line" : "");
		if (kc.checkreqprot <= 0) {
			snprintf(crp_file, sizeof(crp_file), "%s%s%s", had ? r.file : "", had ? "; and " : "",
				 r.crp_src[0] == 'a' ?
				 "whatever writes /sys/fs/selinux/checkreqprot (a unit, a script, tmpfiles.d)" :
				 "nothing for the knob itself: CONFIG_SECURITY_SELINUX_CHECKREQPROT_VALUE does not exist on the new kernel");
			r.file = crp_file;
		}
	}

	if (summary) {
		printf("today: %s; new kernel: %s; action: %s%s%s\n", r.today, r.target,
		       r.action[0] ? "yes" : "no", r.freeze ? "; freeze" : "",
		       r.crp_change ? "; checkreqprot 1 -> 0" : "");
	} else if (json) {
		printf("{\n");
		print_json_field("today", r.today, 0);
		print_json_field("today_reason", r.today_why, 0);
		print_json_field("target", r.target, 0);
		print_json_field("target_reason", r.target_why, 0);
		print_json_field("target_config", tgt.name, 0);
		print_json_field("target_kernel", kind_str(&tgt), 0);
		print_json_field("disable_node", r.answer, 0);
		print_json_field("selinux_config", mode_name(r.mode), 0);
		print_json_int("kernel_enforcing", kc.enforcing);
		print_json_int("libselinux_enforcing", lib_enf);
		printf("  \"freeze\": %s,\n", r.freeze ? "true" : "false");
		printf("  \"latent_freeze\": %s,\n", r.latent ? "true" : "false");
		print_json_int("checkreqprot_today", r.crp_today);
		print_json_int("checkreqprot_target", r.crp_target);
		print_json_field("checkreqprot_source", r.crp_today == 1 ? r.crp_src : "", 0);
		printf("  \"notes\": [");
		for (i = 0; i < r.nnotes; i++) {
			printf("%s", i ? ", " : "");
			put_json(stdout, r.notes[i]);
		}
		printf("],\n");
		print_json_field("action", r.action, 0);
		print_json_field("file", r.action[0] ? r.file : "", 1);
		printf("}\n");
	} else {
		emit("SELinux today:      %s\n  why: %s\n", r.today, r.today_why);
		emit("On the new kernel:  %s\n  why: %s\n  judged from: %s\n", r.target, r.target_why,
		     tgt.name);
		emit("  target kernel: %s\n", kind_str(&tgt));
		if (r.crp_today == 1 || r.crp_target == 1)
			emit("checkreqprot:       %d today%s%s%s, %d on the new kernel\n", r.crp_today,
			     r.crp_today == 1 ? " (" : "", r.crp_today == 1 ? r.crp_src : "",
			     r.crp_today == 1 ? ")" : "", r.crp_target);
		if (r.freeze)
			emit("WARNING: enforcing=1 with %s: this machine will stop at boot\n"
			     "  (systemd: \"Failed to load SELinux policy. Freezing execution.\")\n",
			     r.mode == -1 ? "SELINUX=disabled" : "no /etc/selinux/config");
		for (i = 0; i < r.nnotes; i++)
			emit("Note: %s\n", r.notes[i]);
		if (r.action[0])
			emit("To do:              %s\n  where: %s\n", r.action, r.file);
		else
			emit("To do:              nothing\n");
	}
	free(cmdline);
	free(lsm);
	free(selcfg);
	free(attr);
	free(enforce);
	free(osrel);
	free(fs);
	free(mounts);
	free(crp);
	return r.action[0] ? 1 : 0;
}
#endif /* MIGRATE_CHECK_NO_MAIN */
