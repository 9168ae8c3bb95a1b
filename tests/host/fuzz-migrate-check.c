// SPDX-License-Identifier: GPL-2.0
/*
 * A deterministic mutation loop over the parsers of selinux-migrate-check: the libselinux
 * model of /etc/selinux/config and of enforcing=, the kernel's command line splitter, the
 * kernel config reader, the LSM order, /proc/filesystems and /proc/mounts, and the text and
 * JSON escapers. Built with -fsanitize=address,undefined (see fuzz-migrate-check.sh), so
 * any memory error or undefined behaviour stops it with a report and a non-zero exit; it
 * also checks a few properties of the results itself.
 *
 *   fuzz-migrate-check SECONDS [SEED]
 *
 * Prints the number of inputs tried. No libFuzzer needed.
 */
#define MIGRATE_CHECK_NO_MAIN
#include "../../tools/selinux-migrate-check.c"

#include <assert.h>
#include <time.h>

#define CAP 8192

static unsigned long long rng_state;

static unsigned long long rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static size_t below(size_t n)
{
	return n ? rnd() % n : 0;
}

static const char *const seeds[] = {
	"# comment\nSELINUX=disabled\nSELINUXTYPE=default\n",
	"SELINUX=bogus\r\nSELINUX= Permissive\t# c\r\n",
	"  SELINUX=enforcing\nselinux=disabled\nSELINUX=enforcingly\n",
	"BOOT_IMAGE=/vmlinuz root=/dev/vda ro quiet enforcing=1 selinux=0 security=selinux\n",
	"enforcing=01 enforcing=0x1 \"lsm=selinux,apparmor\" foo.enforcing=0 -- selinux=0\n",
	"root=/dev/vda\tenforcing= 1 foo=\"a enforcing=1\" apparmor=0 selinux_retired_disable=reject\n",
	"selinux-retired-disable=accept lsm=\"landlock,lockdown,yama,apparmor,selinux\" security=\n",
	("# Linux/x86 6.1.0 Kernel Configuration\nCONFIG_SECURITY_SELINUX=y\n"
	 "CONFIG_SECURITY_SELINUX_BOOTPARAM=y\n# CONFIG_SECURITY_APPARMOR is not set\n"
	 "CONFIG_LSM=\"landlock,lockdown,yama,loadpin,safesetid,integrity,apparmor,selinux,smack,tomoyo,bpf\"\n"),
	("# Linux/arm64 6.12.0-trixie Kernel Configuration\nCONFIG_SECURITY_SELINUX=y\n"
	 "CONFIG_SECURITY_SELINUX_RETIRED_DISABLE_REJECT=y\nCONFIG_SECURITY_SMACK=y\n"
	 "CONFIG_BPF_LSM=y\nCONFIG_LSM=\"smack,selinux\"\n"),
	"nodev\tsysfs\nnodev\tselinuxfs\n\text4\n",
	"/dev/vda / ext4 rw 0 0\nselinuxfs /sys/fs/selinux selinuxfs rw 0 0\ntmpfs /sys/fs/selinux tmpfs rw 0 0\n",
	"capability,landlock,lockdown,yama,selinux",
	"\xc3\xa9\xe2\x80\xa8\xf0\x9f\x98\x80\xc2\x9b\x1b[31m\xff\xfe\xed\xa0\x80",
};

static const char *const tokens[] = {
	"enforcing=", "selinux=", "lsm=", "security=", "apparmor=", "selinux_retired_disable=",
	"--", "\"", "=", ",", " ", "\t", "\n", "\r", "\xa0", "0x", "0", "1", "01", "+1",
	"99999999999999999999", "-1", "SELINUX=", "disabled", "permissive", "enforcing",
	"selinux", "apparmor", "smack", "tomoyo", "capability", "bpf", "CONFIG_LSM=\"",
	"CONFIG_SECURITY_SELINUX=y\n", "CONFIG_SECURITY_APPARMOR=y\n",
	"# CONFIG_SECURITY_SELINUX_BOOTPARAM is not set\n", "# Linux/x86 6.4.0 Kernel Configuration\n",
	"CONFIG_SECURITY_SELINUX_RETIRED_DISABLE_ACCEPT=y\n", "selinuxfs", "/sys/fs/selinux",
	"reject", "accept", "\xff", "\x1b", "\0",
};

#define NSEEDS ARRAY_SIZE(seeds)
#define NTOKENS ARRAY_SIZE(tokens)

static size_t insert(char *buf, size_t len, size_t at, const char *s, size_t sl)
{
	if (len + sl > CAP)
		return len;
	memmove(buf + at + sl, buf + at, len - at);
	memcpy(buf + at, s, sl);
	return len + sl;
}

