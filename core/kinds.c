/* kinds.c - the registry; see kinds.h. */
#include "kinds.h"

#include <string.h>

extern const sf_kind lat_kind_def; /* core/lattice/kind.c */

static const sf_kind *const registry[] = {
	&lat_kind_def,
};

const sf_kind *sf_kind_find(const char *name)
{
	for (size_t i = 0; name && i < sf_kind_count(); i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	return NULL;
}

size_t sf_kind_count(void)
{
	return sizeof registry / sizeof registry[0];
}

const sf_kind *sf_kind_at(size_t i)
{
	return i < sf_kind_count() ? registry[i] : NULL;
}
