/*
 * http.c - libmicrohttpd in external epoll mode on the libuv loop; see
 * http.h for the design.
 *
 * Life of a request: MHD calls on_access first with the headers (we
 * allocate the http_req), then with each piece of body (appended, or
 * counted and dropped once over the limit), then with no data: the request
 * is complete and is dispatched. If the application has not answered by
 * then the connection is suspended; http_respond() stores the response and
 * resumes it, and MHD calls on_access again, where the stored response is
 * queued. on_completed reports the outcome and frees the request.
 *
 * A streamed response is MHD's response-from-callback: stream_read() asks
 * the application for bytes and, when it has none, suspends the
 * connection from inside the callback (the only other place MHD allows
 * it); http_stream_wake() resumes it. Every live request is on the
 * server's list, so that http_server_close() can resume the suspended
 * ones: MHD_stop_daemon() must not find any.
 *
 * Limits against clients that would hold the server: MHD caps connections
 * (in all and per address) and closes silent ones; a body announced over
 * the limit is answered 413 before it is read; and a once-a-second sweep
 * closes a connection that trickles a request for longer than the timeout
 * (http_conn), which MHD's silence timeout would let live for ever.
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "encoding.h"
#include "../base/log.h"

/*
 * An open connection, as the request deadline sees it: MHD's own timeout
 * only measures silence, so a client that sends one byte a second would
 * hold its connection forever. The sweep (on_sweep) closes a connection
 * that has waited longer than cfg.connection_timeout_s for a complete
 * request (headers and body) since it opened or since its last answer.
 */
typedef struct http_conn {
	struct MHD_Connection *conn;
	double since; /* when it began waiting for its current request */
	int busy;     /* a request was dispatched (or refused) and is not done */
	int dropped;  /* the sweep has shut it down; MHD closes it next */
	struct http_conn *prev, *next;
} http_conn;

/*
 * A listening socket besides libmicrohttpd's own, when one --listen means
 * several addresses (listen.h): MHD listens on one socket only, so the
 * loop polls the others, accepts and hands each connection to MHD with
 * MHD_add_connection(), where the same limits apply. While the connection
 * limit is reached the extra sockets are not polled, so that their new
 * connections wait in the backlog as MHD's own do.
 */
typedef struct http_listener {
	uv_poll_t poll; /* first: the close callback gets the listener from it */
	int fd;
	int closing; /* uv_close has been called; the close callback closes fd */
} http_listener;

struct http_server {
	uv_loop_t *loop;
	struct MHD_Daemon *mhd;
	uv_poll_t poll;
	uv_timer_t timer;
	uv_timer_t sweep; /* once a second: the request deadline (http_conn) */
	http_config cfg;
	int port;
	unsigned open;
	int closing, handles_open;
	http_req *reqs;   /* every request between on_access and on_completed */
	http_conn *conns; /* every connection MHD has open */
	unsigned long dropped;
	int closed;  /* a connection closed (or MHD gave up on one) during this MHD_run */
	int gave_up; /* MHD wrote a message during this MHD_run (on_mhd_message) */
	/* Generated request ids: a random prefix, then a counter scrambled by a
	 * bijection (so unique), both set up on the first request. */
	uint64_t id_prefix, id_key, id_next;
	int id_ready;
	void (*on_closed)(void *arg);
	void *closed_arg;
	http_listener extra[HTTP_LISTEN_MAX - 1]; /* cfg.listen_fds[1..] */
	int nextra;
	int extra_paused; /* at the connection limit: extra sockets not polled */
};

typedef struct decoded {
	struct decoded *next;
	char text[];
} decoded;

