/*
 * xml_support.h - a small well-formedness checker for the XML the service
 * writes (the SVG pictures), for the test suites: no DTDs, comments or
 * CDATA, which the writers never produce, so meeting one is a failure.
 */
#ifndef SF_TEST_XML_SUPPORT_H
#define SF_TEST_XML_SUPPORT_H

#include <ctype.h>
#include <stdio.h>
#include <string.h>

static inline int name_char(char c, int first)
{
	return isalpha((unsigned char)c) || c == '_' || c == ':' ||
	       (!first && (isdigit((unsigned char)c) || c == '-' || c == '.'));
}

/* Length of the XML name at p (0: none). */
static inline size_t name_len(const char *p)
{
	size_t n = 0;
	while (name_char(p[n], n == 0))
		n++;
	return n;
}

/* Length of the entity reference at p ('&'), or 0 when it is not one. */
static inline size_t entity_len(const char *p)
{
	static const char *const named[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	for (size_t i = 0; i < 5; i++)
		if (!strncmp(p, named[i], strlen(named[i])))
			return strlen(named[i]);
	if (p[1] == '#') {
		size_t n = 2;
		int hex = p[2] == 'x';
		n += (size_t)hex;
		size_t digits = 0;
		while (hex ? isxdigit((unsigned char)p[n]) : isdigit((unsigned char)p[n])) {
			n++;
			digits++;
		}
		if (digits && p[n] == ';')
			return n + 1;
	}
	return 0;
}

/*
 * Checks that `s` is a well-formed XML document, an optional declaration
 * then one element named svg: tags balanced and properly nested, attributes
 * name="value" (quoted, no '<' inside, '&' only as an entity, no name
 * twice in one element), text without '<', '>' or a bare '&', nothing but
 * white space outside the root. Returns the number of elements, or -1 with
 * the reason and the byte offset in `why`.
 */
static inline int xml_check(const char *s, char *why, size_t len)
{
	const char *p = s;
	char stack[64][32];
	int depth = 0, elements = 0, roots = 0;
#define BAD(...)                                                             \
	do {                                                                 \
		int at_ = snprintf(why, len, "offset %ld: ", (long)(p - s)); \
		snprintf(why + at_, len - (size_t)at_, __VA_ARGS__);         \
		return -1;                                                   \
	} while (0)
	if (!strncmp(p, "<?xml ", 6)) {
		const char *end = strstr(p, "?>");
		if (!end)
			BAD("unterminated declaration");
		p = end + 2;
	}
	while (*p) {
		if (*p == '&') {
			size_t n = entity_len(p);
			if (!n)
				BAD("a bare '&' in text");
			if (!depth)
				BAD("text outside the root");
			p += n;
			continue;
		}
		if (*p == '>')
			BAD("a raw '>' in text");
		if (*p != '<') {
			if (!depth && !isspace((unsigned char)*p))
				BAD("text outside the root");
			p++;
			continue;
		}
		if (p[1] == '/') {
			size_t n = name_len(p + 2);
			if (!n || !depth)
				BAD("a closing tag without an open element");
			if (strlen(stack[depth - 1]) != n || strncmp(stack[depth - 1], p + 2, n))
				BAD("</%.*s> closes <%s>", (int)n, p + 2, stack[depth - 1]);
			p += 2 + n;
			while (isspace((unsigned char)*p))
				p++;
			if (*p != '>')
				BAD("a closing tag without '>'");
			p++;
			depth--;
			continue;
		}
		size_t n = name_len(p + 1);
		if (!n || n >= sizeof stack[0])
			BAD("'<' that starts no element");
		if (!depth && (roots++ || n != 3 || strncmp(p + 1, "svg", 3)))
			BAD("the root is not one <svg>");
		char tag[32];
		memcpy(tag, p + 1, n);
		tag[n] = '\0';
		elements++;
		p += 1 + n;
		const char *attrs[64];
		size_t alen[64];
		int nattrs = 0;
		for (;;) {
			int space = 0;
			while (isspace((unsigned char)*p)) {
				p++;
				space = 1;
			}
			if (*p == '>' || (p[0] == '/' && p[1] == '>'))
				break;
			size_t an = name_len(p);
			if (!an || !space)
				BAD("<%s>: a bad attribute", tag);
			for (int i = 0; i < nattrs; i++)
				if (alen[i] == an && !strncmp(attrs[i], p, an))
					BAD("<%s>: attribute %.*s twice", tag, (int)an, p);
			if (nattrs < 64) {
				attrs[nattrs] = p;
				alen[nattrs++] = an;
			}
			p += an;
			if (*p != '=' || (p[1] != '"' && p[1] != '\''))
				BAD("<%s>: attribute %.*s not name=\"value\"", tag, (int)an,
				    p - an);
			char quote = p[1];
			p += 2;
			while (*p && *p != quote) {
				if (*p == '<')
					BAD("<%s>: '<' in an attribute", tag);
				if (*p == '&') {
					size_t e = entity_len(p);
					if (!e)
						BAD("<%s>: a bare '&' in an attribute", tag);
					p += e;
					continue;
				}
				p++;
			}
			if (!*p)
				BAD("<%s>: an unterminated attribute", tag);
			p++;
		}
		if (*p == '/') {
			p += 2;
		} else {
			if (depth == 64)
				BAD("elements nested too deep");
			memcpy(stack[depth++], tag, n + 1);
			p++;
		}
	}
	if (depth)
		BAD("<%s> is never closed", stack[depth - 1]);
	if (!roots)
		BAD("no root element");
	return elements;
#undef BAD
}

/* Occurrences of `needle` in `s`. */
static inline int count(const char *s, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

#endif
