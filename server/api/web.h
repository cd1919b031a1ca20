/*
 * web.h - the dashboard: GET / and GET /web/{file}, the static files of web/
 * compiled into the binary (server/base/embedded.h), plus kinds.json, which lists
 * the registered level kinds for the dashboard's submit form.
 */
#ifndef SF_WEB_H
#define SF_WEB_H

#include "service.h"

/*
 * GET /: web/index.html, text/html, with a strong ETag (304 on a matching
 * If-None-Match) and Cache-Control: no-cache, so a browser revalidates and
 * a new binary's dashboard shows at once. 404 (problem) when the binary was
 * built without web/.
 */
void web_index(service *svc, http_req *r, const route_match *m);

/*
 * GET /web/{file}: web/<file> with the content type its extension names
 * (html, js, css, json, svg; anything else application/octet-stream), or
 * kinds.json, generated from the kind registry: {"kinds": [{"name",
 * "summary", "params_schema"}]}, params_schema being the embedded
 * schema/<kind>/params.schema.json or null. Same caching as web_index.
 * 404 (problem) for any other name; {file} is a single decoded path
 * segment, so it cannot reach outside web/.
 */
void web_file(service *svc, http_req *r, const route_match *m);

#endif
