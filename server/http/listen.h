/*
 * listen.h - where `starforge serve` listens: the --listen value parsed,
 * resolved and bound, before anything else starts.
 *
 * The forms are HOST:PORT with HOST an IPv4 address ("127.0.0.1",
 * "0.0.0.0") or a host name, and [ADDRESS]:PORT with an IPv6 address in
 * brackets ("[::1]:8080", "[::]:8080"); PORT is 0..65535, 0 for a free one.
 *
 * One value may mean several addresses, and every one of them is bound, on
 * the same port, so that the service is reachable wherever a client that
 * resolves the same name connects:
 *
 * - "localhost" is the loopback in both families, 127.0.0.1 and ::1, as
 *   curl and browsers treat it (RFC 6761, section 6.3) whatever the hosts
 *   file says; ::1 is left out on a machine without an IPv6 loopback.
 * - any other name is every address getaddrinfo() gives for it; one that
 *   this machine cannot bind (an IPv6 address without IPv6) is left out as
 *   long as another one binds.
 * - "[::]" is every interface in both families (one dual-stack socket);
 *   "0.0.0.0" every IPv4 interface only.
 *
 * Binding happens in the command, before the database is opened, so that
 * a --listen that cannot work is refused without creating anything; the
 * bound sockets are then handed to the HTTP server (http.h).
 */
#ifndef SF_LISTEN_H
#define SF_LISTEN_H

#include <stddef.h>

#include "../../core/err.h"

/* Addresses one --listen may bind at most (a name with more: the first ones). */
#define LISTEN_MAX 8

typedef struct listen_set {
	int fds[LISTEN_MAX]; /* listening sockets, non-blocking and close-on-exec */
	int nfds;
	int port; /* the bound port, the same on every socket */
	/* "http://127.0.0.1:8080, http://[::1]:8080": every bound address, for the log */
	char urls[LISTEN_MAX * 56];
} listen_set;

/*
 * Splits `text` into its host (brackets removed, at most hostsz - 1 bytes)
 * and port, checking the form described above (an IPv6 address must be in
 * brackets, and what is in brackets must be one). Returns 0, or SF_EINVAL
 * with a message that says what is wrong with the value (without repeating
 * it: the caller writes "--listen 'VALUE': " in front of it).
 */
int listen_split(const char *text, char *host, size_t hostsz, int *port, int *bracketed,
		 sf_err *err);

/*
 * Parses `text` (listen_split), resolves its host and binds and listens on
 * every address it means (see above), all on one port. Returns 0 with *set
 * filled in (close it with listen_close), or with nothing left open: SF_EINVAL
 * when the value is malformed, the name does not resolve or an address is
 * not this machine's; SF_ESYS when the operating system refuses (the port is
 * in use, a port below 1024 without the privilege); SF_ENOMEM. The message
 * names the host or address and the reason.
 */
int listen_open(const char *text, listen_set *set, sf_err *err);

/* Closes every socket of `set` (those still open) and empties it; NULL is a no-op. */
void listen_close(listen_set *set);

#endif
