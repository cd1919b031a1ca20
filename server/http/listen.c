/*
 * listen.c - see listen.h.
 *
 * Binding several addresses on one port: the first socket is bound to the
 * port asked for, and when that is 0 (a free one) the others are bound to
 * the port the first one got. That port may be taken on another address,
 * in which case everything is closed and tried again with a new free port,
 * a few times. Each socket gets SO_REUSEADDR (a restart does not wait for
 * the old connections' TIME_WAIT), as libmicrohttpd would give its own; an
 * IPv6 socket is IPv6-only except for the unspecified address "::", which
 * is dual-stack so that "[::]" means every interface in both families.
 */
#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* Tries to bind a free port on every address before giving up (see above). */
#define FREE_PORT_TRIES 8

int listen_split(const char *text, char *host, size_t hostsz, int *port, int *bracketed,
		 sf_err *err)
{
	const char *start = text, *colon;
	size_t len;
	*bracketed = 0;
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (!close)
			return sf_err_set(err, SF_EINVAL,
					  "a '[' without its ']' (an IPv6 address goes in "
					  "brackets: [::1]:8080)");
		if (close[1] != ':')
			return sf_err_set(err, SF_EINVAL,
					  "no :PORT after the ']' (e.g. [::1]:8080)");
		start = text + 1;
		len = (size_t)(close - start);
		colon = close + 1;
		*bracketed = 1;
	} else {
		colon = strrchr(text, ':');
		if (!colon)
			return sf_err_set(err, SF_EINVAL,
					  "not HOST:PORT (e.g. 127.0.0.1:8080, localhost:8080, "
					  "[::1]:8080)");
		len = (size_t)(colon - text);
		if (memchr(text, ':', len))
			return sf_err_set(err, SF_EINVAL,
					  "an IPv6 address without brackets (write "
					  "[ADDRESS]:PORT, e.g. [::1]:8080)");
		if (memchr(text, ']', len))
			return sf_err_set(err, SF_EINVAL, "a ']' without its '['");
	}
	if (len == 0)
		return sf_err_set(err, SF_EINVAL,
				  "no host (0.0.0.0: every IPv4 interface, [::]: every "
				  "interface)");
	if (len >= hostsz)
		return sf_err_set(err, SF_EINVAL, "a host longer than %zu characters", hostsz - 1);
	memcpy(host, start, len);
	host[len] = '\0';
	if (*bracketed) {
		struct addrinfo hints = { .ai_family = AF_INET6, .ai_flags = AI_NUMERICHOST },
				*res = NULL;
		if (getaddrinfo(host, NULL, &hints, &res) != 0)
			return sf_err_set(err, SF_EINVAL, "'[%s]' is not an IPv6 address", host);
		freeaddrinfo(res);
	}
	const char *p = colon + 1;
	size_t digits = strspn(p, "0123456789");
	if (!*p)
		return sf_err_set(err, SF_EINVAL, "no port (0..65535, 0 for a free one)");
	long value = digits && digits <= 5 && !p[digits] ? strtol(p, NULL, 10) : -1;
	if (value < 0 || value > 65535)
		return sf_err_set(err, SF_EINVAL, "port '%s' is not an integer in 0..65535", p);
	*port = (int)value;
	return 0;
}

/* The addresses one host stands for. */
typedef struct addr_list {
	struct sockaddr_storage addr[LISTEN_MAX];
	socklen_t len[LISTEN_MAX];
	int n;
} addr_list;

static void addr_add(addr_list *list, const struct sockaddr *sa, socklen_t len)
{
	if (list->n == LISTEN_MAX || len > sizeof list->addr[0])
		return;
	for (int i = 0; i < list->n; i++)
		if (list->len[i] == len && !memcmp(&list->addr[i], sa, len))
			return; /* getaddrinfo repeats an address per socket type */
	memcpy(&list->addr[list->n], sa, len);
	list->len[list->n++] = len;
}

