/*
 * openapi_bundle.c - writes the OpenAPI description the service serves: the
 * YAML source (openapi.yaml) with every JSON Schema it reaches, directly or
 * through other schemas, inlined under components/schemas, as one JSON text
 * (JSON is also YAML) in which every "$ref" is local ("#/...") and resolves.
 *
 *   openapi_bundle openapi.yaml > build/gen/openapi.json
 *
 * The sources stay the single truth: openapi.yaml names its schemas by file
 * (components/schemas/Job: {$ref: ./schema/job.schema.json}) and the schema
 * files refer to each other by relative path ("../level.schema.json",
 * "puzzle.schema.json#/$defs/taps") and to their own "$defs". The tests
 * validate with the files as they are; clients get this bundle. The rules:
 *
 *   - A components/schemas entry that is only {$ref: FILE} gives FILE its
 *     name; the entry is replaced by FILE's schema.
 *   - Any other file reached by a $ref (from openapi.yaml or a schema) is
 *     added under a name made from its path below the schema folder:
 *     schema/digger/check-result.schema.json is DiggerCheckResult.
 *   - Each file's "$defs" are hoisted to components of their own, the
 *     file's name plus the def's in PascalCase (DiggerPuzzleTaps), so that
 *     generators see no "$defs" property; "$schema" is dropped (the
 *     document's dialect applies).
 *   - A $ref FILE#/$defs/K/rest becomes #/components/schemas/NameK/rest,
 *     FILE#/other/pointer becomes #/components/schemas/Name/other/pointer,
 *     FILE alone #/components/schemas/Name. Local refs of openapi.yaml are
 *     kept as written.
 *   - Under components/schemas, a schema's "default" becomes "x-default"
 *     and "Default: `<JSON>`." in its description, so that type generators
 *     do not make a key that may be left out a required one (move_defaults).
 *
 * Refused, with a message on stderr and exit status 1 (so make stops): a
 * YAML or JSON syntax error, a YAML feature JSON cannot carry (merge keys,
 * tags, non-scalar keys, duplicate keys, .inf/.nan), a schema with "$id"
 * (it would change how its relative refs resolve), a ref to a plain anchor
 * ("#name"), a generated name that is already taken (rename the def or the
 * component rather than let a generator pick "Foo2"), and, checked last on
 * the whole output, any "$ref" that does not resolve inside the document.
 * Plain YAML scalars are typed by the YAML 1.2 core schema (null, true,
 * false, integers, floats), as the JavaScript tools that lint and read the
 * source do. The output is ASCII (\u escapes) and byte-for-byte the same for
 * the same inputs; numbers are written in their shortest exact form.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#define MAX_DEPTH 256

static const char *prog = "openapi_bundle";

static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory");
	return p;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

static char *xprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* ---- YAML to jansson ---- */

