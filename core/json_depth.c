/* json_depth.c - see json_depth.h. */
#include "json_depth.h"

int sf_json_depth(const char *text, size_t len, int limit)
{
	int depth = 0, deepest = 0, in_string = 0;
	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		if (in_string) {
			if (c == '\\')
				i++; /* the escaped character, whatever it is */
			else if (c == '"')
				in_string = 0;
			continue;
		}
		if (c == '"') {
			in_string = 1;
		} else if (c == '[' || c == '{') {
			if (++depth > deepest && (deepest = depth) > limit)
				return limit + 1;
		} else if ((c == ']' || c == '}') && depth > 0) {
			depth--;
		}
	}
	return deepest;
}
