# Starforge. `make run` and `make test` are all the set-up a fresh Debian 12
# machine needs (as root): both first install any missing Debian package
# through scripts/deps.sh.
#
#   make            build build/starforge
#   make run        build and start the service (starforge serve, defaults)
#   make test       build, then the integration tests (Node.js, the pinned
#                   npm packages of package-lock.json) and every cmocka
#                   test binary
#   make test SANITIZE=address,undefined   the same under ASan and UBSan
#   make bench      the benchmarks (not tests; figures in README), the
#                   cluster's on a throwaway PostgreSQL (bench/cluster_bench.mjs)
#   make soak       the long checks, every tests/soak/*.sh (minutes; not
#                   part of make test; docs/RELIABILITY.md)
#   make fuzz       every libFuzzer target in tests/fuzz/ for FUZZ_SECONDS
#                   each (default 60; clang, not part of make test;
#                   docs/RELIABILITY.md, "## Fuzzing")
#   make fuzz-coverage   line coverage of the parsers by the fuzz corpora
#   make format     clang-format every C file in place

CC := gcc
SANITIZE ?=
BUILD ?= build
ifneq ($(SANITIZE),)
BUILD := build/sanitize
endif

PKGS := jansson sqlite3 libuv libmicrohttpd zlib libpq
WARN := -Wall -Wextra -Werror -Wformat=2 -Wshadow
# -ffp-contract=off: no fused multiply-add, so floating-point results (and the
# levels and pictures built from them) are the same bytes on every machine.
CFLAGS := -std=c11 -O2 -g -ffp-contract=off $(WARN) -D_POSIX_C_SOURCE=200809L -pthread \
	  $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm -pthread
ifneq ($(SANITIZE),)
CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif

# The release version, printed by `starforge --version` and exported as
# starforge_build_info in /metrics; the one place it is written. COMMIT is
# the git commit the binary is built from ("unknown" outside a git checkout,
# e.g. in the Docker build, or pass COMMIT=...). Both go into
# $(BUILD)/gen/version.c, rewritten only when they change, so a new commit
# recompiles that one file and relinks, nothing else.
VERSION := 0.1.0
ifeq ($(origin COMMIT),undefined)
COMMIT := $(shell git -C '$(CURDIR)' rev-parse --short HEAD 2>/dev/null || echo unknown)
endif