static int full_match_int(const char *s)
{
	if (*s == '-' || *s == '+')
		s++;
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

/* [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
static int full_match_float(const char *s)
{
	int digits = 0;
	if (*s == '-' || *s == '+')
		s++;
	while (isdigit((unsigned char)*s))
		s++, digits++;
	if (*s == '.') {
		s++;
		while (isdigit((unsigned char)*s))
			s++, digits++;
	}
	if (!digits)
		return 0;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		if (!isdigit((unsigned char)*s))
			return 0;
		while (isdigit((unsigned char)*s))
			s++;
	}
	return *s == '\0';
}

/* A plain (unquoted) scalar, typed by the YAML 1.2 core schema. */
static json_t *plain_scalar(const char *s, const yaml_mark_t *mark)
{
	if (!*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	    !strcmp(s, "NULL"))
		return json_null();
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
		return json_true();
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
		return json_false();
	int base = 0;
	const char *digits = s;
	if (full_match_int(s))
		base = 10;
	else if (s[0] == '0' && s[1] == 'o' && s[2] && strspn(s + 2, "01234567") == strlen(s + 2))
		base = 8, digits = s + 2;
	else if (s[0] == '0' && s[1] == 'x' && s[2] &&
		 strspn(s + 2, "0123456789abcdefABCDEF") == strlen(s + 2))
		base = 16, digits = s + 2;
	if (base) {
		errno = 0;
		long long v = strtoll(digits, NULL, base);
		if (errno)
			die("line %zu: integer %s out of range", (size_t)mark->line + 1, s);
		return json_integer(v);
	}
	if (full_match_float(s))
		return json_real(strtod(s, NULL));
	const char *t = s + (*s == '-' || *s == '+');
	if (!strcasecmp(t, ".inf") || !strcasecmp(t, ".nan"))
		die("line %zu: %s has no JSON form", (size_t)mark->line + 1, s);
	return json_string(s);
}

static json_t *yaml_node_json(yaml_document_t *doc, yaml_node_t *node, int depth)
{
	if (depth > MAX_DEPTH)
		die("line %zu: nested too deeply", (size_t)node->start_mark.line + 1);
	const char *tag = (const char *)node->tag;
	switch (node->type) {
	case YAML_SCALAR_NODE: {
		if (strcmp(tag, YAML_STR_TAG))
			die("line %zu: tag %s is not supported", (size_t)node->start_mark.line + 1,
			    tag);
		const char *v = (const char *)node->data.scalar.value;
		if (strlen(v) != node->data.scalar.length)
			die("line %zu: NUL in a scalar", (size_t)node->start_mark.line + 1);
		json_t *j = node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
				    ? plain_scalar(v, &node->start_mark)
				    : json_string(v);
		if (!j)
			die("line %zu: not UTF-8", (size_t)node->start_mark.line + 1);
		return j;
	}
	case YAML_SEQUENCE_NODE: {
		if (strcmp(tag, YAML_SEQ_TAG))
			die("line %zu: tag %s is not supported", (size_t)node->start_mark.line + 1,
			    tag);
		json_t *a = json_array();
		for (yaml_node_item_t *i = node->data.sequence.items.start;
		     i < node->data.sequence.items.top; i++)
			json_array_append_new(
				a, yaml_node_json(doc, yaml_document_get_node(doc, *i), depth + 1));
		return a;
	}
	case YAML_MAPPING_NODE: {
		if (strcmp(tag, YAML_MAP_TAG))
			die("line %zu: tag %s is not supported", (size_t)node->start_mark.line + 1,
			    tag);
		json_t *o = json_object();
		for (yaml_node_pair_t *p = node->data.mapping.pairs.start;
		     p < node->data.mapping.pairs.top; p++) {
			yaml_node_t *k = yaml_document_get_node(doc, p->key);
			if (k->type != YAML_SCALAR_NODE)
				die("line %zu: a key that is not a scalar",
				    (size_t)k->start_mark.line + 1);
			const char *key = (const char *)k->data.scalar.value;
			if (k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !strcmp(key, "<<"))
				die("line %zu: merge keys are not supported",
				    (size_t)k->start_mark.line + 1);
			if (json_object_get(o, key))
				die("line %zu: duplicate key %s", (size_t)k->start_mark.line + 1,
				    key);
			json_object_set_new(o, key,
					    yaml_node_json(doc,
							   yaml_document_get_node(doc, p->value),
							   depth + 1));
		}
		return o;
	}
	default:
		die("line %zu: an empty node", (size_t)node->start_mark.line + 1);
	}
	return NULL;
}

static json_t *load_yaml(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die("%s: %s", path, strerror(errno));
	yaml_parser_t parser;
	yaml_document_t doc;
	if (!yaml_parser_initialize(&parser))
		die("out of memory");
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc))
		die("%s:%zu:%zu: %s %s", path, (size_t)parser.problem_mark.line + 1,
		    (size_t)parser.problem_mark.column + 1, parser.problem ? parser.problem : "",
		    parser.context ? parser.context : "");
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (!root || root->type != YAML_MAPPING_NODE)
		die("%s: the document is not a mapping", path);
	json_t *j = yaml_node_json(&doc, root, 0);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	return j;
}

/* ---- names and paths ---- */

