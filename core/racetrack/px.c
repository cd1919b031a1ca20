/*
 * px.c - the nearest-neighbour experience model: feature windows, the model,
 * the CSV codec and the synthetic trace generator (see px.h). The JSON codec
 * is in px_json.c.
 *
 * Uploaded text reaches this file from users, so the CSV parser treats it as
 * hostile: it works on (pointer, length) and never assumes a terminating
 * NUL, copies each field into a bounded buffer before strtod, and quotes
 * user text in messages only after replacing anything but printable ASCII
 * (a message ends up in a JSON string, which must be valid UTF-8).
 */
#include "px.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kinds.h"
#include "../rng.h"

static const char *const FEATURE_NAMES[TRK_PX_NFEAT] = {
	[TRK_PX_SPEED] = "speed",         [TRK_PX_SPEED_SD] = "speed_sd",
	[TRK_PX_REL_SPEED] = "rel_speed", [TRK_PX_PROXIMITY] = "proximity",
	[TRK_PX_GAINED] = "gained",       [TRK_PX_LOST] = "lost",
	[TRK_PX_STANDING] = "standing",   [TRK_PX_BRAKING] = "braking",
};

/* Letters a-z, digits, '_' and '-', 1..TRK_PX_NAME_MAX of them. */
bool trk_px_name_valid(const char *name)
{
	return sf_resource_name_valid(name);
}

/* JSON when the first byte that is not white space is '{', else CSV. */
trk_px_model *trk_px_parse_any(const char *text, size_t len, sf_err *err)
{
	size_t i = 0;
	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
		i++;
	if (i < len && text[i] == '{')
		return trk_px_parse_json(text, len, err);
	return trk_px_parse_csv(text, len, err);
}

const char *trk_px_feature_name(int f)
{
	return f >= 0 && f < TRK_PX_NFEAT ? FEATURE_NAMES[f] : NULL;
}

