/*
 * http.h - the HTTP front: libmicrohttpd driven by the service's libuv loop.
 *
 * MHD runs in "external" mode with its own epoll set; the loop watches that
 * epoll fd with a uv_poll and calls MHD_run when it is readable, and a
 * uv_timer re-armed from MHD_get_timeout covers MHD's timeouts. So every
 * MHD callback, and every handler, runs on the loop thread, the thread that
 * owns the service's state: no locks around it.
 *
 * A request reaches the application once, complete (headers and body,
 * within the body limit), through the dispatch callback. The handler
 * answers with http_respond() at once, or later: a request not answered
 * when dispatch returns is suspended (MHD_suspend_connection) and resumed by
 * the http_respond() that eventually comes, typically from a worker's
 * after-work callback on the loop thread. A suspended connection costs no
 * thread and no polling.
 *
 * A streamed answer (http_respond_stream, for Server-Sent Events) uses the
 * same mechanism for its body: MHD asks the application's read callback
 * for bytes whenever the socket can take more; when the application has
 * nothing yet, the connection is suspended from inside that callback and
 * http_stream_wake() resumes it once there is. Before the server stops,
 * every suspended connection is resumed, because MHD must not be stopped
 * with connections still suspended.
 */
#ifndef SF_HTTP_H
#define SF_HTTP_H

#include <stddef.h>
#include <uv.h>

#include "../../core/err.h"

typedef struct http_server http_server;
typedef struct http_req http_req;

/* Called on the loop thread with each complete request. */
typedef void (*http_dispatch_fn)(void *app, http_req *req);
/* Called on the loop thread when a request is done (response sent or connection lost). */
typedef void (*http_done_fn)(void *app, http_req *req, int status, double seconds);

/* Listening sockets one server takes at most. */
#define HTTP_LISTEN_MAX 8

typedef struct http_config {
	/*
	 * The sockets to serve, bound and listening (listen.h binds them, on
	 * one port): listen_fds[0..nlisten-1], 1 <= nlisten <= HTTP_LISTEN_MAX.
	 * The first is libmicrohttpd's own listening socket; connections to
	 * the others are accepted here and handed to it. On success the
	 * server owns them and closes them (http_server_quiesce, _close); on
	 * failure they remain the caller's.
	 */
	const int *listen_fds;
	int nlisten;
	/*
	 * Bodies above this never reach the app: a Content-Length over it is
	 * answered 413 before the body is read, and a chunked body that grows
	 * past it has its connection closed.
	 */
	size_t max_body;
	unsigned connection_limit; /* connections open at once; beyond, MHD closes new ones */
	unsigned per_ip_limit;     /* the same per client address; 0: none */
	/*
	 * A connection is closed when it has been silent this long (MHD's
	 * timeout), and also when it has not delivered a complete request,
	 * headers and body, this long after it opened or after its previous
	 * answer, however steadily it trickles bytes (a slow client).
	 */
	unsigned connection_timeout_s;
	http_dispatch_fn dispatch;
	http_done_fn done;
	void *app;
} http_config;

/*
 * Starts serving cfg->listen_fds on `loop`. Returns NULL with `err` set
 * when libmicrohttpd or the loop cannot start (the sockets are then still
 * the caller's).
 */
http_server *http_server_new(uv_loop_t *loop, const http_config *cfg, sf_err *err);

/* The bound port (of the first socket; listen.h binds them all on one). */
int http_server_port(const http_server *s);

/* Stops accepting new connections; requests in flight continue. */
void http_server_quiesce(http_server *s);

/* Connections currently open. */
unsigned http_server_connections(const http_server *s);

/* Connections closed so far for not delivering a request in time (connection_timeout_s). */
unsigned long http_server_dropped(const http_server *s);

/*
 * Stops MHD and closes the loop handles; `on_closed` runs on the loop thread
 * once the handles are closed, after which `s` is freed. Suspended requests
 * are resumed first and then closed with their connections (a stream's
 * read callback is not called again; its closed callback is); requests not
 * answered yet are dropped.
 */
void http_server_close(http_server *s, void (*on_closed)(void *arg), void *arg);

/* The request line. The path excludes the query string; HEAD is reported as is. */
const char *http_req_method(const http_req *r);
const char *http_req_path(const http_req *r);

/* A query argument (decoded) or header value; NULL when absent. */
const char *http_req_query(const http_req *r, const char *key);
const char *http_req_header(const http_req *r, const char *name);

/*
 * Calls fn(arg, key, value) for every query argument in order; returns the
 * number of arguments seen.
 */
int http_req_each_query(const http_req *r,
			void (*fn)(void *arg, const char *key, const char *value), void *arg);