/* "check-result" -> "CheckResult": words split at anything not alphanumeric. */
static void pascal_append(char *out, size_t cap, const char *s)
{
	size_t n = strlen(out);
	int start = 1;
	for (; *s && n + 1 < cap; s++) {
		if (!isalnum((unsigned char)*s)) {
			start = 1;
			continue;
		}
		out[n++] = start ? (char)toupper((unsigned char)*s) : *s;
		start = 0;
	}
	out[n] = '\0';
}

/* "a/b/../c/./d.json" -> "a/c/d.json"; a path that climbs above its start is refused. */
static char *normalize(const char *path)
{
	char *copy = xstrdup(path), *out = xmalloc(strlen(path) + 1);
	size_t n = 0;
	out[0] = '\0';
	for (char *save, *seg = strtok_r(copy, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
		if (!strcmp(seg, "."))
			continue;
		if (!strcmp(seg, "..")) {
			if (!n)
				die("%s: climbs above the source folder", path);
			while (n && out[n - 1] != '/')
				n--;
			if (n)
				n--;
			out[n] = '\0';
			continue;
		}
		if (n)
			out[n++] = '/';
		strcpy(out + n, seg);
		n += strlen(seg);
	}
	free(copy);
	return out;
}

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return xstrdup("");
	char *d = xmalloc((size_t)(slash - path) + 2);
	memcpy(d, path, (size_t)(slash - path) + 1);
	d[slash - path + 1] = '\0';
	return d;
}

/* "schema/digger/check-result.schema.json" (below openapi.yaml's folder) -> "DiggerCheckResult". */
static char *name_from_path(const char *rel)
{
	char stem[1024];
	snprintf(stem, sizeof stem, "%s", rel);
	size_t len = strlen(stem);
	if (len > 12 && !strcmp(stem + len - 12, ".schema.json"))
		stem[len - 12] = '\0';
	else if (len > 5 && !strcmp(stem + len - 5, ".json"))
		stem[len - 5] = '\0';
	/* Below the schema folder: the first folder is dropped when there is one. */
	const char *from = strchr(stem, '/') ? strchr(stem, '/') + 1 : stem;
	char name[1024] = "";
	pascal_append(name, sizeof name, from);
	if (!name[0] || isdigit((unsigned char)name[0]))
		die("%s: cannot make a component name from this path", rel);
	return xstrdup(name);
}

/* A component name as one JSON Pointer token (RFC 6901: ~ and / escaped). */
static char *pointer_token(const char *s)
{
	char *out = xmalloc(2 * strlen(s) + 1), *o = out;
	for (; *s; s++) {
		if (*s == '~')
			*o++ = '~', *o++ = '0';
		else if (*s == '/')
			*o++ = '~', *o++ = '1';
		else
			*o++ = *s;
	}
	*o = '\0';
	return out;
}

/* ---- the files ---- */

typedef struct schema_file {
	char *path; /* normalized, relative to the working directory */
	char *name; /* its component */
	int done;
} schema_file;

static schema_file *files;
static size_t nfiles, capfiles;
static json_t *taken;          /* every component name in use -> the path or def that owns it */
static json_t *schemas;        /* the output's components/schemas */
static const char *source_dir; /* openapi.yaml's folder, "" or ending in '/' */

static void take_name(const char *name, const char *owner)
{
	json_t *prev = json_object_get(taken, name);
	if (prev && strcmp(json_string_value(prev), owner))
		die("component name %s is wanted by both %s and %s", name, json_string_value(prev),
		    owner);
	json_object_set_new(taken, name, json_string(owner));
}

static schema_file *file_find(const char *path)
{
	for (size_t i = 0; i < nfiles; i++)
		if (!strcmp(files[i].path, path))
			return &files[i];
	return NULL;
}

/* The file at `path` (normalized), registered under `name` (NULL: from its path) if new. */
static schema_file *file_get(const char *path, const char *name)
{
	schema_file *f = file_find(path);
	if (f)
		return f;
	size_t dl = strlen(source_dir);
	if (strncmp(path, source_dir, dl))
		die("%s: outside %s", path, source_dir);
	if (nfiles == capfiles) {
		capfiles = capfiles ? 2 * capfiles : 32;
		files = realloc(files, capfiles * sizeof *files);
		if (!files)
			die("out of memory");
	}
	f = &files[nfiles++];
	f->path = xstrdup(path);
	f->name = name ? xstrdup(name) : name_from_path(path + dl);
	f->done = 0;
	take_name(f->name, f->path);
	return f;
}

