/*
 * version.h - what this binary is: the release version and the git commit
 * it was built from. Both are set in one place, the Makefile (VERSION, and
 * COMMIT from `git rev-parse --short HEAD`, "unknown" outside a checkout),
 * which writes them into $(BUILD)/gen/version.c. `starforge --version`
 * prints them and /metrics exports them as starforge_build_info.
 */
#ifndef SF_VERSION_H
#define SF_VERSION_H

/* The release version, e.g. "0.1.0"; static storage, never NULL. */
extern const char sf_version[];

/* The abbreviated git commit, e.g. "ef3b1ea", or "unknown"; static storage. */
extern const char sf_commit[];

#endif
