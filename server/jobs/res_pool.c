/* res_pool.c - generators' reads of uploaded resources (res_pool.h). */
#include "res_pool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/log.h"

struct res_pool {
	char db_path[1024];
	pthread_key_t reader; /* each worker thread's read-only store */
};

static void close_reader(void *s)
{
	store_close(s);
}

res_pool *res_pool_new(const char *db_path)
{
	res_pool *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	if (pthread_key_create(&p->reader, close_reader)) {
		free(p);
		return NULL;
	}
	snprintf(p->db_path, sizeof p->db_path, "%s", db_path);
	return p;
}

void res_pool_free(res_pool *p)
{
	if (!p)
		return;
	store_close(pthread_getspecific(p->reader));
	pthread_setspecific(p->reader, NULL);
	pthread_key_delete(p->reader);
	free(p);
}

/* The calling thread's read-only handle, opened on first use; NULL on failure (logged). */
static store *reader_of(res_pool *p)
{
	store *s = pthread_getspecific(p->reader);
	if (!s) {
		sf_err err = { 0 };
		s = store_open(p->db_path, STORE_READONLY, &err);
		if (!s)
			log_error("resources: opening a reader: %s", err.msg);
		if (!s || pthread_setspecific(p->reader, s)) {
			store_close(s);
			return NULL;
		}
	}
	return s;
}

char *res_fetch(void *ctx, const char *type, const char *name, size_t *len)
{
	if (!ctx || !type || !name)
		return NULL;
	store *s = reader_of(ctx);
	char *format = NULL, *body = NULL;
	sf_err err = { 0 };
	if (!s || store_get_resource(s, type, name, &format, &body, &err)) {
		if (s)
			log_error("resources: reading %s '%s': %s", type, name, err.msg);
		return NULL;
	}
	free(format);
	if (body && len)
		*len = strlen(body);
	return body;
}

int res_exists(store *db, const char *type, const char *name, sf_err *err)
{
	char *format = NULL, *body = NULL;
	int rc = store_get_resource(db, type, name, &format, &body, err);
	int found = body != NULL;
	free(format);
	free(body);
	return rc ? rc : found;
}

