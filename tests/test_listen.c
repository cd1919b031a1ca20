/*
 * test_listen.c - where serve listens (server/http/listen.h): the --listen forms
 * accepted and refused, and what listen_open binds: one address, both
 * loopbacks for "localhost", IPv6 literals, the dual-stack "[::]". Every
 * bound socket is checked by connecting to it, over the address family and
 * address the test expects, not by asking the module.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../server/http/listen.h"

#define ARRAY_LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- the forms ---- */

typedef struct split_case {
	const char *text;
	const char *host; /* NULL: refused */
	int port;
	const char *error; /* when refused: a part of the message */
} split_case;

static const split_case SPLITS[] = {
	{ "127.0.0.1:8080", "127.0.0.1", 8080, NULL },
	{ "0.0.0.0:0", "0.0.0.0", 0, NULL },
	{ "localhost:65535", "localhost", 65535, NULL },
	{ "example.test:1", "example.test", 1, NULL },
	{ "[::1]:8080", "::1", 8080, NULL },
	{ "[::]:80", "::", 80, NULL },
	{ "[fe80::1]:9", "fe80::1", 9, NULL },
	{ "[::ffff:127.0.0.1]:9", "::ffff:127.0.0.1", 9, NULL },
	{ "[::1", NULL, 0, "'[' without its ']'" },
	{ "[::1]", NULL, 0, "no :PORT after the ']'" },
	{ "[::1]8080", NULL, 0, "no :PORT after the ']'" },
	{ "[]:8080", NULL, 0, "no host" },
	{ "[localhost]:8080", NULL, 0, "'[localhost]' is not an IPv6 address" },
	{ "[127.0.0.1]:8080", NULL, 0, "is not an IPv6 address" },
	{ "::1:8080", NULL, 0, "IPv6 address without brackets" },
	{ "::1", NULL, 0, "IPv6 address without brackets" },
	{ "::]:1", NULL, 0, "IPv6 address without brackets" },
	{ "a]:1", NULL, 0, "']' without its '['" },
	{ "8080", NULL, 0, "not HOST:PORT" },
	{ "", NULL, 0, "not HOST:PORT" },
	{ "localhost", NULL, 0, "not HOST:PORT" },
	{ ":8080", NULL, 0, "no host" },
	{ "host:", NULL, 0, "no port" },
	{ "[::1]:", NULL, 0, "no port" },
	{ "host:65536", NULL, 0, "port '65536' is not an integer in 0..65535" },
	{ "host:123456", NULL, 0, "port '123456' is not" },
	{ "host:-1", NULL, 0, "port '-1' is not" },
	{ "host:+80", NULL, 0, "port '+80' is not" },
	{ "host: 80", NULL, 0, "port ' 80' is not" },
	{ "host:80x", NULL, 0, "port '80x' is not" },
	{ "[::1]:99999", NULL, 0, "port '99999' is not" },
};

static void test_split(void **state)
{
	(void)state;
	for (int i = 0; i < ARRAY_LEN(SPLITS); i++) {
		const split_case *c = &SPLITS[i];
		char host[256] = "";
		int port = -1, bracketed = -1;
		sf_err err = { 0 };
		int rc = listen_split(c->text, host, sizeof host, &port, &bracketed, &err);
		if (c->host) {
			if (rc)
				fail_msg("'%s' refused: %s", c->text, err.msg);
			assert_string_equal(host, c->host);
			assert_int_equal(port, c->port);
			assert_int_equal(bracketed, c->text[0] == '[');
		} else {
			if (rc != SF_EINVAL)
				fail_msg("'%s' accepted (%s, %d)", c->text, host, port);
			if (!strstr(err.msg, c->error))
				fail_msg("'%s': message '%s' lacks '%s'", c->text, err.msg,
					 c->error);
			assert_null(strchr(err.msg, '\n'));
		}
	}
}

/* A host that does not fit: refused, not cut short. */
static void test_split_long_host(void **state)
{
	(void)state;
	char text[400], host[256];
	memset(text, 'a', 300);
	snprintf(text + 300, sizeof text - 300, ":80");
	int port, bracketed;
	sf_err err = { 0 };
	assert_int_equal(listen_split(text, host, sizeof host, &port, &bracketed, &err), SF_EINVAL);
	assert_non_null(strstr(err.msg, "longer than 255"));
}

/* ---- binding ---- */

/* True when this machine can bind ::1 (no IPv6 loopback in some containers). */
static int have_ipv6_loopback(void)
{
	int fd = socket(AF_INET6, SOCK_STREAM, 0);
	if (fd < 0)
		return 0;
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int ok = bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
	close(fd);
	return ok;
}

