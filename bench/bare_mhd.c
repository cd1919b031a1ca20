/*
 * bare_mhd.c - the baseline of the HTTP benchmark: the smallest
 * libmicrohttpd server, one internal thread with epoll (the same single
 * thread that Starforge's loop gives MHD), answering every request with a
 * fixed body of the size given on the command line.
 *
 *   bare_mhd PORT BYTES [gzip]   serve until killed
 *
 * With "gzip" the body is announced as Content-Encoding: gzip (and Vary:
 * Accept-Encoding), for the benchmark's compressed case: BYTES is then the
 * size of Starforge's compressed answer, already compressed as Starforge's
 * cached answers are, so both servers send the same bytes per request.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct MHD_Response *fixed;

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url,
				 const char *method, const char *version, const char *upload_data,
				 size_t *upload_size, void **con_cls)
{
	(void)cls;
	(void)url;
	(void)method;
	(void)version;
	(void)upload_data;
	(void)upload_size;
	if (!*con_cls) { /* first call: headers only, as in Starforge */
		*con_cls = conn;
		return MHD_YES;
	}
	return MHD_queue_response(conn, MHD_HTTP_OK, fixed);
}

int main(int argc, char **argv)
{
	if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "gzip"))) {
		fprintf(stderr, "usage: bare_mhd PORT BYTES [gzip]\n");
		return 2;
	}
	int port = atoi(argv[1]);
	size_t bytes = (size_t)atol(argv[2]);
	char *body = malloc(bytes + 1);
	if (!body)
		return 1;
	memset(body, 'x', bytes);
	fixed = MHD_create_response_from_buffer(bytes, body, MHD_RESPMEM_PERSISTENT);
	MHD_add_response_header(fixed, "Content-Type", "application/json");
	if (argc == 4) {
		MHD_add_response_header(fixed, "Content-Encoding", "gzip");
		MHD_add_response_header(fixed, "Vary", "Accept-Encoding");
	}
	struct sockaddr_in addr;
	memset(&addr, 0, sizeof addr);
	addr.sin_family = AF_INET;
	addr.sin_port = htons((uint16_t)port);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* loopback only */
	struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL,
						(uint16_t)port, NULL, NULL, on_access, NULL,
						MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
						MHD_OPTION_CONNECTION_LIMIT, 1024u, MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "bare_mhd: cannot listen on %d\n", port);
		return 1;
	}
	fprintf(stderr, "bare_mhd: listening on %d\n", port);
	pause();
	MHD_stop_daemon(d);
	return 0;
}