/*
 * The local form of `ref`, written in schema file `in_file` (NULL: in
 * openapi.yaml, whose "#..." refs are local already and stay as written).
 */
static char *rewrite_ref(const char *ref, const char *in_file)
{
	if (ref[0] == '#' && !in_file)
		return NULL;
	const char *hash = strchr(ref, '#');
	size_t flen = hash ? (size_t)(hash - ref) : strlen(ref);
	if (strstr(ref, "://") || ref[0] == '/')
		die("$ref %s: only relative file references can be bundled", ref);
	char *rel = xmalloc(flen + 1);
	memcpy(rel, ref, flen);
	rel[flen] = '\0';
	if (flen && (flen < 5 || strcmp(rel + flen - 5, ".json")))
		die("$ref %s: only JSON Schema files (.json) can be bundled", ref);
	char *base_dir = in_file ? dir_of(in_file) : xstrdup(source_dir);
	char *joined = flen ? xprintf("%s%s", base_dir, rel) : xstrdup(in_file);
	char *path = normalize(joined);
	free(base_dir);
	schema_file *f = file_get(path, NULL);
	const char *frag = hash ? hash + 1 : "";
	char *out;
	char *tok = pointer_token(f->name);
	if (!*frag) {
		out = xprintf("#/components/schemas/%s", tok);
	} else if (frag[0] != '/') {
		die("$ref %s: plain-name fragments are not supported", ref);
	} else if (!strncmp(frag, "/$defs/", 7)) {
		const char *key = frag + 7, *rest = strchr(key, '/');
		size_t klen = rest ? (size_t)(rest - key) : strlen(key);
		char raw[512];
		if (klen >= sizeof raw)
			die("$ref %s: def name too long", ref);
		size_t n = 0;
		for (size_t i = 0; i < klen; i++) { /* unescape ~1 and ~0 */
			if (key[i] == '~' && i + 1 < klen &&
			    (key[i + 1] == '0' || key[i + 1] == '1'))
				raw[n++] = key[++i] == '0' ? '~' : '/';
			else
				raw[n++] = key[i];
		}
		raw[n] = '\0';
		char name[1024];
		snprintf(name, sizeof name, "%s", f->name);
		pascal_append(name, sizeof name, raw);
		char *dtok = pointer_token(name);
		out = xprintf("#/components/schemas/%s%s", dtok, rest ? rest : "");
		free(dtok);
	} else {
		out = xprintf("#/components/schemas/%s%s", tok, frag);
	}
	free(tok);
	free(path);
	free(joined);
	free(rel);
	return out;
}

/* Rewrites every string "$ref" under `j` (written in `in_file`, see rewrite_ref) in place. */
static void rewrite_refs(json_t *j, const char *in_file, int depth)
{
	if (depth > MAX_DEPTH)
		die("nested too deeply");
	if (json_is_object(j)) {
		const char *k;
		json_t *v;
		json_object_foreach(j, k, v)
		{
			if (!strcmp(k, "$ref") && json_is_string(v)) {
				char *local = rewrite_ref(json_string_value(v), in_file);
				if (local) {
					json_string_set(v, local);
					free(local);
				}
			} else {
				rewrite_refs(v, in_file, depth + 1);
			}
		}
	} else if (json_is_array(j)) {
		size_t i;
		json_t *v;
		json_array_foreach(j, i, v) rewrite_refs(v, in_file, depth + 1);
	}
}

/*
 * Loads files[i], hoists its $defs and puts it and them under
 * components/schemas. Rewriting its refs may register more files (and move
 * `files`), so it works on copies of the path and the name.
 */