CORE_SRC := $(wildcard core/*.c core/*/*.c)
SERVER_SRC := $(wildcard server/*/*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
SERVER_OBJ := $(SERVER_SRC:%.c=$(BUILD)/%.o)
# Files compiled into the binary (server/base/embedded.h); scripts/embed.sh turns
# each set into a C table under $(BUILD)/gen/. web/ is the dashboard
# (server/api/web.c serves it at /). The OpenAPI document is not embedded as
# written: tools/openapi_bundle.c inlines every schema it reaches into one
# self-contained $(BUILD)/gen/openapi.json, which the binary serves.
MIGRATIONS := $(sort $(wildcard migrations/*.sql))
# The PostgreSQL back end's own steps (server/store/store_pg.c), embedded in
# the same generated file as a second table, sf_pg_migrations.
PG_MIGRATIONS := $(sort $(wildcard migrations/postgres/*.sql))
SCHEMAS := $(sort $(shell find schema -name '*.json' 2>/dev/null))
ASSETS := $(SCHEMAS) $(sort $(wildcard web/*))
BUNDLER := $(BUILD)/tools/openapi_bundle
GEN_OBJ := $(BUILD)/gen/migrations.o $(BUILD)/gen/assets.o $(BUILD)/gen/openapi.o $(BUILD)/gen/version.o
# libserver.a: everything in server/ but main() (server/cli/main.c), so tests can link it too.
SERVER_LIB_OBJ := $(filter-out $(BUILD)/server/cli/main.o,$(SERVER_OBJ)) $(GEN_OBJ)
TEST_SRC := $(wildcard tests/test_*.c)
TESTS := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BIN := $(BUILD)/starforge

.PHONY: all deps run test bench fuzz fuzz-coverage soak image image-services format clean FORCE
.DEFAULT_GOAL := all

all: deps
	@$(MAKE) --no-print-directory $(BIN)

deps:
	@sh scripts/deps.sh

run: all
	$(BIN) serve

# The integration tests (tests/integration/run.sh: npm ci when needed, the
# OpenAPI lint, the real binary over HTTP) come first, so that the output
# ends with cmocka's summary. Both run under one throwaway PostgreSQL
# cluster (tests/pg/cluster.sh: STARFORGE_TEST_PG names it), so the
# PostgreSQL back end is tested on every run, as SQLite is.
test: deps
	@sh scripts/deps.sh test
	@sh scripts/layers.sh
	@$(MAKE) --no-print-directory $(BIN) $(TESTS)
	@STARFORGE_BIN=$(abspath $(BIN)) sh tests/pg/cluster.sh \
		sh -c 'sh tests/integration/run.sh && sh tests/run.sh "$$@"' sh $(TESTS)

bench: deps
	@sh scripts/deps.sh bench
	@sh scripts/deps.sh test
	@$(MAKE) --no-print-directory $(BIN) $(BUILD)/bench/bench_lattice $(BUILD)/bench/bench_search \
		$(BUILD)/bench/bench_racetrack $(BUILD)/bench/bench_digger $(BUILD)/bench/bare_mhd \
		$(BUILD)/bench/bench_estimate $(BUILD)/bench/bench_optimum \
		$(BUILD)/bench/bench_difficulty
	$(BUILD)/bench/bench_lattice
	$(BUILD)/bench/bench_estimate
	$(BUILD)/bench/bench_optimum
	$(BUILD)/bench/bench_search
	$(BUILD)/bench/bench_difficulty
	$(BUILD)/bench/bench_racetrack
	$(BUILD)/bench/bench_digger
	sh bench/http_bench.sh $(BIN) $(BUILD)/bench/bare_mhd
	@if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then \
		npm ci --no-audit --no-fund && touch node_modules; fi
	STARFORGE_BIN=$(abspath $(BIN)) sh tests/pg/cluster.sh \
		env STARFORGE_TEST_DB=postgres node bench/cluster_bench.mjs

# Every tests/soak/*.sh against the built binary, each writing its figures
# under build/soak/: the wrk load soak, the kill -9 loop. wrk and curl come
# with the bench group, Node.js with the test group.
soak: deps
	@sh scripts/deps.sh bench
	@sh scripts/deps.sh test
	@$(MAKE) --no-print-directory $(BIN)
	@for s in tests/soak/*.sh; do STARFORGE_BIN=$(abspath $(BIN)) bash $$s || exit 1; done

# The container image with podman, tagged starforge:$(VERSION) and :latest;
# where no registry answers, a local debootstrap base first (scripts/image.sh).
image:
	@sh scripts/deps.sh image
	@sh scripts/image.sh $(VERSION)

# The other images docker/compose.scale.yaml runs, postgres:15 and nginx:1.22;
# where no registry answers, made locally from Debian's packages
# (docker/local/; scripts/image.sh --services). tests/image/run.sh uses it.
image-services:
	@sh scripts/deps.sh image
	@sh scripts/image.sh --services

format:
	clang-format -i $(CORE_SRC) $(SERVER_SRC) $(wildcard core/*.h core/*/*.h server/*/*.h tests/*.c tests/*.h bench/*.c)

clean:
	rm -rf build

$(BUILD)/libcore.a: $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libserver.a: $(SERVER_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(BUILD)/server/cli/main.o $(BUILD)/libserver.a $(BUILD)/libcore.a
	$(CC) -O2 $(LTO_LINK) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(BUILD)/libserver.a $(BUILD)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -Icore $(LDFLAGS) -o $@ $< $(BUILD)/libserver.a $(BUILD)/libcore.a \
		$(LDLIBS) -lcmocka

# ---- fuzzing ----
# tests/fuzz/fuzz_<target>.c, one libFuzzer target each. `make fuzz` builds
# them with clang (-fsanitize=fuzzer,address,undefined) against core/ and
# server/ compiled again with clang into build/fuzz/, and runs each for
# FUZZ_SECONDS on a copy of its seeds (tests/fuzz/run.sh). `make test`
# replays the committed seeds and crash inputs through the same files
# compiled with gcc, entry points renamed (tests/test_fuzz_corpus.c).
FUZZ_TARGETS ?= job_request sequence digger_level px_model routes
FUZZ_ALL := job_request sequence digger_level px_model routes
FUZZ_SECONDS ?= 60
FUZZ_OUT := build/fuzz
FUZZ_CC := clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -O1 -g -ffp-contract=off $(WARN) -D_POSIX_C_SOURCE=200809L -pthread \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(FUZZ_SAN)
FUZZ_LIB_OBJ := $(patsubst %.c,$(FUZZ_OUT)/%.o,$(CORE_SRC) $(filter-out server/cli/main.c,$(SERVER_SRC))) \
	$(FUZZ_OUT)/gen/migrations.o $(FUZZ_OUT)/gen/assets.o $(FUZZ_OUT)/gen/openapi.o $(FUZZ_OUT)/gen/version.o
FUZZ_BINS := $(FUZZ_TARGETS:%=$(FUZZ_OUT)/fuzz_%)
FUZZ_ENTRY_OBJ := $(FUZZ_ALL:%=$(BUILD)/tests/fuzz/fuzz_%.o)

fuzz:
	@sh scripts/deps.sh fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BINS)
	@sh tests/fuzz/run.sh $(FUZZ_OUT) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

$(FUZZ_OUT)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_OUT)/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -Iserver/base -c -o $@ $<

$(FUZZ_OUT)/libstarforge.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_OUT)/libstarforge.a
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OUT)/libstarforge.a $(LDLIBS)

# Source-based coverage (llvm-cov) of what the corpora reach: the targets
# built again without sanitizers, each input of build/fuzz/corpus/<target>
# (what make fuzz kept) and of the committed seeds run once.
FUZZ_COV := build/fuzz-cov
FUZZ_COV_CFLAGS := -std=c11 -O1 -g -ffp-contract=off $(WARN) -D_POSIX_C_SOURCE=200809L -pthread \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null) -fprofile-instr-generate -fcoverage-mapping
FUZZ_COV_OBJ := $(FUZZ_LIB_OBJ:$(FUZZ_OUT)/%=$(FUZZ_COV)/%)

fuzz-coverage:
	@sh scripts/deps.sh fuzz
	@$(MAKE) --no-print-directory $(FUZZ_TARGETS:%=$(FUZZ_COV)/fuzz_%)
	@sh tests/fuzz/coverage.sh $(FUZZ_COV) $(FUZZ_OUT) $(FUZZ_TARGETS)

$(FUZZ_COV)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_COV_CFLAGS) -MMD -MP -c -o $@ $<

$(FUZZ_COV)/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_COV_CFLAGS) -MMD -MP -Iserver/base -c -o $@ $<

$(FUZZ_COV)/libstarforge.a: $(FUZZ_COV_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_COV)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_COV)/libstarforge.a
	$(FUZZ_CC) $(FUZZ_COV_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_COV)/libstarforge.a $(LDLIBS)

# The same targets for the corpus replay in make test: gcc, no libFuzzer.
$(BUILD)/tests/fuzz/fuzz_%.o: tests/fuzz/fuzz_%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -DFUZZ_ENTRY=fuzz_$*_one -c -o $@ $<

$(BUILD)/tests/test_fuzz_corpus: tests/test_fuzz_corpus.c $(FUZZ_ENTRY_OBJ) $(BUILD)/libserver.a \
		$(BUILD)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -DFUZZ_DIR='"$(abspath tests/fuzz)"' $(LDFLAGS) -o $@ $< \
		$(FUZZ_ENTRY_OBJ) $(BUILD)/libserver.a $(BUILD)/libcore.a $(LDLIBS) -lcmocka

# The embedded tables. Each depends on a list of its file names, rewritten
# only when the set changes, so adding, removing or renaming a file
# regenerates the table as surely as editing one does.
# (A list's name, upper-cased, is the variable it holds: docker.test.mjs
# compares each with the Makefile's.)
$(BUILD)/gen/migrations.list: FORCE
	@mkdir -p $(dir $@)
	@echo '$(MIGRATIONS)' | cmp -s - $@ || echo '$(MIGRATIONS)' > $@

$(BUILD)/gen/pg_migrations.list: FORCE
	@mkdir -p $(dir $@)
	@echo '$(PG_MIGRATIONS)' | cmp -s - $@ || echo '$(PG_MIGRATIONS)' > $@

$(BUILD)/gen/assets.list: FORCE
	@mkdir -p $(dir $@)
	@echo '$(ASSETS)' | cmp -s - $@ || echo '$(ASSETS)' > $@

# server/base/version.h: the version and the commit, compared with what the file
# holds at every make and rewritten only on a change.
VERSION_C = printf '/* Generated by the Makefile; see server/base/version.h. */\n\#include "version.h"\nconst char sf_version[] = "%s";\nconst char sf_commit[] = "%s";\n' '$(VERSION)' '$(COMMIT)'

$(BUILD)/gen/version.c: FORCE
	@mkdir -p $(dir $@)
	@$(VERSION_C) | cmp -s - $@ || $(VERSION_C) > $@

# Two tables in one file: SQLite's sf_migrations and PostgreSQL's
# sf_pg_migrations (declared in server/store/store_pg.h).
$(BUILD)/gen/migrations.c: scripts/embed.sh $(MIGRATIONS) $(PG_MIGRATIONS) $(BUILD)/gen/migrations.list \
		$(BUILD)/gen/pg_migrations.list
	{ sh scripts/embed.sh sf_migrations $(MIGRATIONS) && \
	  sh scripts/embed.sh sf_pg_migrations $(PG_MIGRATIONS); } > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/assets.c: scripts/embed.sh $(ASSETS) $(BUILD)/gen/assets.list
	sh scripts/embed.sh sf_assets $(ASSETS) > $@.tmp && mv $@.tmp $@

# The served OpenAPI document (tools/openapi_bundle.c): openapi.yaml with
# every schema it reaches inlined. It depends on every schema file and on
# their list, so a new or edited schema rebuilds it. The bundler is a build
# tool: jansson and libyaml (scripts/deps.sh), never linked into starforge.
$(BUNDLER): tools/openapi_bundle.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(shell pkg-config --cflags yaml-0.1 2>/dev/null) $(LDFLAGS) -o $@ $< \
		$(shell pkg-config --libs jansson yaml-0.1 2>/dev/null)

$(BUILD)/gen/openapi.json: $(BUNDLER) openapi.yaml $(SCHEMAS) $(BUILD)/gen/assets.list
	$(BUNDLER) openapi.yaml > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/openapi.c: scripts/embed.sh $(BUILD)/gen/openapi.json
	sh scripts/embed.sh sf_openapi $(BUILD)/gen/openapi.json > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(CFLAGS) -MMD -MP -Iserver/base -c -o $@ $<

$(BUILD)/bench/bare_mhd: bench/bare_mhd.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LTO_LINK) -MMD -MP -Icore $(LDFLAGS) -o $@ $< $(BUILD)/libcore.a $(LDLIBS)

