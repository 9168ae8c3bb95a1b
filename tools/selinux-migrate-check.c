// SPDX-License-Identifier: GPL-2.0
/*
 * selinux-migrate-check: where does this machine stand with SELinux today, and what will
 * it do on a kernel without SELinux runtime disable (Linux 6.4+, or 6.1 with the
 * backport)? Reads the live system (or a copy of it under --root) and prints one screen.
 *
 *   selinux-migrate-check [--root DIR] [--target-config FILE] [--json | --summary]
 *
 * --summary prints one line, "today: STATE; new kernel: STATE; action: yes|no[; freeze]".
 * Exit: 0 nothing to do, 1 action needed, 2 an input could not be read or made no sense.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXV 1024

static const char *root = "";
static int json, summary;

struct kconfig {
	char name[64];		/* where it came from */
	char version[32];	/* "6.1.0", from the header; "" if not stated */
	int found;
	int selinux;		/* CONFIG_SECURITY_SELINUX=y */
	int bootparam;		/* CONFIG_SECURITY_SELINUX_BOOTPARAM=y */
	int runtime_disable;	/* CONFIG_SECURITY_SELINUX_DISABLE=y */
	int shim_accept, shim_reject;	/* the backport's Kconfig choice */
	char lsm[MAXV];		/* CONFIG_LSM */
};

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "selinux-migrate-check: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static char *path_of(const char *p)
{
	static char buf[4][4096];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s%s", root, p);
	return buf[i];
}

/* Whole (small) file into buf; 0 on success, else errno. Trailing newline removed. */
static int slurp(const char *p, char *buf, size_t len)
{
	FILE *f = fopen(p, "r");
	size_t n;

	if (!f)
		return errno;
	n = fread(buf, 1, len - 1, f);
	if (ferror(f)) {
		int e = errno ? errno : EIO;

		fclose(f);
		return e;
	}
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* Value of word "key=" on a command line, or NULL. The last one wins, as in the kernel. */
static const char *cmdline_get(const char *cmdline, const char *key, char *out, size_t len)
{
	const char *p = cmdline, *hit = NULL;
	size_t kl = strlen(key);

	while ((p = strstr(p, key))) {
		if ((p == cmdline || p[-1] == ' ') && p[kl] == '=')
			hit = p + kl + 1;
		p += kl;
	}
	if (!hit)
		return NULL;
	snprintf(out, len, "%.*s", (int)strcspn(hit, " \n"), hit);
	return out;
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

static void parse_config_line(struct kconfig *k, const char *line)
{
	const char *v;

	if (sscanf(line, "# Linux/%*s %31s Kernel Configuration", k->version) == 1)
		return;
	if (strncmp(line, "CONFIG_", 7) != 0)
		return;
	k->found = 1;
	if (!strcmp(line, "CONFIG_SECURITY_SELINUX=y"))
		k->selinux = 1;
	else if (!strcmp(line, "CONFIG_SECURITY_SELINUX_BOOTPARAM=y"))
		k->bootparam = 1;
	else if (!strcmp(line, "CONFIG_SECURITY_SELINUX_DISABLE=y"))
		k->runtime_disable = 1;
	else if (!strcmp(line, "CONFIG_SECURITY_SELINUXFS_DISABLE_ACCEPT=y"))
		k->shim_accept = 1;
	else if (!strcmp(line, "CONFIG_SECURITY_SELINUXFS_DISABLE_REJECT=y"))
		k->shim_reject = 1;
	else if (!strncmp(line, "CONFIG_LSM=\"", 12)) {
		v = line + 12;
		snprintf(k->lsm, sizeof(k->lsm), "%.*s", (int)strcspn(v, "\""), v);
	}
}

/* A kernel config, plain or gzip'd (/proc/config.gz); 0 if read, else errno. */
static int read_config(const char *p, struct kconfig *k)
{
	char line[MAXV];
	size_t l = strlen(p);
	FILE *f;
	int gz = l > 3 && !strcmp(p + l - 3, ".gz");

	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", p);
	if (access(p, R_OK) != 0)
		return errno;
	if (gz) {
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "gzip -dc '%s' 2>/dev/null", p);
		f = popen(cmd, "r");
	} else {
		f = fopen(p, "r");
	}
	if (!f)
		return errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		parse_config_line(k, line);
	}
	if (gz)
		pclose(f);
	else
		fclose(f);
	return k->found ? 0 : EINVAL;
}

/* 1 if version string a.b is at least maj.min. */
static int version_at_least(const char *v, int maj, int min)
{
	int a = 0, b = 0;

	if (sscanf(v, "%d.%d", &a, &b) < 2)
		return 0;
	return a > maj || (a == maj && b >= min);
}