static void file_bundle(size_t i)
{
	schema_file copy = { xstrdup(files[i].path), xstrdup(files[i].name), 1 }, *f = &copy;
	json_error_t jerr;
	json_t *doc = json_load_file(f->path, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		die("%s:%d:%d: %s", f->path, jerr.line, jerr.column, jerr.text);
	if (!json_is_object(doc))
		die("%s: not a JSON object", f->path);
	if (json_object_get(doc, "$id"))
		die("%s: \"$id\" is not supported (it changes how relative refs resolve)", f->path);
	json_object_del(doc, "$schema");
	json_t *defs = json_incref(json_object_get(doc, "$defs"));
	json_object_del(doc, "$defs");
	if (defs && !json_is_object(defs))
		die("%s: $defs is not an object", f->path);
	rewrite_refs(doc, f->path, 0);
	json_object_set(schemas, f->name, doc); /* in place when openapi.yaml names it */
	const char *k;
	json_t *v;
	json_object_foreach(defs, k, v)
	{
		char name[1024], owner[1024];
		snprintf(name, sizeof name, "%s", f->name);
		pascal_append(name, sizeof name, k);
		snprintf(owner, sizeof owner, "%s#/$defs/%s", f->path, k);
		take_name(name, owner);
		if (json_object_get(schemas, name))
			die("%s: component %s exists already", owner, name);
		rewrite_refs(v, f->path, 0);
		json_object_set(schemas, name, v);
	}
	json_decref(defs);
	json_decref(doc);
	free(copy.path);
	free(copy.name);
}

/* ---- the final check: every $ref resolves ---- */

static json_t *resolve_pointer(json_t *root, const char *ptr)
{
	json_t *cur = root;
	char tok[1024];
	while (*ptr == '/') {
		ptr++;
		size_t n = 0;
		while (*ptr && *ptr != '/' && n + 1 < sizeof tok) {
			if (*ptr == '~' && (ptr[1] == '0' || ptr[1] == '1')) {
				tok[n++] = ptr[1] == '0' ? '~' : '/';
				ptr += 2;
			} else {
				tok[n++] = *ptr++;
			}
		}
		tok[n] = '\0';
		if (json_is_object(cur)) {
			cur = json_object_get(cur, tok);
		} else if (json_is_array(cur)) {
			char *end;
			unsigned long i = strtoul(tok, &end, 10);
			cur = *tok && !*end ? json_array_get(cur, i) : NULL;
		} else {
			cur = NULL;
		}
		if (!cur)
			return NULL;
	}
	return *ptr ? NULL : cur;
}

static void check_refs(json_t *root, json_t *j, int depth)
{
	if (depth > MAX_DEPTH)
		die("nested too deeply");
	if (json_is_object(j)) {
		const char *k;
		json_t *v;
		json_object_foreach(j, k, v)
		{
			if (!strcmp(k, "$ref") && json_is_string(v)) {
				const char *ref = json_string_value(v);
				if (ref[0] != '#' || !resolve_pointer(root, ref + 1))
					die("$ref %s does not resolve in the bundle", ref);
			} else {
				check_refs(root, v, depth + 1);
			}
		}
	} else if (json_is_array(j)) {
		size_t i;
		json_t *v;
		json_array_foreach(j, i, v) check_refs(root, v, depth + 1);
	}
}

/* ---- JSON out: indented, ASCII, shortest exact numbers ---- */

static void put_string(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	fputc('"', out);
	while (*p) {
		unsigned c = *p;
		if (c == '"' || c == '\\') {
			fputc('\\', out);
			fputc((int)c, out);
			p++;
		} else if (c == '\n') {
			fputs("\\n", out), p++;
		} else if (c == '\t') {
			fputs("\\t", out), p++;
		} else if (c == '\r') {
			fputs("\\r", out), p++;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c), p++;
		} else if (c < 0x80) {
			fputc((int)c, out), p++;
		} else {
			/* jansson checked the UTF-8; decode one code point. */
			unsigned cp, extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;
			cp = c & (0x3fu >> extra);
			for (unsigned i = 1; i <= extra; i++)
				cp = (cp << 6) | (p[i] & 0x3fu);
			p += extra + 1;
			if (cp >= 0x10000) {
				cp -= 0x10000;
				fprintf(out, "\\u%04x\\u%04x", 0xd800 + (cp >> 10),
					0xdc00 + (cp & 0x3ffu));
			} else {
				fprintf(out, "\\u%04x", cp);
			}
		}
	}
	fputc('"', out);
}