# Regenerates the synthetic PX trace set: $(BUILD)/tools/px_synth > data/px/synthetic.csv
$(BUILD)/tools/px_synth: tools/px_synth.c $(BUILD)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -Icore $(LDFLAGS) -o $@ $< $(BUILD)/libcore.a $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

# core/digger also carries GCC's link-time form of its code (fat objects:
# the plain code stays, and the tests link that), and the service and the
# benchmarks link it with -flto, so that the solver's hot loop inlines the
# engine's taps and the terrain table across files (docs/digger.md,
# "Link-time optimisation": 3.7 % fewer instructions on hardest's
# generator, the same levels). Not under SANITIZE, nor in the fuzz builds.
ifeq ($(SANITIZE),)
DIGGER_LTO := -flto=auto -ffat-lto-objects
LTO_LINK := -flto=auto
endif
$(BUILD)/core/digger/%.o: CFLAGS += $(DIGGER_LTO)

-include $(CORE_OBJ:.o=.d) $(SERVER_OBJ:.o=.d) $(GEN_OBJ:.o=.d) $(TESTS:=.d) \
	$(FUZZ_ENTRY_OBJ:.o=.d) $(wildcard $(FUZZ_OUT)/*/*.d $(FUZZ_OUT)/*/*/*.d) \
	$(wildcard $(FUZZ_COV)/*/*.d $(FUZZ_COV)/*/*/*.d) \
	$(BUILD)/bench/bench_lattice.d $(BUILD)/bench/bench_estimate.d $(BUILD)/bench/bench_optimum.d \
	$(BUILD)/bench/bench_search.d $(BUILD)/bench/bench_difficulty.d $(BUILD)/bench/bench_racetrack.d \
	$(BUILD)/bench/bench_digger.d