static double clamp(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

static int check_sample(const trk_px_sample *s, size_t i, sf_err *err)
{
	if (!isfinite(s->speed) || s->speed < 0)
		return sf_err_set(err, SF_EINVAL, "sample %zu: speed must be finite and >= 0", i);
	if (!isfinite(s->top_speed) || s->top_speed <= 0)
		return sf_err_set(err, SF_EINVAL, "sample %zu: top_speed must be finite and > 0",
				  i);
	if (s->nvisible > TRK_PX_MAX_VISIBLE)
		return sf_err_set(err, SF_EINVAL, "sample %zu: nvisible %zu outside 0..%d", i,
				  s->nvisible, TRK_PX_MAX_VISIBLE);
	for (size_t k = 0; k < s->nvisible; k++)
		if (!isfinite(s->visible_speed[k]) || s->visible_speed[k] < 0)
			return sf_err_set(err, SF_EINVAL,
					  "sample %zu: visible_speed[%zu] must be finite and >= 0",
					  i, k);
	if (s->standing < 1 || s->standing > TRK_PX_MAX_STANDING)
		return sf_err_set(err, SF_EINVAL, "sample %zu: standing %d outside 1..%d", i,
				  s->standing, TRK_PX_MAX_STANDING);
	if (!isfinite(s->gap_ahead) || !isfinite(s->gap_behind))
		return sf_err_set(err, SF_EINVAL,
				  "sample %zu: gaps must be finite (negative for none)", i);
	return 0;
}

int trk_px_window_features(const trk_px_sample *samples, size_t count, double out[TRK_PX_NFEAT],
			   sf_err *err)
{
	if (count == 0)
		return sf_err_set(err, SF_EINVAL, "a window needs at least one sample");
	for (size_t i = 0; i < count; i++)
		if (check_sample(&samples[i], i, err))
			return SF_EINVAL;

	double sum_r = 0, sum_rel = 0, sum_standing = 0, gap = -1;
	size_t with_visible = 0, braking = 0;
	int gained = 0, lost = 0;
	for (size_t i = 0; i < count; i++) {
		const trk_px_sample *s = &samples[i];
		sum_r += clamp(s->speed / s->top_speed, 0, 1);
		if (s->nvisible) {
			double v = 0;
			for (size_t k = 0; k < s->nvisible; k++)
				v += s->visible_speed[k];
			sum_rel += (v / (double)s->nvisible - s->speed) / s->top_speed;
			with_visible++;
		}
		if (s->gap_ahead >= 0 && (gap < 0 || s->gap_ahead < gap))
			gap = s->gap_ahead;
		if (s->gap_behind >= 0 && (gap < 0 || s->gap_behind < gap))
			gap = s->gap_behind;
		if (i > 0) {
			int d = s->standing - samples[i - 1].standing;
			if (d < 0)
				gained -= d;
			else
				lost += d;
		}
		sum_standing += s->standing;
		braking += s->braking;
	}
	double n = (double)count;
	double mean_r = sum_r / n, var = 0;
	for (size_t i = 0; i < count; i++) {
		double d = clamp(samples[i].speed / samples[i].top_speed, 0, 1) - mean_r;
		var += d * d;
	}
	out[TRK_PX_SPEED] = mean_r;
	out[TRK_PX_SPEED_SD] = clamp(2 * sqrt(var / n), 0, 1);
	out[TRK_PX_REL_SPEED] =
		with_visible ? 0.5 + 0.5 * clamp(sum_rel / (double)with_visible, -1, 1) : 0.5;
	out[TRK_PX_PROXIMITY] =
		gap < 0 ? 0 : 1 - clamp(gap, 0, TRK_PX_GAP_SCALE) / TRK_PX_GAP_SCALE;
	out[TRK_PX_GAINED] = (gained > 3 ? 3 : gained) / 3.0;
	out[TRK_PX_LOST] = (lost > 3 ? 3 : lost) / 3.0;
	out[TRK_PX_STANDING] = (sum_standing / n - 1) / 3;
	out[TRK_PX_BRAKING] = (double)braking / n;
	return 0;
}

/* qsort's view of a trace index: feature 0, then the index (a total order,
 * so the sorted order does not depend on qsort's algorithm). */
typedef struct order_key {
	double f0;
	size_t index;
} order_key;

static int cmp_order(const void *x, const void *y)
{
	const order_key *a = x, *b = y;
	if (a->f0 != b->f0)
		return a->f0 < b->f0 ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

trk_px_model *trk_px_model_new(const trk_px_trace *traces, size_t n, sf_err *err)
{
	if (n == 0) {
		sf_err_set(err, SF_EINVAL, "the trace set is empty: at least 1 trace is needed");
		return NULL;
	}
	if (n > TRK_PX_MAX_TRACES) {
		sf_err_set(err, SF_EINVAL, "too many traces: %zu, at most %d", n,
			   TRK_PX_MAX_TRACES);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		for (int f = 0; f < TRK_PX_NFEAT; f++) {
			double v = traces[i].window[f];
			if (!isfinite(v) || v < 0 || v > 1) {
				sf_err_set(err, SF_EINVAL, "trace %zu: %s %g outside 0..1", i,
					   FEATURE_NAMES[f], v);
				return NULL;
			}
		}
		double v = traces[i].intensity;
		if (!isfinite(v) || v < 0 || v > 1) {
			sf_err_set(err, SF_EINVAL, "trace %zu: intensity %g outside 0..1", i, v);
			return NULL;
		}
	}
	trk_px_model *m = malloc(sizeof *m);
	trk_px_trace *copy = malloc(n * sizeof *copy);
	size_t *order = malloc(n * sizeof *order);
	order_key *keys = malloc(n * sizeof *keys);
	if (!m || !copy || !order || !keys) {
		free(m);
		free(copy);
		free(order);
		free(keys);
		sf_err_set(err, SF_ENOMEM, "out of memory for %zu traces", n);
		return NULL;
	}
	memcpy(copy, traces, n * sizeof *copy);
	m->n = n;
	m->traces = copy;
	/* The traces by their first feature, for trk_px_nearest's walk. */
	for (size_t i = 0; i < n; i++)
		keys[i] = (order_key){ copy[i].window[0], i };
	qsort(keys, n, sizeof *keys, cmp_order);
	for (size_t i = 0; i < n; i++)
		order[i] = keys[i].index;
	free(keys);
	m->order = order;
	return m;
}

void trk_px_model_free(trk_px_model *model)
{
	if (!model)
		return;
	free(model->traces);
	free(model->order);
	free(model);
}

/* Squared distance, summed in feature order (the same bits as a linear scan). */
static double dist2(const trk_px_trace *t, const double window[TRK_PX_NFEAT])
{
	double d = 0;
	for (int f = 0; f < TRK_PX_NFEAT; f++) {
		double e = t->window[f] - window[f];
		d += e * e;
	}
	return d;
}

/*
 * Exact nearest neighbour, walking outward from the query's place in the
 * order by feature 0. A trace whose feature-0 gap alone, squared, is
 * beyond the best distance so far cannot be nearer: the sum of squares
 * after it only grows (rounding to nearest is monotone), so each side
 * stops there. Ties go to the lowest trace index, exactly as a linear scan
 * with a strict < picks, so the answer is the scan's to the bit.
 */
size_t trk_px_nearest(const trk_px_model *model, const double window[TRK_PX_NFEAT])
{
	const trk_px_trace *t = model->traces;
	const size_t *ord = model->order;
	size_t n = model->n, lo = 0, hi = n;
	while (lo < hi) { /* first position whose feature 0 is >= the query's */
		size_t mid = lo + (hi - lo) / 2;
		if (t[ord[mid]].window[0] < window[0])
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t best = SIZE_MAX;
	double best_d = INFINITY;
	size_t up = lo, down = lo;
	int go_up = up<n, go_down = down> 0;
	while (go_up || go_down) {
		if (go_up) {
			const trk_px_trace *c = &t[ord[up]];
			double e = c->window[0] - window[0];
			if (e * e > best_d) {
				go_up = 0;
			} else {
				double d = dist2(c, window);
				if (d < best_d || (d == best_d && ord[up] < best)) {
					best_d = d;
					best = ord[up];
				}
				go_up = ++up < n;
			}
		}
		if (go_down) {
			const trk_px_trace *c = &t[ord[down - 1]];
			double e = c->window[0] - window[0];
			if (e * e > best_d) {
				go_down = 0;
			} else {
				double d = dist2(c, window);
				if (d < best_d || (d == best_d && ord[down - 1] < best)) {
					best_d = d;
					best = ord[down - 1];
				}
				go_down = --down > 0;
			}
		}
	}
	return best;
}

double trk_px_predict(const trk_px_model *model, const double window[TRK_PX_NFEAT])
{
	return model->traces[trk_px_nearest(model, window)].intensity;
}

/* ---- CSV ---- */

/* A field of user text, made safe to quote: printable ASCII, at most 24 chars. */
static void quote_field(char *dst, size_t cap, const char *src, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < len && n + 4 < cap; i++) {
		unsigned char c = (unsigned char)src[i];
		dst[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
		if (i == 23 && i + 1 < len) {
			memcpy(dst + n, "...", 3);
			n += 3;
			break;
		}
	}
	dst[n] = '\0';
}

/* The spans of one line's comma-separated fields, trimmed of spaces and tabs. */
typedef struct csv_field {
	const char *p;
	size_t len;
} csv_field;

static size_t split_fields(const char *line, size_t len, csv_field *fields, size_t cap)
{
	size_t n = 0, start = 0;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && line[i] != ',')
			continue;
		size_t a = start, b = i;
		while (a < b && (line[a] == ' ' || line[a] == '\t'))
			a++;
		while (b > a && (line[b - 1] == ' ' || line[b - 1] == '\t'))
			b--;
		if (n < cap)
			fields[n] = (csv_field){ line + a, b - a };
		n++;
		start = i + 1;
	}
	return n; /* may exceed cap: the caller reports a wrong count */
}

enum { CSV_COLS = TRK_PX_NFEAT + 1, CSV_INTENSITY = TRK_PX_NFEAT };

/* The canonical index (feature, or CSV_INTENSITY) of a header name, or -1. */
static int column_index(const char *name, size_t len)
{
	for (int f = 0; f < TRK_PX_NFEAT; f++)
		if (strlen(FEATURE_NAMES[f]) == len && !memcmp(FEATURE_NAMES[f], name, len))
			return f;
	if (len == 9 && !memcmp(name, "intensity", 9))
		return CSV_INTENSITY;
	return -1;
}

static int parse_header(const csv_field *fields, size_t nfields, size_t lineno, int *col_of,
			sf_err *err)
{
	int seen[CSV_COLS] = { 0 };
	char q[32];
	if (nfields > CSV_COLS)
		return sf_err_set(err, SF_EINVAL,
				  "line %zu: header has %zu columns, expected %d (the %d features "
				  "and intensity)",
				  lineno, nfields, CSV_COLS, TRK_PX_NFEAT);
	for (size_t c = 0; c < nfields; c++) {
		int idx = column_index(fields[c].p, fields[c].len);
		quote_field(q, sizeof q, fields[c].p, fields[c].len);
		if (idx < 0)
			return sf_err_set(err, SF_EINVAL,
					  "line %zu: unknown column \"%s\" (features: speed, "
					  "speed_sd, rel_speed, proximity, gained, lost, standing, "
					  "braking; label: intensity)",
					  lineno, q);
		if (seen[idx])
			return sf_err_set(err, SF_EINVAL, "line %zu: duplicate column \"%s\"",
					  lineno, q);
		seen[idx] = 1;
		col_of[c] = idx;
	}
	for (int i = 0; i < CSV_COLS; i++)
		if (!seen[i])
			return sf_err_set(err, SF_EINVAL, "line %zu: missing column \"%s\"", lineno,
					  i == CSV_INTENSITY ? "intensity" : FEATURE_NAMES[i]);
	return 0;
}

/* Parses one field as a finite number in 0..1 into *out. */
static int parse_value(const csv_field *fld, size_t lineno, const char *column, double *out,
		       sf_err *err)
{
	char buf[64], q[32];
	quote_field(q, sizeof q, fld->p, fld->len);
	if (fld->len == 0)
		return sf_err_set(err, SF_EINVAL, "line %zu, column %s: empty value", lineno,
				  column);
	if (fld->len >= sizeof buf)
		return sf_err_set(err, SF_EINVAL, "line %zu, column %s: \"%s\" is not a number",
				  lineno, column, q);
	memcpy(buf, fld->p, fld->len);
	buf[fld->len] = '\0';
	char *end;
	double v = strtod(buf, &end);
	if (end == buf || *end != '\0')
		return sf_err_set(err, SF_EINVAL, "line %zu, column %s: \"%s\" is not a number",
				  lineno, column, q);
	if (!isfinite(v))
		return sf_err_set(err, SF_EINVAL,
				  "line %zu, column %s: \"%s\" is not finite (NaN or infinity)",
				  lineno, column, q);
	if (v < 0 || v > 1)
		return sf_err_set(err, SF_EINVAL, "line %zu, column %s: %s outside 0..1", lineno,
				  column, q);
	*out = v;
	return 0;
}

trk_px_model *trk_px_parse_csv(const char *text, size_t len, sf_err *err)
{
	trk_px_trace *traces = NULL;
	trk_px_model *model = NULL;
	size_t ntraces = 0, cap = 0, lineno = 0, pos = 0;
	int col_of[CSV_COLS];
	int have_header = 0;
	csv_field fields[CSV_COLS];

	while (pos < len) {
		size_t eol = pos;
		while (eol < len && text[eol] != '\n')
			eol++;
		const char *line = text + pos;
		size_t llen = eol - pos;
		pos = eol + 1;
		lineno++;
		if (llen && line[llen - 1] == '\r')
			llen--;
		size_t first = 0;
		while (first < llen && (line[first] == ' ' || line[first] == '\t'))
			first++;
		if (first == llen || line[first] == '#')
			continue;
		size_t nf = split_fields(line, llen, fields, CSV_COLS);
		if (!have_header) {
			if (parse_header(fields, nf, lineno, col_of, err))
				goto fail;
			have_header = 1;
			continue;
		}
		if (nf != CSV_COLS) {
			sf_err_set(err, SF_EINVAL, "line %zu: %zu values, expected %d", lineno, nf,
				   CSV_COLS);
			goto fail;
		}
		if (ntraces == TRK_PX_MAX_TRACES) {
			sf_err_set(err, SF_EINVAL, "line %zu: too many traces, at most %d", lineno,
				   TRK_PX_MAX_TRACES);
			goto fail;
		}
		if (ntraces == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			trk_px_trace *grown = realloc(traces, ncap * sizeof *grown);
			if (!grown) {
				sf_err_set(err, SF_ENOMEM, "out of memory for %zu traces", ncap);
				goto fail;
			}
			traces = grown;
			cap = ncap;
		}
		trk_px_trace *t = &traces[ntraces];
		for (int c = 0; c < CSV_COLS; c++) {
			int idx = col_of[c];
			double *dst = idx == CSV_INTENSITY ? &t->intensity : &t->window[idx];
			const char *name = idx == CSV_INTENSITY ? "intensity" : FEATURE_NAMES[idx];
			if (parse_value(&fields[c], lineno, name, dst, err))
				goto fail;
		}
		ntraces++;
	}
	if (!have_header) {
		sf_err_set(err, SF_EINVAL,
			   "no header row: expected the columns speed, speed_sd, rel_speed, "
			   "proximity, gained, lost, standing, braking, intensity");
		goto fail;
	}
	if (ntraces == 0) {
		sf_err_set(err, SF_EINVAL, "the trace set is empty: a header but no rows");
		goto fail;
	}
	model = trk_px_model_new(traces, ntraces, err);
fail:
	free(traces);
	return model;
}

char *trk_px_model_csv(const trk_px_model *model, const char *comment, size_t *len)
{
	return trk_px_model_csv_digits(model, comment, 6, len);
}

char *trk_px_model_csv_digits(const trk_px_model *model, const char *comment, int digits,
			      size_t *len)
{
	if (digits < 1 || digits > 6)
		digits = 6;
	/* 9 values of at most "1.000000," (9 bytes) plus a newline per row. */
	size_t clen = comment ? strlen(comment) : 0;
	size_t cap = 2 * clen + 16 + 128 + model->n * (CSV_COLS * 10 + 2);
	char *out = malloc(cap);
	if (!out)
		return NULL;
	size_t n = 0;
	for (size_t i = 0; i < clen;) {
		size_t j = i;
		while (j < clen && comment[j] != '\n')
			j++;
		n += (size_t)snprintf(out + n, cap - n, "# %.*s\n", (int)(j - i), comment + i);
		i = j + 1;
	}
	for (int f = 0; f < TRK_PX_NFEAT; f++)
		n += (size_t)snprintf(out + n, cap - n, "%s,", FEATURE_NAMES[f]);
	n += (size_t)snprintf(out + n, cap - n, "intensity\n");
	for (size_t i = 0; i < model->n; i++) {
		const trk_px_trace *t = &model->traces[i];
		for (int f = 0; f < TRK_PX_NFEAT; f++)
			n += (size_t)snprintf(out + n, cap - n, "%.*f,", digits, t->window[f]);
		n += (size_t)snprintf(out + n, cap - n, "%.*f\n", digits, t->intensity);
	}
	if (len)
		*len = n;
	return out;
}
