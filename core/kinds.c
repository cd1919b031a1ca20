/* kinds.c - the registry; see kinds.h. */
#include "kinds.h"

#include <stdio.h>
#include <string.h>

extern const sf_kind lat_kind_def; /* core/lattice/kind.c */
extern const sf_kind trk_kind_def; /* core/racetrack/kind.c */
extern const sf_kind dig_kind_def; /* core/digger/kind.c */

static const sf_kind *const registry[] = {
	&lat_kind_def,
	&trk_kind_def,
	&dig_kind_def,
};

const sf_kind *sf_kind_find(const char *name)
{
	for (size_t i = 0; name && i < sf_kind_count(); i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	return NULL;
}

char *sf_kind_names(char *buf, size_t len)
{
	size_t at = 0;
	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < sf_kind_count() && at < len; i++) {
		int n = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", registry[i]->name);
		if (n < 0)
			break;
		at += (size_t)n;
	}
	return buf;
}

const sf_level_filter *sf_kind_filter(const sf_kind *kind, const char *name)
{
	for (size_t i = 0; name && i < sf_kind_count(); i++) {
		const sf_kind *k = kind ? kind : registry[i];
		for (const sf_level_filter *f = k->filters; f && f->name; f++)
			if (!strcmp(f->name, name))
				return f;
		if (kind)
			break;
	}
	return NULL;
}

char *sf_kind_filter_names(const sf_kind *kind, char *buf, size_t len)
{
	size_t at = 0;
	if (len)
		buf[0] = '\0';
	for (const sf_level_filter *f = kind ? kind->filters : NULL; f && f->name && at < len;
	     f++) {
		int n = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", f->name);
		if (n < 0)
			break;
		at += (size_t)n;
	}
	if (!at && len)
		snprintf(buf, len, "(none)");
	return buf;
}

int sf_resource_name_valid(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n < 1 || n > SF_RESOURCE_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '_' || name[i] == '-'))
			return 0;
	return 1;
}

size_t sf_kind_count(void)
{
	return sizeof registry / sizeof registry[0];
}

const sf_kind *sf_kind_at(size_t i)
{
	return i < sf_kind_count() ? registry[i] : NULL;
}