struct http_req {
	http_server *srv;
	decoded *decoded; /* query values decoded for the application */
	struct MHD_Connection *conn;
	char *method, *path;
	char *body;
	size_t len, cap;
	int dispatched, suspended;
	struct MHD_Response *response; /* ready to queue */
	int status;
	double started;
	void *user;
	const char *extra[2 * HTTP_REQ_EXTRA]; /* http_req_add_headers(): name, value, ... */
	size_t nextra;                         /* entries used in extra */
	int streaming; /* answered by http_respond_stream: `stream` is set */
	http_stream stream;
	char id[HTTP_REQUEST_ID_MAX + 1]; /* http_req_id() */
	http_req *prev, *next;            /* on srv->reqs */
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- driving MHD from the loop ---- */

static void run_mhd(http_server *s);

static void on_timer(uv_timer_t *t)
{
	run_mhd(t->data);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
	(void)status;
	(void)events;
	run_mhd(p->data);
}

/*
 * After MHD gave up on a request by itself (on_mhd_message): the connection
 * it queued its own error answer on for a request never handed to us (a
 * request too big for its memory pool) waits for a socket event that, on
 * an idle connection, never comes, and MHD would close it only at the
 * connection timeout. Shutting the socket down, as the sweep does, is that
 * event: MHD closes the connection in the next run, which run_mhd asks for
 * at once. The client sees its connection closed without an answer, as a
 * bare libmicrohttpd server closes it (MHD could not write its 431 either).
 */
static void wake_given_up(http_server *s)
{
	for (http_conn *c = s->conns; c; c = c->next) {
		if (c->busy || c->dropped)
			continue;
		const union MHD_ConnectionInfo *st =
			MHD_get_connection_info(c->conn, MHD_CONNECTION_INFO_HTTP_STATUS);
		const union MHD_ConnectionInfo *fd =
			MHD_get_connection_info(c->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!st || st->http_status < 400 || !fd)
			continue;
		shutdown(fd->connect_fd, SHUT_RDWR);
		c->dropped = 1;
	}
}

/* Lets MHD do its work, then re-arms the timer from MHD's own timeout. */
static void run_mhd(http_server *s)
{
	if (!s->mhd)
		return;
	s->closed = 0;
	s->gave_up = 0;
	MHD_run(s->mhd);
	if (s->gave_up)
		wake_given_up(s);
	MHD_UNSIGNED_LONG_LONG ms;
	/* At its connection limit MHD takes the listening socket out of its
	 * epoll set, and puts it back only at the start of a run after a
	 * connection has closed: nothing would wake the loop for that run, and
	 * connections waiting in the backlog would wait for ever. */
	if (s->closed)
		uv_timer_start(&s->timer, on_timer, 0, 0);
	else if (MHD_get_timeout(s->mhd, &ms) == MHD_YES)
		uv_timer_start(&s->timer, on_timer, ms > 60000 ? 60000 : (uint64_t)ms, 0);
	else
		uv_timer_stop(&s->timer);
}

/* ---- request ids ---- */

int http_request_id_valid(const char *id)
{
	size_t n = 0;
	if (!id)
		return 0;
	for (; id[n]; n++) {
		char c = id[n];
		int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' || c == '-';
		if (!ok || n == HTTP_REQUEST_ID_MAX)
			return 0;
	}
	return n > 0;
}

/* splitmix64's finaliser: a bijection of 64-bit words that looks random. */
static uint64_t scramble(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* The client's X-Request-Id when sane, else a new one. */
static void request_id_init(http_server *s, http_req *r)
{
	const char *given = MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, "X-Request-Id");
	if (http_request_id_valid(given)) {
		snprintf(r->id, sizeof r->id, "%s", given);
		return;
	}
	if (!s->id_ready) {
		uint64_t seed[2];
		if (getrandom(seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed) {
			/* no entropy yet (early boot): the time and pid still differ per start */
			seed[0] = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
			seed[1] = scramble(seed[0] ^ (uint64_t)(now_s() * 1e9));
		}
		s->id_prefix = seed[0];
		s->id_key = seed[1];
		s->id_ready = 1;
	}
	snprintf(r->id, sizeof r->id, "%016llx%016llx", (unsigned long long)s->id_prefix,
		 (unsigned long long)scramble(s->id_key + s->id_next++));
}

/* ---- MHD callbacks ---- */

static void queue_ready(http_req *r)
{
	MHD_queue_response(r->conn, (unsigned)r->status, r->response);
	MHD_destroy_response(r->response);
	r->response = NULL;
}

/*
 * Appends a piece of body. Returns 0, or -1 when the connection must close:
 * out of memory, or the body has passed the limit. Only a chunked body can
 * get there (a Content-Length over the limit is refused before its body is
 * read, see on_access), and MHD cannot queue an answer in the middle of a
 * body: reading on would let a client stream without end, so it is cut off.
 */
static int append_body(http_req *r, const char *data, size_t n)
{
	if (r->len + n > r->srv->cfg.max_body) {
		r->status = 413; /* for the log and the metrics: closed, not answered */
		return -1;
	}
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 1024;
		while (cap < r->len + n + 1)
			cap *= 2;
		char *b = realloc(r->body, cap);
		if (!b)
			return -1;
		r->body = b;
		r->cap = cap;
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
	r->body[r->len] = '\0';
	return 0;
}

/* The connection's deadline record (NULL when it could not be allocated). */
static http_conn *conn_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/*
 * True when the request announces a body over the limit in its
 * Content-Length (a chunked body is measured as it comes, append_body).
 */
static int announced_too_large(const http_server *s, struct MHD_Connection *conn)
{
	const char *cl =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (!cl ||
	    MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
		return 0;
	char *end;
	errno = 0;
	unsigned long long n = strtoull(cl, &end, 10);
	return end != cl && (errno == ERANGE || n > s->cfg.max_body);
}

/* 413, its detail naming the limit. */
static void respond_too_large(http_req *r)
{
	char body[320];
	int n = snprintf(body, sizeof body,
			 "{\"type\":\"https://starforge.dev/problems/body-too-large\","
			 "\"title\":\"Request body too large\",\"status\":413,"
			 "\"detail\":\"the request body is over the limit of %zu bytes\"}",
			 r->srv->cfg.max_body);
	http_respond(r, 413, "application/problem+json", body, (size_t)n, NULL);
}

/* Counts the request's Content-Length headers (MHD_get_connection_values). */
static enum MHD_Result count_length(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	(void)kind;
	(void)value;
	if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH))
		++*(int *)cls;
	return MHD_YES;
}

/*
 * The framing problem of a request whose headers libmicrohttpd took, or
 * NULL: more than one Content-Length (the first would win here and the
 * rest of the bytes become a second request, while a proxy that takes the
 * last sees one request: smuggling), a Transfer-Encoding other than
 * exactly "chunked" (libmicrohttpd 0.9.75 then waits for a body it cannot
 * read until the connection timeout), or both at once. Asked before the
 * body is read, so the answer goes out and the connection closes. (A
 * malformed Content-Length, "abc" or "-5", libmicrohttpd refuses itself
 * before the service sees the request: docs/RELIABILITY.md.)
 */
static const char *framing_problem(struct MHD_Connection *conn)
{
	int lengths = 0;
	MHD_get_connection_values(conn, MHD_HEADER_KIND, count_length, &lengths);
	const char *te = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_TRANSFER_ENCODING);
	if (lengths > 1)
		return "more than one Content-Length header";
	if (te && strcasecmp(te, "chunked"))
		return "a Transfer-Encoding other than chunked";
	if (te && lengths)
		return "both Content-Length and Transfer-Encoding";
	return NULL;
}