/*
 * What a write to the disable node does on a kernel with this config and command line.
 * A kernel with the backport's shim (patch 0009) obeys selinuxfs_disable=accept|reject
 * over its Kconfig choice; any other kernel ignores that word.
 */
static const char *node_answer(const struct kconfig *k, const char *cmdline)
{
	char v[MAXV];

	if (k->runtime_disable)
		return "disables";		/* legacy: SELinux really goes away */
	if ((k->shim_accept || k->shim_reject) &&
	    cmdline_get(cmdline, "selinuxfs_disable", v, sizeof(v)) &&
	    (!strcmp(v, "accept") || !strcmp(v, "reject")))
		return !strcmp(v, "accept") ? "accept" : "reject";
	if (k->shim_reject)
		return "reject";
	if (k->shim_accept || version_at_least(k->version, 6, 4))
		return "accept";
	return "reject";			/* 6.1 without runtime disable: no write op */
}

/*
 * SELinux, Smack and AppArmor are exclusive (LSM_FLAG_EXCLUSIVE): the first of them in the
 * list is the one that starts. Is that SELinux? TOMOYO is not exclusive since 5.1: it
 * starts beside any of them, so it does not count here.
 */
static int selinux_first_exclusive(const char *list)
{
	char buf[MAXV], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, "selinux") || !strcmp(tok, "smack") || !strcmp(tok, "apparmor"))
			return !strcmp(tok, "selinux");
	return 0;
}

/* Would SELinux be started at boot, given a command line and a config? */
static int selinux_starts(const struct kconfig *k, const char *cmdline, char *why, size_t len)
{
	char v[MAXV];

	if (!k->selinux) {
		snprintf(why, len, "SELinux is not built into the kernel");
		return 0;
	}
	if (k->bootparam && cmdline_get(cmdline, "selinux", v, sizeof(v)) && !strcmp(v, "0")) {
		snprintf(why, len, "selinux=0 on the command line");
		return 0;
	}
	if (cmdline_get(cmdline, "lsm", v, sizeof(v))) {
		snprintf(why, len, "lsm=%s on the command line", v);
		return selinux_first_exclusive(v);
	}
	if (cmdline_get(cmdline, "security", v, sizeof(v))) {
		snprintf(why, len, "security=%s on the command line", v);
		return strcmp(v, "selinux") == 0;
	}
	snprintf(why, len, "CONFIG_LSM=\"%s\"", k->lsm);
	return selinux_first_exclusive(k->lsm);
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
		if (out[0])
			strncat(out, ",", len - strlen(out) - 1);
		strncat(out, tok, len - strlen(out) - 1);
	}
}

struct report {
	char today[64], today_why[MAXV];
	char target[64], target_why[MAXV];
	char mode[32];
	int freeze;
	char action[2 * MAXV];
	char file[128];
};

