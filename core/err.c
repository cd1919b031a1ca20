/* err.c - see err.h. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>

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