static size_t mutate(char *buf, size_t len)
{
	size_t at, l, k, rounds = 1 + below(8);
	char c;

	while (rounds--) {
		at = below(len + 1);
		switch (below(7)) {
		case 0:		/* flip a byte */
			if (len)
				buf[below(len)] ^= 1 << below(8);
			break;
		case 1:		/* a random byte */
			c = (char)rnd();
			len = insert(buf, len, at, &c, 1);
			break;
		case 2:		/* a token */
			k = below(NTOKENS);
			len = insert(buf, len, at, tokens[k], k == NTOKENS - 1 ? 1 : strlen(tokens[k]));
			break;
		case 3:		/* delete a run */
			l = below(len - at + 1);
			memmove(buf + at, buf + at + l, len - at - l);
			len -= l;
			break;
		case 4:		/* duplicate a run */
			l = below(len - at + 1);
			if (l < CAP / 4) {
				char tmp[CAP / 4];

				memcpy(tmp, buf + at, l);
				len = insert(buf, len, at, tmp, l);
			}
			break;
		case 5:		/* splice a seed */
			k = below(NSEEDS);
			len = insert(buf, len, at, seeds[k], strlen(seeds[k]));
			break;
		default:	/* a long run of one byte, for the page-sized chunks */
			l = below(5000);
			c = below(2) ? 'x' : ' ';
			if (len + l <= CAP) {
				memmove(buf + at + l, buf + at, len - at);
				memset(buf + at, c, l);
				len += l;
			}
			break;
		}
	}
	return len;
}

/* The JSON escaper's output must be valid UTF-8 with no raw control characters. */
static void check_json(const char *s)
{
	char *out = NULL;
	size_t olen = 0, i = 0, l;
	unsigned int cp;
	FILE *f = open_memstream(&out, &olen);

	assert(f);
	put_json(f, s);
	fclose(f);
	assert(olen >= 2 && out[0] == '"' && out[olen - 1] == '"');
	while (i < olen) {
		l = utf8_next((const unsigned char *)out + i, olen - i, &cp);
		assert(l && !is_control(cp));
		i += l;
	}
	free(out);
}

static void check_text(const char *s)
{
	char *out = NULL;
	size_t olen = 0, i = 0, l;
	unsigned int cp;
	FILE *f = open_memstream(&out, &olen);

	assert(f);
	put_text(f, s);
	fclose(f);
	while (i < olen) {
		l = utf8_next((const unsigned char *)out + i, olen - i, &cp);
		assert(l && !is_control(cp));
		i += l;
	}
	free(out);
}

static void one(const char *buf, size_t len, const char *cfgbuf, size_t cfglen)
{
	static const long pages[] = { 4096, 16, 2, 65536 };
	char *s = malloc(len + 1), why[2 * MAXV], bad[64], out[MAXV];
	unsigned long long v;
	struct kconfig k;
	struct kcmd c;
	long page = pages[below(4)];
	int m, e, starts;
	const char *ans;

	assert(s);
	memcpy(s, buf, len);
	s[len] = '\0';

	m = libselinux_config_mode(buf, len, page, bad, sizeof(bad));
	assert(m >= -2 && m <= 1);
	assert(strlen(bad) < sizeof(bad));
	e = libselinux_cmdline_enforcing(buf, len, page);
	assert(e >= -1);

	kernel_cmdline_parse(s, &c);
	assert(c.selinux >= -1 && c.selinux <= 1 && c.enforcing >= -1 && c.enforcing <= 1);
	assert(c.apparmor >= -1 && c.apparmor <= 1 && c.retired >= -1 && c.retired <= 1);
	assert(strlen(c.lsm) < sizeof(c.lsm) && strlen(c.after_dashes) < sizeof(c.after_dashes));
	(void)k_kstrtoul(s, &v);

	config_init(&k, "fuzz");
	parse_config_buf(&k, cfgbuf, cfglen);
	assert(strlen(k.lsm) < sizeof(k.lsm) && strlen(k.version) < sizeof(k.version));
	k.kind = config_kind(&k);
	starts = selinux_starts(&k, &c, why, sizeof(why));
	assert(starts == 0 || starts == 1);
	assert(strlen(why) < sizeof(why));
	if (starts)
		assert(k.built[L_SELINUX]);
	ans = node_answer(&k, &c);
	assert(!strcmp(ans, "accept") || !strcmp(ans, "reject") || !strcmp(ans, "disables"));
	(void)kind_str(&k);

	/* The same text as a config, an LSM list and /proc files. */
	config_init(&k, "fuzz2");
	parse_config_buf(&k, buf, len);
	(void)in_list(s, "selinux");
	lsm_without_selinux(s, out, sizeof(out));
	assert(!in_list(out, "selinux"));
	(void)fs_registered(s, "selinuxfs");
	(void)selinuxfs_mounted(s);
	check_json(s);
	check_text(s);
	check_json(why);
	free(s);
}

int main(int argc, char **argv)
{
	static char buf[CAP + 1], cfg[CAP + 1];
	double secs = argc > 1 ? atof(argv[1]) : 20;
	unsigned long long n = 0;
	struct timespec t0, t;
	size_t len, cfglen;

	(void)summary;		/* the tool's main() is left out */
	rng_state = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x5e11u;
	if (!rng_state)
		rng_state = 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		const char *a = seeds[below(NSEEDS)], *b = seeds[below(NSEEDS)];

		len = strlen(a);
		memcpy(buf, a, len);
		cfglen = strlen(b);
		memcpy(cfg, b, cfglen);
		len = mutate(buf, len);
		cfglen = mutate(cfg, cfglen);
		one(buf, len, cfg, cfglen);
		n++;
		if (!(n & 255)) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
				break;
		}
	}
	printf("fuzz-migrate-check: %llu inputs, no sanitizer report, every property held\n", n);
	return 0;
}