/* Connects to `ip` (an IPv4 or IPv6 literal) on `port`: 1 when accepted. */
static int connects(const char *ip, int port)
{
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof ss);
	socklen_t len;
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, ip, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		len = sizeof *v4;
	} else {
		assert_int_equal(inet_pton(AF_INET6, ip, &v6->sin6_addr), 1);
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		len = sizeof *v6;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	int ok = connect(fd, (struct sockaddr *)&ss, len) == 0;
	close(fd);
	return ok;
}

static void test_ipv4(void **state)
{
	(void)state;
	listen_set set;
	sf_err err = { 0 };
	assert_int_equal(listen_open("127.0.0.1:0", &set, &err), 0);
	assert_int_equal(set.nfds, 1);
	assert_true(set.port > 0 && set.port <= 65535);
	char want[64];
	snprintf(want, sizeof want, "http://127.0.0.1:%d", set.port);
	assert_string_equal(set.urls, want);
	assert_true(connects("127.0.0.1", set.port));
	if (have_ipv6_loopback())
		assert_false(connects("::1", set.port)); /* IPv4 only */

	/* The same port again: in use, an operating-system refusal, nothing left open. */
	char text[32];
	snprintf(text, sizeof text, "127.0.0.1:%d", set.port);
	listen_set again;
	assert_int_equal(listen_open(text, &again, &err), SF_ESYS);
	assert_non_null(strstr(err.msg, "in use"));
	assert_int_equal(again.nfds, 0);
	int port = set.port;
	listen_close(&set);
	assert_false(connects("127.0.0.1", port)); /* closed */
	listen_close(NULL);
}

/* "localhost" is both loopbacks, on one port, whatever the hosts file says. */
static void test_localhost(void **state)
{
	(void)state;
	int v6 = have_ipv6_loopback();
	if (!v6)
		fprintf(stderr, "note: no IPv6 loopback here; localhost binds 127.0.0.1 only\n");
	listen_set set;
	sf_err err = { 0 };
	assert_int_equal(listen_open("LocalHost:0", &set, &err), 0);
	assert_int_equal(set.nfds, v6 ? 2 : 1);
	assert_true(connects("127.0.0.1", set.port));
	char want[128];
	if (v6) {
		assert_true(connects("::1", set.port));
		snprintf(want, sizeof want, "http://127.0.0.1:%d, http://[::1]:%d", set.port,
			 set.port);
	} else {
		snprintf(want, sizeof want, "http://127.0.0.1:%d", set.port);
	}
	assert_string_equal(set.urls, want);
	listen_close(&set);
}

static void test_ipv6(void **state)
{
	(void)state;
	if (!have_ipv6_loopback()) {
		fprintf(stderr, "note: skipped, this machine has no IPv6 loopback (::1)\n");
		skip();
	}
	listen_set set;
	sf_err err = { 0 };
	assert_int_equal(listen_open("[::1]:0", &set, &err), 0);
	assert_int_equal(set.nfds, 1);
	char want[64];
	snprintf(want, sizeof want, "http://[::1]:%d", set.port);
	assert_string_equal(set.urls, want);
	assert_true(connects("::1", set.port));
	assert_false(connects("127.0.0.1", set.port));
	listen_close(&set);

	/* "[::]": every interface, IPv4 included (dual stack). */
	assert_int_equal(listen_open("[::]:0", &set, &err), 0);
	assert_int_equal(set.nfds, 1);
	assert_true(connects("::1", set.port));
	assert_true(connects("127.0.0.1", set.port));
	listen_close(&set);
}

/* Values that parse but cannot be this machine's: refused as bad input (exit 2). */
static void test_refused(void **state)
{
	(void)state;
	static const struct {
		const char *text, *error;
		int code;
	} cases[] = {
		{ "nosuchhost.invalid:80", "host 'nosuchhost.invalid' not found", SF_EINVAL },
		{ "192.0.2.1:0", "cannot listen on 192.0.2.1:0: not an address of this machine",
		  SF_EINVAL },
		{ "[::1", "'[' without its ']'", SF_EINVAL },
		{ "host:", "no port", SF_EINVAL },
	};
	for (int i = 0; i < ARRAY_LEN(cases); i++) {
		listen_set set;
		sf_err err = { 0 };
		int rc = listen_open(cases[i].text, &set, &err);
		if (rc != cases[i].code || !strstr(err.msg, cases[i].error))
			fail_msg("'%s': %d '%s', expected %d '%s'", cases[i].text, rc, err.msg,
				 cases[i].code, cases[i].error);
		assert_int_equal(set.nfds, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split), cmocka_unit_test(test_split_long_host),
		cmocka_unit_test(test_ipv4),  cmocka_unit_test(test_localhost),
		cmocka_unit_test(test_ipv6),  cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
