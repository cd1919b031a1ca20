/* err.c - see err.h. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int sf_err_set(sf_err *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->code = code;
		vsnprintf(err->msg, sizeof err->msg, fmt, ap);
		va_end(ap);
	}
	return code;
}

void sf_err_prefix(sf_err *err, const char *prefix)
{
	if (!err)
		return;
	size_t cap = sizeof err->msg - 1;
	size_t p = strlen(prefix), m = strnlen(err->msg, cap);
	if (p > cap)
		p = cap;
	if (p + m > cap)
		m = cap - p;
	memmove(err->msg + p, err->msg, m);
	memcpy(err->msg, prefix, p);
	err->msg[p + m] = '\0';
}

const char *sf_err_name(int code)
{
	switch (code) {
	case SF_OK:
		return "ok";
	case SF_EINVAL:
		return "invalid";
	case SF_EBUDGET:
		return "budget";
	case SF_ENOMEM:
		return "nomem";
	case SF_ERANGE:
		return "range";
	case SF_ESYS:
		return "system";
	default:
		return "unknown";
	}
}