/* 400, naming the framing problem; the connection closes after it. */
static void respond_bad_framing(http_req *r, const char *problem)
{
	char body[320];
	int n = snprintf(body, sizeof body,
			 "{\"type\":\"https://starforge.dev/problems/invalid-framing\","
			 "\"title\":\"Bad request framing\",\"status\":400,"
			 "\"detail\":\"the request has %s, so where its body ends is not "
			 "certain; it was not read\"}",
			 problem);
	const char *h[] = { "Connection", "close", NULL };
	http_respond(r, 400, "application/problem+json", body, (size_t)n, h);
}

/* The request is complete (or refused): its connection's deadline stops. */
static void mark_dispatched(http_req *r)
{
	r->dispatched = 1;
	http_conn *c = conn_of(r->conn);
	if (c)
		c->busy = 1;
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
				 const char *method, const char *version, const char *upload_data,
				 size_t *upload_size, void **con_cls)
{
	(void)version;
	http_server *s = cls;
	http_req *r = *con_cls;
	if (!r) {
		r = calloc(1, sizeof *r);
		if (!r)
			return MHD_NO;
		r->srv = s;
		r->conn = conn;
		r->method = strdup(method);
		r->path = strdup(url);
		r->started = now_s();
		r->status = 0;
		r->next = s->reqs;
		if (s->reqs)
			s->reqs->prev = r;
		s->reqs = r;
		*con_cls = r;
		if (!r->method || !r->path)
			return MHD_NO;
		request_id_init(s, r);
		const char *framing = framing_problem(conn);
		if (framing) {
			/* As a body too large: answered before any body is read. */
			mark_dispatched(r);
			respond_bad_framing(r, framing);
			queue_ready(r);
		} else if (announced_too_large(s, conn)) {
			/* Answered before the body is read: MHD then reads no more
			 * from the connection and closes it after the answer. */
			mark_dispatched(r);
			respond_too_large(r);
			queue_ready(r);
		}
		return MHD_YES;
	}
	if (*upload_size) {
		if (append_body(r, upload_data, *upload_size) < 0)
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	if (r->response) {
		queue_ready(r);
		return MHD_YES;
	}
	if (r->dispatched)
		return MHD_YES;
	if (s->closing)
		return MHD_NO; /* a request that arrives as the server closes is not started */
	mark_dispatched(r);
	s->cfg.dispatch(s->cfg.app, r);
	if (r->response) {
		queue_ready(r);
	} else if (!r->status) {
		r->suspended = 1;
		MHD_suspend_connection(conn);
	}
	return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode code)
{
	(void)code;
	http_server *s = cls;
	http_req *r = *con_cls;
	if (!r)
		return;
	http_conn *c = conn_of(conn);
	if (c) { /* a kept-alive connection's next request has its own deadline */
		c->busy = 0;
		c->since = now_s();
	}
	if (r->prev)
		r->prev->next = r->next;
	else
		s->reqs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	if (s->cfg.done)
		s->cfg.done(s->cfg.app, r, r->status, now_s() - r->started);
	if (r->streaming)
		r->stream.closed(r->stream.arg);
	if (r->response)
		MHD_destroy_response(r->response);
	while (r->decoded) {
		decoded *d = r->decoded;
		r->decoded = d->next;
		free(d);
	}
	free(r->method);
	free(r->path);
	free(r->body);
	free(r);
	*con_cls = NULL;
}

static void listeners_resume(http_server *s);

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	http_server *s = cls;
	http_conn *c = *socket_context;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		s->open++;
		/* Without a record (out of memory) the connection has no request
		 * deadline, only MHD's timeout. */
		if ((c = calloc(1, sizeof *c)) != NULL) {
			c->conn = conn;
			c->since = now_s();
			c->next = s->conns;
			if (s->conns)
				s->conns->prev = c;
			s->conns = c;
		}
		*socket_context = c;
		return;
	}
	if (s->open)
		s->open--;
	s->closed = 1;
	listeners_resume(s);
	if (c) {
		if (c->prev)
			c->prev->next = c->next;
		else
			s->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		free(c);
		*socket_context = NULL;
	}
}