static void put_real(FILE *out, double d)
{
	char buf[64];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	fputs(buf, out);
	if (!strpbrk(buf, ".eEn")) /* keep it a real: 1 -> 1.0 */
		fputs(".0", out);
}

/* A newline and `depth` levels of indent; nothing when depth < 0 (compact). */
static void put_indent(FILE *out, int depth)
{
	if (depth < 0)
		return;
	fputc('\n', out);
	for (int i = 0; i < depth; i++)
		fputs("  ", out);
}

/* `j` as JSON, indented from `depth`, or on one line when depth < 0. */
static void put_json(FILE *out, json_t *j, int depth)
{
	int inner = depth < 0 ? -1 : depth + 1;
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		if (!json_object_size(j)) {
			fputs("{}", out);
			return;
		}
		fputc('{', out);
		const char *k;
		json_t *v;
		int first = 1;
		json_object_foreach(j, k, v)
		{
			if (!first)
				fputc(',', out);
			first = 0;
			put_indent(out, inner);
			put_string(out, k);
			fputs(depth < 0 ? ":" : ": ", out);
			put_json(out, v, inner);
		}
		put_indent(out, depth);
		fputc('}', out);
		return;
	}
	case JSON_ARRAY: {
		if (!json_array_size(j)) {
			fputs("[]", out);
			return;
		}
		fputc('[', out);
		size_t i;
		json_t *v;
		json_array_foreach(j, i, v)
		{
			if (i)
				fputc(',', out);
			put_indent(out, inner);
			put_json(out, v, inner);
		}
		put_indent(out, depth);
		fputc(']', out);
		return;
	}
	case JSON_STRING:
		put_string(out, json_string_value(j));
		return;
	case JSON_INTEGER:
		fprintf(out, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
		return;
	case JSON_REAL:
		put_real(out, json_real_value(j));
		return;
	case JSON_TRUE:
		fputs("true", out);
		return;
	case JSON_FALSE:
		fputs("false", out);
		return;
	case JSON_NULL:
		fputs("null", out);
		return;
	}
}

/* ---- defaults: documented, not typed ---- */

/*
 * openapi-typescript, run with its default flags (defaultNonNullable), types
 * a property whose schema has a "default" as required, whatever the
 * object's "required" says, except inline under a path's parameters or
 * requestBody. Our params schemas give every key a default that the service
 * fills in, so a client's generated JobRequest would demand every key and a
 * Job's params (the request's echo, partial) would not fit. So in the
 * bundle every schema under components/schemas keeps its default for
 * readers, not as "default": it becomes "x-default" (the same value, for
 * tools) and a sentence "Default: `<JSON>`." at the end of the schema's
 * description. The files in schema/ keep "default", which the dashboard and
 * the validators use. Only schema positions are walked (JSON Schema 2020-12's
 * subschema keywords), so a property named "default", or a "default" inside
 * an example, a const or an enum, is left alone.
 */
static void move_defaults(json_t *schema, int depth);

static void move_defaults_in_map(json_t *map, int depth)
{
	const char *k;
	json_t *v;
	if (json_is_object(map))
		json_object_foreach(map, k, v) move_defaults(v, depth + 1);
}

static void move_defaults_in_array(json_t *list, int depth)
{
	size_t i;
	json_t *v;
	if (json_is_array(list))
		json_array_foreach(list, i, v) move_defaults(v, depth + 1);
}

