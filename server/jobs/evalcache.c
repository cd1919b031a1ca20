/* evalcache.c - see evalcache.h. */
#include "evalcache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/json_out.h"
#include "../../core/lattice/lattice_json.h"

/* A new evaluation to store, or (doc NULL) a cached one that was used. */
typedef struct pending {
	char lattice[8];
	char sequence[LAT_MAX_LEN + 1];
	char *doc;
} pending;

struct evalcache {
	lat_eval_cache iface;
	char db_path[1024];
	metrics_shared *ms;
	pthread_key_t reader; /* each worker thread's read-only store */
	pthread_mutex_t mu;   /* guards the queue below */
	pending *queue;
	size_t n, cap;
};

static void close_reader(void *s)
{
	store_close(s);
}

static store *reader_of(evalcache *c)
{
	store *s = pthread_getspecific(c->reader);
	if (!s) {
		sf_err err = { 0 };
		s = store_open(c->db_path, STORE_READONLY, &err);
		if (!s || pthread_setspecific(c->reader, s)) {
			store_close(s);
			return NULL;
		}
	}
	return s;
}

/* Queues an entry for evalcache_flush(); takes `doc` (NULL: a touch). */
static void enqueue(evalcache *c, lat_kind kind, const lat_seq *seq, char *doc)
{
	pthread_mutex_lock(&c->mu);
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 256;
		pending *q = realloc(c->queue, cap * sizeof *q);
		if (!q) {
			pthread_mutex_unlock(&c->mu);
			/* Lost to memory pressure: a recomputation, or an early eviction. */
			free(doc);
			return;
		}
		c->queue = q;
		c->cap = cap;
	}
	pending *p = &c->queue[c->n++];
	snprintf(p->lattice, sizeof p->lattice, "%s", lat_kind_name(kind));
	lat_seq_format(seq, p->sequence);
	p->doc = doc;
	pthread_mutex_unlock(&c->mu);
}

static int cache_get(void *ctx, lat_kind kind, const lat_seq *seq, uint64_t hist[LAT_MAX_SCORE + 1])
{
	evalcache *c = ctx;
	store *s = reader_of(c);
	char text[LAT_MAX_LEN + 1], *doc = NULL;
	lat_seq_format(seq, text);
	sf_err err = { 0 };
	int max = -1;
	if (s && !store_get_evaluation(s, lat_kind_name(kind), text, &doc, &err) && doc) {
		json_t *ev = json_loads(doc, 0, NULL);
		json_t *h = json_object_get(ev, "histogram");
		size_t n = json_array_size(h);
		if (n && n <= LAT_MAX_SCORE + 1) {
			memset(hist, 0, sizeof(uint64_t) * (LAT_MAX_SCORE + 1));
			for (size_t i = 0; i < n; i++)
				hist[i] = (uint64_t)json_integer_value(json_array_get(h, i));
			max = (int)n - 1;
		}
		json_decref(ev);
		free(doc);
	}
	atomic_fetch_add(max >= 0 ? &c->ms->cache_hits : &c->ms->cache_misses, 1);
	if (max >= 0)
		enqueue(c, kind, seq, NULL); /* used: the cache keeps it longer */
	return max;
}

static void cache_put(void *ctx, const lat_result *res, const lat_seq *seq)
{
	evalcache *c = ctx;
	atomic_fetch_add(&c->ms->enumerations, 1);
	json_t *doc = lat_result_json(res, seq);
	char *text = doc ? sf_json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	if (text) /* else lost to memory pressure: it costs a recomputation */
		enqueue(c, res->lattice, seq, text);
}

evalcache *evalcache_new(const char *db_path, metrics_shared *ms)
{
	evalcache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	if (pthread_key_create(&c->reader, close_reader)) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	snprintf(c->db_path, sizeof c->db_path, "%s", db_path);
	c->ms = ms;
	c->iface = (lat_eval_cache){ .ctx = c, .get = cache_get, .put = cache_put };
	return c;
}

void evalcache_free(evalcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->queue[i].doc);
	free(c->queue);
	store_close(pthread_getspecific(c->reader));
	pthread_setspecific(c->reader, NULL);
	pthread_key_delete(c->reader);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

const lat_eval_cache *evalcache_iface(evalcache *c)
{
	return &c->iface;
}

/*
 * Touches the entries the searches used, then stores the new ones (touched
 * first, so that the new ones' evictions take the least recently used).
 */
int evalcache_flush(evalcache *c, store *writer, sf_err *err)
{
	pthread_mutex_lock(&c->mu);
	pending *q = c->queue;
	size_t n = c->n, nput = 0, ntouch = 0;
	c->queue = NULL;
	c->n = c->cap = 0;
	pthread_mutex_unlock(&c->mu);
	store_evaluation *ev = calloc(n + 1, sizeof *ev);
	int rc = 0;
	if (!ev)
		rc = sf_err_set(err, SF_ENOMEM, "out of memory writing the evaluation cache");
	/* The touches, then the puts, each in the order they came. */
	for (size_t i = 0; ev && i < n; i++)
		ntouch += !q[i].doc;
	for (size_t i = 0; ev && i < n; i++)
		ev[q[i].doc ? ntouch + nput++ : i - nput] =
			(store_evaluation){ q[i].lattice, q[i].sequence, q[i].doc };
	if (ev && ntouch)
		rc = store_touch_evaluations(writer, ev, ntouch, err);
	if (ev && nput && !rc)
		rc = store_put_evaluations(writer, ev + ntouch, nput, err);
	for (size_t i = 0; i < n; i++)
		free(q[i].doc);
	free(q);
	free(ev);
	return rc;
}