/*
 * Once a second: shuts down every connection that has waited longer than
 * the timeout for a complete request (http_conn), the slow client's
 * defence that MHD's silence timeout is not. shutdown(2), not close(2):
 * the descriptor stays MHD's, which sees end-of-file on it at once and
 * closes the connection as if the client had.
 */
static void on_sweep(uv_timer_t *t)
{
	http_server *s = t->data;
	double now = now_s();
	for (http_conn *c = s->conns; c; c = c->next) {
		if (c->busy || c->dropped || now - c->since < (double)s->cfg.connection_timeout_s)
			continue;
		const union MHD_ConnectionInfo *fd =
			MHD_get_connection_info(c->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *addr =
			MHD_get_connection_info(c->conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		if (!fd)
			continue;
		char ip[INET6_ADDRSTRLEN] = "?";
		if (addr && addr->client_addr && addr->client_addr->sa_family == AF_INET)
			inet_ntop(AF_INET, &((struct sockaddr_in *)addr->client_addr)->sin_addr, ip,
				  sizeof ip);
		else if (addr && addr->client_addr && addr->client_addr->sa_family == AF_INET6)
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)addr->client_addr)->sin6_addr,
				  ip, sizeof ip);
		shutdown(fd->connect_fd, SHUT_RDWR);
		c->dropped = 1;
		s->dropped++;
		log_info("http: closed a connection from %s: no complete request in %u s", ip,
			 s->cfg.connection_timeout_s);
	}
	/* MHD notices the end-of-file of dropped connections and closes them;
	 * and whatever else it left for a later run is done within a second,
	 * even on an idle server (on_mhd_message). */
	run_mhd(s);
}

/*
 * MHD percent-decodes the path before the application sees it, which would
 * turn "a%2Fb" into two segments and decode "%2548" twice. Keep the text
 * as sent: routes.c decodes path segments, http_req_query() query values.
 */
static size_t keep_escaped(void *cls, struct MHD_Connection *conn, char *s)
{
	(void)cls;
	(void)conn;
	return strlen(s);
}