/*
 * Decodes the query key or value `raw` (NUL-terminated, as sent) into
 * `out` (at least strlen(raw) + 1 bytes): '+' is a space and %XX a byte; a
 * bad escape, and "%00", are kept as written, so the result holds no NUL
 * but its terminator. Returns the decoded length (at most strlen(raw)).
 * Pure: what http_req_query() and http_req_each_query() apply.
 */
size_t http_query_decode(const char *raw, char *out);

/*
 * The request's id: the client's X-Request-Id when it is sane
 * (http_request_id_valid), else one generated here (32 hex digits, unique
 * within the process: a random prefix and a scrambled counter). Every
 * answer to the request carries it back as X-Request-Id, errors, 304s,
 * streams, preflights and the early 413 included; the request log line
 * shows it. Never NULL.
 */
const char *http_req_id(const http_req *r);

/* The longest request id taken from a client. */
#define HTTP_REQUEST_ID_MAX 128

/* True when `id` is 1..HTTP_REQUEST_ID_MAX characters of [A-Za-z0-9._:-]. Pure. */
int http_request_id_valid(const char *id);

/* True when the request's Accept-Encoding makes gzip the coding to send (encoding.h). */
int http_req_accepts_gzip(const http_req *r);

/* The body (NUL-terminated; may contain NULs) and its length. */
const char *http_req_body(const http_req *r, size_t *len);

/* Extra headers http_req_add_headers() may attach to one request. */
#define HTTP_REQ_EXTRA 8

/*
 * Headers (name, value pairs ended by NULL) that the answer to `r` carries
 * besides its own, whichever handler gives it: set before routing, for
 * headers every answer needs (CORS). The array is copied, the strings are
 * not: they must stay valid until `r` is answered. Returns 0, or SF_EINVAL
 * (nothing added) when the request would hold more than HTTP_REQ_EXTRA.
 */
int http_req_add_headers(http_req *r, const char *const *headers);

/* Application data attached to the request (e.g. the route name), and the
 * value given to the last http_req_set_user(). */
void http_req_set_user(http_req *r, void *user);
void *http_req_user(const http_req *r);

/*
 * Answers `r` with `status`, `content_type` and a copy of body[0..len-1],
 * plus extra headers given as name, value pairs ended by NULL (headers may be
 * NULL). Exactly once per request; valid until the request is done. Safe to
 * call from dispatch or later on the loop thread.
 *
 * A body of a compressible type (enc_compressible) and at least
 * ENC_MIN_BYTES is sent gzip-compressed when the client accepts gzip
 * (Content-Encoding: gzip), and either way carries Vary: Accept-Encoding.
 * Not when `headers` hold an ETag: an ETag names one representation's
 * bytes, so such answers choose their coding themselves
 * (http_respond_encoded; respond_cached in service.h).
 */
void http_respond(http_req *r, int status, const char *content_type, const char *body, size_t len,
		  const char *const *headers);

/*
 * Like http_respond, but body[0..len-1] is sent as it is: already in the
 * content coding `encoding` ("gzip", with Content-Encoding: gzip), or in
 * none when `encoding` is NULL. Adds no Vary: the caller's headers do.
 */
void http_respond_encoded(http_req *r, int status, const char *content_type, const char *body,
			  size_t len, const char *encoding, const char *const *headers);

/* What a stream's read callback returns when the body is complete. */
#define HTTP_STREAM_END (-1L)

/*
 * A body produced piece by piece (chunked on HTTP/1.1; on HTTP/1.0 the
 * connection closes at its end). All callbacks run on the loop thread.
 */
typedef struct http_stream {
	/*
	 * Copies up to `max` bytes (max >= 1) of the body into buf and returns
	 * how many; returns 0 when there is nothing to send yet, and the
	 * connection is then suspended until http_stream_wake(); returns
	 * HTTP_STREAM_END when the body is complete.
	 */
	long (*read)(void *arg, char *buf, size_t max);
	/*
	 * The request is over: the body was sent, the connection was lost, or
	 * the server is stopping. Called exactly once, also when read never
	 * was (HEAD); neither callback is called after it, so it may free arg.
	 */
	void (*closed)(void *arg);
	void *arg;
} http_stream;

/*
 * Answers `r` with `status`, `content_type`, extra headers (as for
 * http_respond) and a body that `stream` produces. Exactly once per
 * request, instead of http_respond(); `stream` is copied. Returns 0, or
 * SF_ENOMEM, in which case r is left unanswered and stream->closed is
 * never called (answer it with http_respond). Safe to call from dispatch
 * or later on the loop thread.
 */
int http_respond_stream(http_req *r, int status, const char *content_type,
			const char *const *headers, const http_stream *stream);

/*
 * Tells `r`'s stream that its read callback has something new to say:
 * resumes the connection if read suspended it. Cheap and idempotent; a
 * no-op while read has not suspended it. `r` must be a streamed request
 * whose closed callback has not run yet.
 */
void http_stream_wake(http_req *r);

#endif