static void move_defaults(json_t *schema, int depth)
{
	static const char *const one[] = { "items",
					   "additionalProperties",
					   "contains",
					   "propertyNames",
					   "not",
					   "if",
					   "then",
					   "else",
					   "unevaluatedItems",
					   "unevaluatedProperties",
					   "contentSchema" };
	static const char *const list[] = { "allOf", "anyOf", "oneOf", "prefixItems" };
	static const char *const map[] = { "properties", "patternProperties", "$defs",
					   "dependentSchemas" };
	if (depth > MAX_DEPTH)
		die("nested too deeply");
	if (!json_is_object(schema))
		return; /* a boolean schema */
	for (size_t i = 0; i < sizeof one / sizeof *one; i++)
		move_defaults(json_object_get(schema, one[i]), depth + 1);
	for (size_t i = 0; i < sizeof list / sizeof *list; i++)
		move_defaults_in_array(json_object_get(schema, list[i]), depth);
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		move_defaults_in_map(json_object_get(schema, map[i]), depth);

	json_t *value = json_object_get(schema, "default");
	if (!value)
		return;
	if (json_object_get(schema, "x-default"))
		die("a schema has both default and x-default");
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	if (!mem)
		die("open_memstream: %s", strerror(errno));
	put_json(mem, value, -1);
	if (fclose(mem))
		die("out of memory");
	json_t *desc = json_object_get(schema, "description");
	if (desc && !json_is_string(desc))
		die("a description that is not a string");
	const char *was = desc ? json_string_value(desc) : "";
	size_t wl = strlen(was);
	while (wl && isspace((unsigned char)was[wl - 1]))
		wl--;
	/* A code span that holds backticks needs a longer fence (CommonMark). */
	const char *fence = strchr(text, '`') ? "`` " : "`";
	const char *close = strchr(text, '`') ? " ``" : "`";
	char *note = xprintf("%.*s%s%sDefault: %s%s%s.", (int)wl, was,
			     wl && !strchr(".!?", was[wl - 1]) ? "." : "", wl ? " " : "", fence,
			     text, close);
	json_object_set_new(schema, "description", json_string(note));
	json_object_set(schema, "x-default", value);
	json_object_del(schema, "default");
	free(note);
	free(text);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: openapi_bundle OPENAPI.yaml > BUNDLE.json\n");
		return 2;
	}
	char *src_path = normalize(argv[1]);
	source_dir = dir_of(src_path);
	json_t *root = load_yaml(argv[1]);
	taken = json_object();

	json_t *components = json_object_get(root, "components");
	if (!components) {
		components = json_object();
		json_object_set_new(root, "components", components);
	}
	schemas = json_object_get(components, "schemas");
	if (!schemas) {
		schemas = json_object();
		json_object_set_new(components, "schemas", schemas);
	}
	if (!json_is_object(components) || !json_is_object(schemas))
		die("%s: components/schemas is not a mapping", argv[1]);

	/* Names openapi.yaml gives: every key of components/schemas, and the file
	 * of an entry that is only {$ref: FILE}. */
	const char *key;
	json_t *val;
	json_object_foreach(schemas, key, val) take_name(key, "openapi.yaml");
	json_object_foreach(schemas, key, val)
	{
		json_t *ref = json_object_get(val, "$ref");
		if (json_object_size(val) != 1 || !json_is_string(ref))
			continue;
		const char *r = json_string_value(ref);
		if (r[0] == '#' || (strchr(r, '#') && strchr(r, '#')[1]))
			continue;
		char *rel = xstrdup(r);
		if (strchr(rel, '#'))
			*strchr(rel, '#') = '\0';
		char *joined = xprintf("%s%s", source_dir, rel);
		char *path = normalize(joined);
		if (!file_find(path)) {
			json_object_del(taken, key);
			file_get(path, key);
		}
		free(path);
		free(joined);
		free(rel);
	}

	rewrite_refs(root, NULL, 0);
	/* Files found while bundling others are appended to `files`; loop by index. */
	for (size_t i = 0; i < nfiles; i++) {
		if (!files[i].done) {
			files[i].done = 1;
			file_bundle(i);
		}
	}
	check_refs(root, root, 0);
	json_object_foreach(schemas, key, val) move_defaults(val, 0);

	put_json(stdout, root, 0);
	fputc('\n', stdout);
	if (fflush(stdout) || ferror(stdout))
		die("write: %s", strerror(errno));
	json_decref(root);
	json_decref(taken);
	for (size_t i = 0; i < nfiles; i++) {
		free(files[i].path);
		free(files[i].name);
	}
	free(files);
	free((char *)source_dir);
	free(src_path);
	return 0;
}