/* ---- the extra listening sockets (http_listener) ---- */

/* Accepts what waits on an extra socket and hands it to MHD. */
static void on_listener(uv_poll_t *p, int status, int events)
{
	(void)events;
	http_listener *l = (http_listener *)p;
	http_server *s = p->data;
	if (status < 0 || !s->mhd)
		return;
	for (int i = 0; i < 64; i++) {
		if (s->cfg.connection_limit && s->open >= s->cfg.connection_limit) {
			for (int k = 0; k < s->nextra; k++)
				uv_poll_stop(&s->extra[k].poll);
			s->extra_paused = 1;
			break;
		}
		struct sockaddr_storage addr;
		socklen_t len = sizeof addr;
		int fd = accept(l->fd, (struct sockaddr *)&addr, &len);
		if (fd < 0)
			break; /* EAGAIN: nothing more; otherwise poll tells us again */
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		/* On failure (a limit) MHD has closed fd. */
		MHD_add_connection(s->mhd, fd, (struct sockaddr *)&addr, len);
	}
	run_mhd(s);
}

/* Polls the extra sockets again once a connection has closed below the limit. */
static void listeners_resume(http_server *s)
{
	if (!s->extra_paused || s->open >= s->cfg.connection_limit)
		return;
	s->extra_paused = 0;
	for (int k = 0; k < s->nextra; k++)
		if (!s->extra[k].closing)
			uv_poll_start(&s->extra[k].poll, UV_READABLE, on_listener);
}

static void on_handle_closed(uv_handle_t *h);

static void on_listener_closed(uv_handle_t *h)
{
	http_listener *l = (http_listener *)h;
	close(l->fd);
	l->fd = -1;
	on_handle_closed(h);
}

/* Stops accepting on the extra sockets and closes them (once). */
static void listeners_stop(http_server *s)
{
	for (int k = 0; k < s->nextra; k++) {
		if (s->extra[k].closing)
			continue;
		s->extra[k].closing = 1;
		uv_close((uv_handle_t *)&s->extra[k].poll, on_listener_closed);
	}
}

/* ---- the server ---- */

/*
 * libmicrohttpd's own messages (a malformed request line, a failed
 * accept) go to the service's log like every other line: stamped, escaped,
 * and JSON under --log-format json. MHD ends its messages with a newline.
 * MHD also writes one when it gives up on a request by itself (one too big
 * for its memory pool: about 600 query arguments), and then closes that
 * connection only in a later run, which nothing would wake on an idle
 * server (the socket's readiness was consumed): so every message asks for
 * another run at once, with the given-up connection shut down first
 * (wake_given_up). The sweep runs MHD every second as well.
 */
__attribute__((format(printf, 2, 0))) static void on_mhd_message(void *cls, const char *fmt,
								 va_list ap)
{
	http_server *s = cls;
	if (s)
		s->closed = s->gave_up = 1;
	char text[512];
	int n = vsnprintf(text, sizeof text, fmt, ap);
	if (n < 0)
		return;
	size_t len = strlen(text);
	while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		text[--len] = '\0';
	log_error("http: libmicrohttpd: %s", text);
}