/* Fills `list` with what `host` means (listen.h); 0, SF_EINVAL or SF_ENOMEM with err set. */
static int resolve(const char *host, int bracketed, addr_list *list, sf_err *err)
{
	list->n = 0;
	if (!bracketed && !strcasecmp(host, "localhost")) {
		struct sockaddr_in v4 = { .sin_family = AF_INET,
					  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		struct sockaddr_in6 v6 = { .sin6_family = AF_INET6,
					   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
		addr_add(list, (struct sockaddr *)&v4, sizeof v4);
		addr_add(list, (struct sockaddr *)&v6, sizeof v6);
		return 0;
	}
	struct addrinfo hints = { .ai_family = bracketed ? AF_INET6 : AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM,
				  .ai_flags = bracketed ? AI_NUMERICHOST : 0 },
			*res = NULL;
	int rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc == EAI_MEMORY)
		return sf_err_set(err, SF_ENOMEM, "out of memory resolving '%s'", host);
	if (rc != 0)
		return sf_err_set(err, SF_EINVAL, "host '%s' not found (%s)", host,
				  rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next)
		if (ai->ai_family == AF_INET || ai->ai_family == AF_INET6)
			addr_add(list, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(res);
	if (!list->n)
		return sf_err_set(err, SF_EINVAL, "host '%s' has no IPv4 or IPv6 address", host);
	return 0;
}

/* "127.0.0.1:8080" or "[::1]:8080" into buf. */
static void addr_text(const struct sockaddr *sa, socklen_t len, int port, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN + 32];
	if (getnameinfo(sa, len, host, sizeof host, NULL, 0, NI_NUMERICHOST) != 0)
		snprintf(host, sizeof host, "?");
	snprintf(buf, size, sa->sa_family == AF_INET6 ? "[%s]:%d" : "%s:%d", host, port);
}

static void set_port(struct sockaddr_storage *ss, int port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
}

/* One socket bound to `sa` and listening; the fd, or -1 with errno set. */
static int bind_one(const struct sockaddr_storage *sa, socklen_t len)
{
	int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int on = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
	if (sa->ss_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		int v6only = !IN6_IS_ADDR_UNSPECIFIED(a);
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only);
	}
	if (bind(fd, (const struct sockaddr *)sa, len) || listen(fd, SOMAXCONN)) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* Why bind(2) refused, as the end of a message; sets *code to SF_EINVAL or SF_ESYS. */
static const char *bind_reason(int e, int *code)
{
	*code = SF_ESYS;
	switch (e) {
	case EADDRINUSE:
		return "the port is in use";
	case EACCES:
		return "permission denied (ports below 1024 need privileges)";
	case EADDRNOTAVAIL:
		*code = SF_EINVAL;
		return "not an address of this machine";
	case EAFNOSUPPORT:
		*code = SF_EINVAL;
		return "this machine has no IPv6";
	default:
		return strerror(e);
	}
}

/*
 * Binds every address of `list` on `port` (0: the first one picks it).
 * Returns 0, 1 when a free port taken on a later address calls for another
 * try, or a code with err set; nothing is left open unless it returns 0.
 */
static int bind_all(addr_list *list, int port, listen_set *set, sf_err *err)
{
	int failed_errno = 0, failed = -1;
	set->nfds = 0;
	set->port = port;
	set->urls[0] = '\0';
	for (int i = 0; i < list->n; i++) {
		set_port(&list->addr[i], set->port);
		int fd = bind_one(&list->addr[i], list->len[i]);
		if (fd < 0) {
			int e = errno;
			if (port == 0 && set->nfds > 0 && e == EADDRINUSE) {
				listen_close(set);
				return 1;
			}
			/* An address this machine cannot have is skipped when others bind. */
			if (list->n > 1 && (e == EADDRNOTAVAIL || e == EAFNOSUPPORT)) {
				if (failed < 0)
					failed = i, failed_errno = e;
				continue;
			}
			failed = i, failed_errno = e;
			break;
		}
		set->fds[set->nfds++] = fd;
		if (set->nfds == 1) {
			struct sockaddr_storage bound;
			socklen_t blen = sizeof bound;
			if (getsockname(fd, (struct sockaddr *)&bound, &blen) == 0)
				set->port =
					ntohs(bound.ss_family == AF_INET6
						      ? ((struct sockaddr_in6 *)&bound)->sin6_port
						      : ((struct sockaddr_in *)&bound)->sin_port);
		}
		char text[INET6_ADDRSTRLEN + 16];
		addr_text((struct sockaddr *)&list->addr[i], list->len[i], set->port, text,
			  sizeof text);
		size_t used = strlen(set->urls);
		snprintf(set->urls + used, sizeof set->urls - used, "%shttp://%s", used ? ", " : "",
			 text);
	}
	if (set->nfds == 0 ||
	    (failed >= 0 && !(failed_errno == EADDRNOTAVAIL || failed_errno == EAFNOSUPPORT))) {
		listen_close(set);
		int code;
		const char *why = bind_reason(failed_errno, &code);
		char text[INET6_ADDRSTRLEN + 16];
		set_port(&list->addr[failed], port);
		addr_text((struct sockaddr *)&list->addr[failed], list->len[failed], port, text,
			  sizeof text);
		return sf_err_set(err, code, "cannot listen on %s: %s", text, why);
	}
	return 0;
}

int listen_open(const char *text, listen_set *set, sf_err *err)
{
	char host[256];
	int port, bracketed, rc;
	memset(set, 0, sizeof *set);
	addr_list list;
	if ((rc = listen_split(text, host, sizeof host, &port, &bracketed, err)) != 0 ||
	    (rc = resolve(host, bracketed, &list, err)) != 0)
		return rc;
	for (int tries = 0; tries < FREE_PORT_TRIES; tries++)
		if ((rc = bind_all(&list, port, set, err)) <= 0)
			return rc;
	return sf_err_set(err, SF_ESYS, "found no port free on every address of '%s'", host);
}

void listen_close(listen_set *set)
{
	if (!set)
		return;
	for (int i = 0; i < set->nfds; i++)
		if (set->fds[i] >= 0)
			close(set->fds[i]);
	set->nfds = 0;
	set->urls[0] = '\0';
}
