/*
 * embedded.h - files compiled into the binary, so that a lone starforge
 * executable carries its schema migrations and the documents it serves
 * (the OpenAPI description, the JSON Schemas and the dashboard) with no
 * install step and no way for the files on disk to disagree with the code.
 *
 * The Makefile generates the tables with scripts/embed.sh into
 * build/gen/migrations.c, build/gen/assets.c and build/gen/openapi.c, and
 * regenerates them when any embedded file, or the set of files, changes.
 */
#ifndef SF_EMBEDDED_H
#define SF_EMBEDDED_H

#include <stddef.h>

/*
 * One file: `name` is its repository path ("migrations/0001_initial.sql",
 * "schema/level.schema.json"), `data` its `len` bytes followed by a NUL
 * that `len` does not count, so text files are C strings as well.
 */
typedef struct sf_embedded {
	const char *name;
	const unsigned char *data;
	size_t len;
} sf_embedded;

/* Every migrations/NNNN_name.sql, sorted by name (so by version); see migrations/README.md. */
extern const sf_embedded sf_migrations[];
extern const size_t sf_migrations_count;
/* Every migrations/postgres/NNNN_name.sql, sorted by name: the PostgreSQL
 * back end's steps (server/store/store_pg.c). */
extern const sf_embedded sf_pg_migrations[];
extern const size_t sf_pg_migrations_count;

/*
 * Every .json file under schema/ at any depth, then every file of web/ (the
 * dashboard, server/api/web.c), each set sorted by path.
 */
extern const sf_embedded sf_assets[];
extern const size_t sf_assets_count;

/*
 * One entry: the OpenAPI document served at /openapi.yaml and /openapi.json,
 * openapi.yaml with every schema it reaches inlined by tools/openapi_bundle.c
 * (JSON text, so YAML as well; every $ref local). Its name is the build path
 * of the bundle; use the entry, not the name.
 */
extern const sf_embedded sf_openapi[];
extern const size_t sf_openapi_count;

#endif