http_server *http_server_new(uv_loop_t *loop, const http_config *cfg, sf_err *err)
{
	if (!cfg->listen_fds || cfg->nlisten < 1 || cfg->nlisten > HTTP_LISTEN_MAX) {
		sf_err_set(err, SF_EINVAL, "the HTTP server needs 1..%d listening sockets",
			   HTTP_LISTEN_MAX);
		return NULL;
	}
	http_server *s = calloc(1, sizeof *s);
	if (!s) {
		sf_err_set(err, SF_ENOMEM, "out of memory starting the HTTP server");
		return NULL;
	}
	s->loop = loop;
	s->cfg = *cfg;
	s->cfg.listen_fds = NULL; /* the caller's array need not outlive this call */
	struct sockaddr_storage bound;
	socklen_t blen = sizeof bound;
	if (getsockname(cfg->listen_fds[0], (struct sockaddr *)&bound, &blen) == 0)
		s->port = ntohs(bound.ss_family == AF_INET6
					? ((struct sockaddr_in6 *)&bound)->sin6_port
					: ((struct sockaddr_in *)&bound)->sin_port);
	s->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG, 0,
				  NULL, NULL, on_access, s, MHD_OPTION_EXTERNAL_LOGGER,
				  on_mhd_message, s, MHD_OPTION_LISTEN_SOCKET,
				  (MHD_socket)cfg->listen_fds[0], MHD_OPTION_NOTIFY_COMPLETED,
				  on_completed, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
				  MHD_OPTION_CONNECTION_LIMIT, cfg->connection_limit,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->per_ip_limit,
				  MHD_OPTION_CONNECTION_TIMEOUT, cfg->connection_timeout_s,
				  MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped, NULL, MHD_OPTION_END);
	if (!s->mhd) {
		sf_err_set(err, SF_ESYS, "cannot start the HTTP server on port %d", s->port);
		free(s);
		return NULL;
	}
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info || uv_poll_init(loop, &s->poll, info->epoll_fd) ||
	    uv_timer_init(loop, &s->timer) || uv_timer_init(loop, &s->sweep)) {
		sf_err_set(err, SF_ESYS, "cannot watch the HTTP server's events");
		/* MHD_stop_daemon would close the caller's socket: take it back first. */
		MHD_quiesce_daemon(s->mhd);
		MHD_stop_daemon(s->mhd);
		free(s);
		return NULL;
	}
	s->handles_open = 3;
	s->poll.data = s;
	s->timer.data = s;
	s->sweep.data = s;
	for (int k = 1; k < cfg->nlisten; k++) {
		http_listener *l = &s->extra[s->nextra];
		l->fd = cfg->listen_fds[k];
		l->poll.data = s;
		if (uv_poll_init(loop, &l->poll, l->fd)) {
			sf_err_set(err, SF_ESYS, "cannot watch a listening socket");
			MHD_quiesce_daemon(s->mhd);
			MHD_stop_daemon(s->mhd);
			s->mhd = NULL;
			/* s is freed once the handles initialised so far have closed. */
			uv_close((uv_handle_t *)&s->poll, on_handle_closed);
			uv_close((uv_handle_t *)&s->timer, on_handle_closed);
			uv_close((uv_handle_t *)&s->sweep, on_handle_closed);
			for (int m = 0; m < s->nextra; m++)
				uv_close((uv_handle_t *)&s->extra[m].poll, on_handle_closed);
			return NULL;
		}
		s->nextra++;
		s->handles_open++;
	}
	uv_poll_start(&s->poll, UV_READABLE, on_poll);
	uv_timer_start(&s->sweep, on_sweep, 1000, 1000);
	for (int k = 0; k < s->nextra; k++)
		uv_poll_start(&s->extra[k].poll, UV_READABLE, on_listener);
	run_mhd(s);
	return s;
}

int http_server_port(const http_server *s)
{
	return s->port;
}

unsigned http_server_connections(const http_server *s)
{
	return s->open;
}

unsigned long http_server_dropped(const http_server *s)
{
	return s->dropped;
}

void http_server_quiesce(http_server *s)
{
	if (!s->mhd)
		return;
	MHD_socket fd = MHD_quiesce_daemon(s->mhd);
	if (fd != MHD_INVALID_SOCKET)
		close(fd);
	listeners_stop(s);
}

static void on_handle_closed(uv_handle_t *h)
{
	http_server *s = h->data;
	if (--s->handles_open)
		return;
	void (*cb)(void *) = s->on_closed;
	void *arg = s->closed_arg;
	free(s);
	if (cb)
		cb(arg);
}

void http_server_close(http_server *s, void (*on_closed)(void *arg), void *arg)
{
	s->on_closed = on_closed;
	s->closed_arg = arg;
	s->closing = 1; /* streams end: stream_read() no longer asks the application */
	uv_poll_stop(&s->poll);
	uv_timer_stop(&s->timer);
	uv_timer_stop(&s->sweep);
	listeners_stop(s);
	if (s->mhd) {
		/* MHD takes resumed connections off its suspended list in MHD_run. */
		int resumed = 0;
		for (http_req *r = s->reqs; r; r = r->next) {
			if (r->suspended) {
				r->suspended = 0;
				MHD_resume_connection(r->conn);
				resumed = 1;
			}
		}
		if (resumed)
			MHD_run(s->mhd);
		MHD_stop_daemon(s->mhd);
		s->mhd = NULL;
	}
	uv_close((uv_handle_t *)&s->poll, on_handle_closed);
	uv_close((uv_handle_t *)&s->timer, on_handle_closed);
	uv_close((uv_handle_t *)&s->sweep, on_handle_closed);
}

