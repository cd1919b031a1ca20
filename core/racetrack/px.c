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
	if (!m || !copy) {
		free(m);
		free(copy);
		sf_err_set(err, SF_ENOMEM, "out of memory for %zu traces", n);
		return NULL;
	}
	memcpy(copy, traces, n * sizeof *copy);
	m->n = n;
	m->traces = copy;
	return m;
}

void trk_px_model_free(trk_px_model *model)
{
	if (!model)
		return;
	free(model->traces);
	free(model);
}

size_t trk_px_nearest(const trk_px_model *model, const double window[TRK_PX_NFEAT])
{
	size_t best = 0;
	double best_d = INFINITY;
	for (size_t i = 0; i < model->n; i++) {
		double d = 0;
		for (int f = 0; f < TRK_PX_NFEAT; f++) {
			double e = model->traces[i].window[f] - window[f];
			d += e * e;
		}
		/* Strictly nearer only: the lowest index wins a tie. */
		if (d < best_d) {
			best_d = d;
			best = i;
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
			n += (size_t)snprintf(out + n, cap - n, "%.6f,", t->window[f]);
		n += (size_t)snprintf(out + n, cap - n, "%.6f\n", t->intensity);
	}
	if (len)
		*len = n;
	return out;
}

/* ---- the synthetic trace set ---- */

static double uniform(rng *r, double lo, double hi)
{
	return lo + (hi - lo) * rng_unit(r);
}

/*
 * One race situation of TRK_PX_WINDOW ticks. The situation (a pack, a duel,
 * a lonely lead, a braking zone, an overtake either way) is drawn first;
 * the samples then follow from it with linear trends plus small jitter.
 */
static void synth_samples(rng *r, trk_px_sample *s)
{
	const double top = 60;
	double v0 = uniform(r, 0.35, 1.0);
	double trend = uniform(r, -0.25, 0.1); /* change of speed ratio over the window */
	int brake_zone = rng_below(r, 4) == 0;
	if (brake_zone)
		trend = uniform(r, -0.5, -0.2);
	int standing = 1 + (int)rng_below(r, TRK_PX_MAX_STANDING);
	int alone = rng_below(r, 3) == 0;
	double gap_a = alone ? uniform(r, 45, 150) : uniform(r, 1, 45);
	double gap_b = alone ? uniform(r, 45, 150) : uniform(r, 1, 45);
	double closing_a = uniform(r, -15, 15), closing_b = uniform(r, -15, 15);
	size_t nvisible = alone ? 0 : (size_t)rng_below(r, TRK_PX_MAX_VISIBLE + 1);
	double rel[TRK_PX_MAX_VISIBLE];
	for (size_t k = 0; k < TRK_PX_MAX_VISIBLE; k++)
		rel[k] = uniform(r, -0.2, 0.2);
	/* A change of position at tick `change_at` by `change` (-1 gained, +1 lost). */
	int change = 0;
	size_t change_at = 1 + (size_t)rng_below(r, TRK_PX_WINDOW - 1);
	if (!alone) {
		uint64_t c = rng_below(r, 5);
		if (c == 0 && standing > 1)
			change = -1;
		else if (c == 1 && standing < TRK_PX_MAX_STANDING)
			change = 1;
	}
	for (size_t i = 0; i < TRK_PX_WINDOW; i++) {
		double t = (double)i / (TRK_PX_WINDOW - 1);
		double ratio = clamp(v0 + trend * t + uniform(r, -0.02, 0.02), 0, 1);
		trk_px_sample *x = &s[i];
		memset(x, 0, sizeof *x);
		x->top_speed = top;
		x->speed = ratio * top;
		x->nvisible = nvisible;
		for (size_t k = 0; k < nvisible; k++)
			x->visible_speed[k] = clamp(ratio + rel[k], 0, 1.2) * top;
		x->standing = standing + (i >= change_at ? change : 0);
		x->gap_ahead = x->standing == 1 ? -1 : clamp(gap_a - closing_a * t, 0.5, 200);
		x->gap_behind = x->standing == TRK_PX_MAX_STANDING
					? -1
					: clamp(gap_b - closing_b * t, 0.5, 200);
		x->braking = brake_zone && t >= 0.2 && t <= 0.8;
	}
}

/*
 * The stated model of tension (docs/px-model.md): close competitors matter
 * most, then losing a position, then gaining one, speed near the limit and
 * a speed difference to visible rivals; braking adds a little (weights
 * 0.45, 0.30, 0.20, 0.15, 0.10, 0.05 over a floor of 0.05). Calm when
 * alone and cruising. Plus uniform noise of +-0.05, clamped to 0..1.
 */
static double synth_tension(rng *r, const double f[TRK_PX_NFEAT])
{
	double near_limit = clamp((f[TRK_PX_SPEED] - 0.7) / 0.3, 0, 1);
	double rel = f[TRK_PX_REL_SPEED] - 0.5;
	double rel_abs = clamp(2 * (rel < 0 ? -rel : rel), 0, 1);
	double lost = clamp(3 * f[TRK_PX_LOST], 0, 1);
	double gained = clamp(3 * f[TRK_PX_GAINED], 0, 1);
	double t = 0.05 + 0.45 * f[TRK_PX_PROXIMITY] + 0.30 * lost + 0.20 * gained +
		   0.15 * near_limit + 0.10 * rel_abs + 0.05 * f[TRK_PX_BRAKING];
	return clamp(t + uniform(r, -0.05, 0.05), 0, 1);
}

trk_px_model *trk_px_synth(uint64_t seed, size_t count, sf_err *err)
{
	if (count == 0 || count > TRK_PX_MAX_TRACES) {
		sf_err_set(err, SF_EINVAL, "count %zu outside 1..%d", count, TRK_PX_MAX_TRACES);
		return NULL;
	}
	trk_px_trace *traces = malloc(count * sizeof *traces);
	trk_px_sample *samples = malloc(TRK_PX_WINDOW * sizeof *samples);
	trk_px_model *model = NULL;
	if (!traces || !samples) {
		sf_err_set(err, SF_ENOMEM, "out of memory for %zu traces", count);
		goto fail;
	}
	rng r;
	rng_seed(&r, seed);
	for (size_t i = 0; i < count; i++) {
		synth_samples(&r, samples);
		if (trk_px_window_features(samples, TRK_PX_WINDOW, traces[i].window, err))
			goto fail;
		traces[i].intensity = synth_tension(&r, traces[i].window);
	}
	model = trk_px_model_new(traces, count, err);
fail:
	free(traces);
	free(samples);
	return model;
}

char *trk_px_synth_csv(uint64_t seed, size_t count, size_t *len, sf_err *err)
{
	char comment[256];
	snprintf(comment, sizeof comment,
		 "SYNTHETIC play traces, not human data: generated by tools/px_synth (seed "
		 "0x%llx, %zu traces)\nfrom the tension model stated in docs/px-model.md. "
		 "Regenerate: build/tools/px_synth > data/px/synthetic.csv",
		 (unsigned long long)seed, count);
	trk_px_model *model = trk_px_synth(seed, count, err);
	if (!model)
		return NULL;
	char *csv = trk_px_model_csv(model, comment, len);
	trk_px_model_free(model);
	if (!csv)
		sf_err_set(err, SF_ENOMEM, "out of memory formatting %zu traces", count);
	return csv;
}
