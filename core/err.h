/*
 * err.h - the error value every core function reports through.
 *
 * Functions return 0 on success and a negative SF_E* code on failure; when
 * they take an `sf_err *` they also write a one-line, human-readable message
 * that names what was wrong and, where there is one, the allowed range. The
 * message is meant to reach a user unchanged (a CLI's stderr line, the detail
 * of an HTTP problem document), so it never contains a trailing newline.
 */
#ifndef SF_ERR_H
#define SF_ERR_H

#include <stddef.h>

enum {
	SF_OK = 0,
	SF_EINVAL = -1,  /* bad input: malformed, out of range, unknown name */
	SF_EBUDGET = -2, /* the work would exceed the configured budget */
	SF_ENOMEM = -3,  /* an allocation failed */
	SF_ERANGE = -4,  /* the input is valid but the result cannot be formed */
	SF_ESYS = -5,    /* the operating system refused (threads, files) */
};

typedef struct sf_err {
	int code;
	char msg[256];
} sf_err;

/*
 * Records `code` and a printf-style message in `err` (which may be NULL) and
 * returns `code`, so that callers can write `return sf_err_set(err, ...)`.
 */
int sf_err_set(sf_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Puts `prefix` in front of err->msg (truncating the end to fit), so that a
 * caller can say where an error arose ("params.length: "). NULL is a no-op.
 */
void sf_err_prefix(sf_err *err, const char *prefix);

/* The fixed name of an error code ("invalid", "budget", ...), never NULL. */
const char *sf_err_name(int code);

#endif