static void print_json_str(const char *k, const char *v, int last)
{
	const char *p;

	printf("  \"%s\": \"", k);
	for (p = v; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if ((unsigned char)*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	printf("\"%s\n", last ? "" : ",");
}

int main(int argc, char **argv)
{
	char cmdline[4096], lsm[MAXV], selcfg[4096], attr[256], enforce[16], osrel[128];
	char fs[16384], mounts[65536], why[MAXV], v[MAXV], path[4200];
	const char *target_path = NULL;
	struct kconfig cur, tgt;
	struct report r;
	int i, e, registered, mounted, active, starts;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--root") && i + 1 < argc)
			root = argv[++i];
		else if (!strcmp(argv[i], "--target-config") && i + 1 < argc)
			target_path = argv[++i];
		else if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--summary"))
			summary = 1;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: selinux-migrate-check [--root DIR] [--target-config FILE] [--json | --summary]\n");
			return 0;
		} else
			fail("unknown argument '%s' (see --help)", argv[i]);
	}
	memset(&r, 0, sizeof(r));

	e = slurp(path_of("/proc/cmdline"), cmdline, sizeof(cmdline));
	if (e)
		fail("cannot read %s: %s", path_of("/proc/cmdline"), strerror(e));
	e = slurp(path_of("/proc/filesystems"), fs, sizeof(fs));
	if (e)
		fail("cannot read %s: %s", path_of("/proc/filesystems"), strerror(e));
	registered = strstr(fs, "selinuxfs") != NULL;
	e = slurp(path_of("/proc/mounts"), mounts, sizeof(mounts));
	if (e)
		fail("cannot read %s: %s", path_of("/proc/mounts"), strerror(e));
	mounted = strstr(mounts, "selinuxfs ") != NULL;
	e = slurp(path_of("/sys/kernel/security/lsm"), lsm, sizeof(lsm));
	if (e)
		fail("cannot read %s: %s (is securityfs mounted?)", path_of("/sys/kernel/security/lsm"),
		     strerror(e));
	active = in_list(lsm, "selinux");

	/* The running kernel's config: /proc/config.gz, else /boot/config-<release>. */
	e = read_config(path_of("/proc/config.gz"), &cur);
	if (e == ENOENT) {
		if (slurp(path_of("/proc/sys/kernel/osrelease"), osrel, sizeof(osrel)))
			fail("no %s and cannot read %s", path_of("/proc/config.gz"),
			     path_of("/proc/sys/kernel/osrelease"));
		snprintf(path, sizeof(path), "/boot/config-%s", osrel);
		e = read_config(path_of(path), &cur);
	}
	if (e)
		fail("cannot read the running kernel's config %s: %s", cur.name,
		     e == EINVAL ? "no CONFIG_ lines" : strerror(e));

	/* /etc/selinux/config: SELINUX=; no file means SELinux userspace is not installed. */
	snprintf(r.mode, sizeof(r.mode), "absent");
	e = slurp(path_of("/etc/selinux/config"), selcfg, sizeof(selcfg));
	if (e && e != ENOENT)
		fail("cannot read %s: %s", path_of("/etc/selinux/config"), strerror(e));
	if (!e) {
		char *line = strstr(selcfg, "\nSELINUX=");

		line = !strncmp(selcfg, "SELINUX=", 8) ? selcfg : line ? line + 1 : NULL;
		if (!line)
			fail("%s has no SELINUX= line", path_of("/etc/selinux/config"));
		snprintf(r.mode, sizeof(r.mode), "%.*s", (int)strcspn(line + 8, " \n#"), line + 8);
		if (strcmp(r.mode, "disabled") && strcmp(r.mode, "permissive") && strcmp(r.mode, "enforcing"))
			fail("%s: SELINUX=%s is not disabled, permissive or enforcing",
			     path_of("/etc/selinux/config"), r.mode);
	}

	/* Today. */
	if (!active) {
		selinux_starts(&cur, cmdline, why, sizeof(why));
		snprintf(r.today, sizeof(r.today), "disabled at boot");
		snprintf(r.today_why, sizeof(r.today_why), "not in the LSM list (%s): %s", lsm, why);
	} else if (!registered) {
		snprintf(r.today, sizeof(r.today), "disabled at run time");
		/*
		 * libselinux wrote the node at boot because the config said disabled then; if
		 * it says something else now, that was changed since and counts from next boot.
		 */
		if (!strcmp(r.mode, "disabled"))
			snprintf(r.today_why, sizeof(r.today_why),
				 "SELINUX=disabled made libselinux write /sys/fs/selinux/disable; this kernel has runtime disable");
		else
			snprintf(r.today_why, sizeof(r.today_why),
				 "a write to /sys/fs/selinux/disable (libselinux makes it at boot when SELINUX=disabled; the config now says SELINUX=%s, from the next boot); this kernel has runtime disable",
				 r.mode);
	} else {
		if (slurp(path_of("/proc/self/attr/current"), attr, sizeof(attr)))
			snprintf(attr, sizeof(attr), "unreadable");
		if (!strcmp(attr, "kernel")) {
			snprintf(r.today, sizeof(r.today), "enabled, no policy");
			snprintf(r.today_why, sizeof(r.today_why),
				 "SELinux runs but no policy was loaded (SELINUX=%s)%s", r.mode,
				 mounted ? "" : "; selinuxfs unmounted, so getenforce says Disabled");
		} else {
			if (!mounted || slurp(path_of("/sys/fs/selinux/enforce"), enforce, sizeof(enforce)))
				fail("a policy is loaded (context %s) but %s cannot be read", attr,
				     path_of("/sys/fs/selinux/enforce"));
			snprintf(r.today, sizeof(r.today), "%s",
				 !strcmp(enforce, "1") ? "enforcing" : "permissive");
			snprintf(r.today_why, sizeof(r.today_why), "policy loaded, SELINUX=%s", r.mode);
		}
	}

	/* The target kernel: the given config, else this one without runtime disable. */
	if (target_path) {
		e = read_config(target_path, &tgt);
		if (e)
			fail("cannot read --target-config %s: %s", target_path,
			     e == EINVAL ? "no CONFIG_ lines" : strerror(e));
	} else {
		tgt = cur;
		tgt.runtime_disable = 0;
		snprintf(tgt.version, sizeof(tgt.version), "6.4");
		snprintf(tgt.name, sizeof(tgt.name), "this kernel's config without runtime disable");
	}
	starts = selinux_starts(&tgt, cmdline, why, sizeof(why));
	if (!starts) {
		snprintf(r.target, sizeof(r.target), "disabled at boot");
		snprintf(r.target_why, sizeof(r.target_why), "%s", why);
	} else if (!strcmp(r.mode, "disabled") || !strcmp(r.mode, "absent")) {
		const char *ans = node_answer(&tgt, cmdline);

		if (!strcmp(ans, "disables")) {
			snprintf(r.target, sizeof(r.target), "disabled at run time");
			snprintf(r.target_why, sizeof(r.target_why), "the target kernel still has runtime disable");
		} else {
			snprintf(r.target, sizeof(r.target), "enabled, no policy");
			snprintf(r.target_why, sizeof(r.target_why),
				 "SELinux starts (%s) and SELINUX=%s only stops the policy load; the disable node answers '%s'",
				 why, r.mode, ans);
		}
		if (cmdline_get(cmdline, "enforcing", v, sizeof(v)) && !strcmp(v, "1") &&
		    !strcmp(r.mode, "disabled") && strcmp(ans, "reject"))
			r.freeze = 1;
	} else {
		snprintf(r.target, sizeof(r.target), "%s", r.mode);
		snprintf(r.target_why, sizeof(r.target_why), "SELINUX=%s, policy loaded at boot", r.mode);
	}

	/* What to do. */
	snprintf(r.file, sizeof(r.file), "/etc/default/grub (GRUB_CMDLINE_LINUX), then update-grub");
	if (r.freeze) {
		snprintf(r.action, sizeof(r.action),
			 "remove enforcing=1 from the kernel command line, or set SELINUX=permissive or enforcing%s: "
			 "with SELINUX=disabled the target kernel freezes the boot in systemd",
			 tgt.shim_accept || tgt.shim_reject ?
			 ", or add selinuxfs_disable=reject (the target kernel has the backport's switch)" : "");
	} else if (!strcmp(r.target, "enabled, no policy")) {
		if (tgt.bootparam) {
			snprintf(r.action, sizeof(r.action),
				 "add selinux=0 to the kernel command line to keep SELinux off");
		} else {
			char list[MAXV];

			if (cmdline_get(cmdline, "lsm", v, sizeof(v))) {
				/* lsm= on the command line wins over security= and CONFIG_LSM. */
				lsm_without_selinux(v, list, sizeof(list));
				snprintf(r.action, sizeof(r.action),
					 "change lsm=%s to lsm=%s on the kernel command line (selinux=0 would be "
					 "ignored: the target kernel lacks CONFIG_SECURITY_SELINUX_BOOTPARAM)", v, list);
			} else if (cmdline_get(cmdline, "security", v, sizeof(v)) && !strcmp(v, "selinux")) {
				snprintf(r.action, sizeof(r.action),
					 "remove security=selinux from the kernel command line (selinux=0 would be "
					 "ignored: the target kernel lacks CONFIG_SECURITY_SELINUX_BOOTPARAM)");
			} else {
				lsm_without_selinux(tgt.lsm, list, sizeof(list));
				snprintf(r.action, sizeof(r.action),
					 "add lsm=%s to the kernel command line (selinux=0 would be ignored: the "
					 "target kernel lacks CONFIG_SECURITY_SELINUX_BOOTPARAM)", list);
			}
		}
	}

	if (summary) {
		printf("today: %s; new kernel: %s; action: %s%s\n", r.today, r.target,
		       r.action[0] ? "yes" : "no", r.freeze ? "; freeze" : "");
	} else if (json) {
		printf("{\n");
		print_json_str("today", r.today, 0);
		print_json_str("today_reason", r.today_why, 0);
		print_json_str("target", r.target, 0);
		print_json_str("target_reason", r.target_why, 0);
		print_json_str("target_config", tgt.name, 0);
		print_json_str("selinux_config", r.mode, 0);
		printf("  \"freeze\": %s,\n", r.freeze ? "true" : "false");
		print_json_str("action", r.action, 0);
		print_json_str("file", r.action[0] ? r.file : "", 1);
		printf("}\n");
	} else {
		printf("SELinux today:      %s\n  why: %s\n", r.today, r.today_why);
		printf("On the new kernel:  %s\n  why: %s\n  judged from: %s\n", r.target, r.target_why,
		       tgt.name);
		if (r.freeze)
			printf("WARNING: enforcing=1 with SELINUX=disabled: this machine will stop at boot\n"
			       "  (systemd: \"Failed to load SELinux policy. Freezing execution.\")\n");
		if (r.action[0])
			printf("To do:              %s\n  where: %s\n", r.action, r.file);
		else
			printf("To do:              nothing\n");
	}
	return r.action[0] ? 1 : 0;
}