/* ---- requests ---- */

const char *http_req_method(const http_req *r)
{
	return r->method;
}

const char *http_req_path(const http_req *r)
{
	return r->path;
}

static int hex_value(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

size_t http_query_decode(const char *raw, char *out)
{
	size_t n = strlen(raw);
	char *o = out;
	for (size_t i = 0; i < n; i++) {
		int hi, lo;
		if (raw[i] == '+') {
			*o++ = ' ';
		} else if (raw[i] == '%' && i + 2 < n + 1 && (hi = hex_value(raw[i + 1])) >= 0 &&
			   (lo = hex_value(raw[i + 2])) >= 0 && (hi | lo)) {
			*o++ = (char)(hi << 4 | lo);
			i += 2;
		} else {
			*o++ = raw[i];
		}
	}
	*o = '\0';
	return (size_t)(o - out);
}

/*
 * A query value as the application should see it (http_query_decode).
 * Copies live until the request is done.
 */
static const char *decode_query(http_req *r, const char *raw)
{
	decoded *d = malloc(sizeof *d + strlen(raw) + 1);
	if (!d)
		return NULL;
	http_query_decode(raw, d->text);
	d->next = r->decoded;
	r->decoded = d;
	return d->text;
}

const char *http_req_query(const http_req *r, const char *key)
{
	/* Keys are compared as sent; every key this service uses is plain ASCII. */
	const char *raw = MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
	return raw ? decode_query((http_req *)r, raw) : NULL;
}

const char *http_req_header(const http_req *r, const char *name)
{
	return MHD_lookup_connection_value(r->conn, MHD_HEADER_KIND, name);
}

typedef struct each_ctx {
	http_req *r;
	void (*fn)(void *arg, const char *key, const char *value);
	void *arg;
} each_ctx;

static enum MHD_Result each_value(void *cls, enum MHD_ValueKind kind, const char *key,
				  const char *value)
{
	(void)kind;
	each_ctx *c = cls;
	const char *k = decode_query(c->r, key), *v = decode_query(c->r, value ? value : "");
	if (k && v)
		c->fn(c->arg, k, v);
	return MHD_YES;
}

int http_req_each_query(const http_req *r,
			void (*fn)(void *arg, const char *key, const char *value), void *arg)
{
	each_ctx c = { (http_req *)r, fn, arg };
	return MHD_get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, each_value, &c);
}

const char *http_req_id(const http_req *r)
{
	return r->id;
}

int http_req_accepts_gzip(const http_req *r)
{
	return enc_accepts_gzip(http_req_header(r, "Accept-Encoding"));
}

const char *http_req_body(const http_req *r, size_t *len)
{
	*len = r->len;
	return r->body ? r->body : "";
}

void http_req_set_user(http_req *r, void *user)
{
	r->user = user;
}

void *http_req_user(const http_req *r)
{
	return r->user;
}

int http_req_add_headers(http_req *r, const char *const *headers)
{
	size_t n = 0;
	while (headers && headers[n])
		n += 2;
	if (r->nextra + n > sizeof r->extra / sizeof r->extra[0])
		return SF_EINVAL;
	memcpy(r->extra + r->nextra, headers, n * sizeof *headers);
	r->nextra += n;
	return 0;
}

/* Makes `resp` the answer to `r`, with its headers, and resumes a suspended request. */
static void attach_response(http_req *r, struct MHD_Response *resp, int status,
			    const char *content_type, const char *const *headers)
{
	if (content_type)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	for (size_t i = 0; headers && headers[i]; i += 2)
		MHD_add_response_header(resp, headers[i], headers[i + 1]);
	for (size_t i = 0; i < r->nextra; i += 2)
		MHD_add_response_header(resp, r->extra[i], r->extra[i + 1]);
	MHD_add_response_header(resp, "X-Request-Id", r->id);
	r->status = status;
	r->response = resp;
	if (r->suspended) {
		r->suspended = 0;
		MHD_resume_connection(r->conn);
		/* MHD only notices a resumed connection on its next run. */
		uv_timer_start(&r->srv->timer, on_timer, 0, 0);
	}
}

void http_respond_encoded(http_req *r, int status, const char *content_type, const char *body,
			  size_t len, const char *encoding, const char *const *headers)
{
	if (r->status)
		return; /* answered already */
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return; /* out of memory: MHD will close the connection */
	if (encoding)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, encoding);
	attach_response(r, resp, status, content_type, headers);
}

static int has_header(const char *const *headers, const char *name)
{
	for (size_t i = 0; headers && headers[i]; i += 2)
		if (!strcasecmp(headers[i], name))
			return 1;
	return 0;
}

void http_respond(http_req *r, int status, const char *content_type, const char *body, size_t len,
		  const char *const *headers)
{
	if (r->status)
		return; /* answered already */
	if (status == 204 || status == 304 || len < ENC_MIN_BYTES ||
	    !enc_compressible(content_type) || has_header(headers, "ETag")) {
		http_respond_encoded(r, status, content_type, body, len, NULL, headers);
		return;
	}
	/* The representation depends on Accept-Encoding: say so, and add the
	 * caller's headers after Vary (at most HTTP_REQ_EXTRA pairs, as theirs). */
	const char *h[2 * 16 + 3] = { "Vary", "Accept-Encoding" };
	size_t n = 2;
	for (size_t i = 0; headers && headers[i] && n + 3 < sizeof h / sizeof h[0]; i += 2) {
		h[n++] = headers[i];
		h[n++] = headers[i + 1];
	}
	h[n] = NULL;
	char *gz = NULL;
	size_t gzlen = 0;
	if (http_req_accepts_gzip(r) && enc_gzip(body, len, &gz, &gzlen) == 0)
		http_respond_encoded(r, status, content_type, gz, gzlen, "gzip", h);
	else
		http_respond_encoded(r, status, content_type, body, len, NULL, h);
	free(gz);
}

/* ---- streams ---- */

/* MHD's content reader for a streamed response; see http_stream.read. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)pos;
	http_req *r = cls;
	if (r->srv->closing)
		return MHD_CONTENT_READER_END_OF_STREAM;
	if (!max)
		return 0; /* MHD calls again once there is room */
	long n = r->stream.read(r->stream.arg, buf, max);
	if (n > 0)
		return (ssize_t)n;
	if (n == 0) {
		/* Nothing yet: no polling; http_stream_wake() resumes. */
		r->suspended = 1;
		MHD_suspend_connection(r->conn);
		return 0;
	}
	return MHD_CONTENT_READER_END_OF_STREAM;
}

/* The content reader of a streamed answer to HEAD: nothing, ever. */
static ssize_t head_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)cls;
	(void)pos;
	(void)buf;
	(void)max;
	return MHD_CONTENT_READER_END_OF_STREAM;
}

int http_respond_stream(http_req *r, int status, const char *content_type,
			const char *const *headers, const http_stream *stream)
{
	if (r->status)
		return SF_EINVAL; /* answered already */
	/*
	 * HEAD gets the headers alone. MHD 0.9.75 (Debian 12's) still ends a
	 * chunked answer to HEAD with the last chunk, "0\r\n\r\n", which a
	 * keep-alive client reads as the start of its next response. So a
	 * stream's HEAD is not chunked (MHD_RF_HTTP_1_0_COMPATIBLE_STRICT): a
	 * stream has no length to promise, so the connection closes after the
	 * headers.
	 * The stream's closed() still runs when the request ends, so callers
	 * need not care which method it was.
	 */
	int head = !strcmp(r->method, "HEAD");
	struct MHD_Response *resp = MHD_create_response_from_callback(
		MHD_SIZE_UNKNOWN, 4096, head ? head_read : stream_read, r, NULL);
	if (!resp)
		return SF_ENOMEM;
	enum MHD_ResponseFlags flags = head ? MHD_RF_HTTP_1_0_COMPATIBLE_STRICT : MHD_RF_NONE;
	if (MHD_set_response_options(resp, flags, MHD_RO_END) != MHD_YES) {
		MHD_destroy_response(resp);
		return SF_ENOMEM;
	}
	r->stream = *stream;
	r->streaming = 1;
	attach_response(r, resp, status, content_type, headers);
	return 0;
}

void http_stream_wake(http_req *r)
{
	if (!r->streaming || !r->suspended)
		return;
	r->suspended = 0;
	MHD_resume_connection(r->conn);
	/* MHD only notices a resumed connection on its next run. */
	uv_timer_start(&r->srv->timer, on_timer, 0, 0);
}
