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
#   make bench      the benchmarks (not tests; figures in README)
#   make format     clang-format every C file in place

CC := gcc
SANITIZE ?=
BUILD ?= build
ifneq ($(SANITIZE),)
BUILD := build/sanitize
endif

PKGS := jansson sqlite3 libuv libmicrohttpd
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

CORE_SRC := $(wildcard core/*.c core/*/*.c)
SERVER_SRC := $(wildcard server/*.c)
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/%.o)
SERVER_OBJ := $(SERVER_SRC:%.c=$(BUILD)/%.o)
# Files compiled into the binary (server/embedded.h); scripts/embed.sh turns
# each set into a C table under $(BUILD)/gen/. web/ is the dashboard
# (server/web.c serves it at /).
MIGRATIONS := $(sort $(wildcard migrations/*.sql))
ASSETS := openapi.yaml $(sort $(shell find schema -name '*.json' 2>/dev/null)) $(sort $(wildcard web/*))
GEN_OBJ := $(BUILD)/gen/migrations.o $(BUILD)/gen/assets.o
# libserver.a: everything in server/ but main(), so tests can link it too.
SERVER_LIB_OBJ := $(filter-out $(BUILD)/server/main.o,$(SERVER_OBJ)) $(GEN_OBJ)
TEST_SRC := $(wildcard tests/test_*.c)
TESTS := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
BIN := $(BUILD)/starforge

.PHONY: all deps run test bench format clean FORCE
.DEFAULT_GOAL := all

all: deps
	@$(MAKE) --no-print-directory $(BIN)

deps:
	@sh scripts/deps.sh

run: all
	$(BIN) serve

# The integration tests (tests/integration/run.sh: npm ci when needed, the
# OpenAPI lint, the real binary over HTTP) come first, so that the output
# ends with cmocka's summary.
test: deps
	@sh scripts/deps.sh test
	@$(MAKE) --no-print-directory $(BIN) $(TESTS)
	@STARFORGE_BIN=$(abspath $(BIN)) sh tests/integration/run.sh
	@STARFORGE_BIN=$(abspath $(BIN)) sh tests/run.sh $(TESTS)

bench: deps
	@sh scripts/deps.sh bench
	@$(MAKE) --no-print-directory $(BIN) $(BUILD)/bench/bench_lattice $(BUILD)/bench/bench_search \
		$(BUILD)/bench/bench_racetrack $(BUILD)/bench/bench_digger $(BUILD)/bench/bare_mhd
	$(BUILD)/bench/bench_lattice
	$(BUILD)/bench/bench_search
	$(BUILD)/bench/bench_racetrack
	$(BUILD)/bench/bench_digger
	sh bench/http_bench.sh $(BIN) $(BUILD)/bench/bare_mhd

format:
	clang-format -i $(CORE_SRC) $(SERVER_SRC) $(wildcard core/*.h core/*/*.h server/*.h tests/*.c tests/*.h bench/*.c)

clean:
	rm -rf build

$(BUILD)/libcore.a: $(CORE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/libserver.a: $(SERVER_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(BUILD)/server/main.o $(BUILD)/libserver.a $(BUILD)/libcore.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/%.c $(BUILD)/libserver.a $(BUILD)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -Icore $(LDFLAGS) -o $@ $< $(BUILD)/libserver.a $(BUILD)/libcore.a \
		$(LDLIBS) -lcmocka

# The embedded tables. Each depends on a list of its file names, rewritten
# only when the set changes, so adding, removing or renaming a file
# regenerates the table as surely as editing one does.
$(BUILD)/gen/migrations.list: FORCE
	@mkdir -p $(dir $@)
	@echo '$(MIGRATIONS)' | cmp -s - $@ || echo '$(MIGRATIONS)' > $@

$(BUILD)/gen/assets.list: FORCE
	@mkdir -p $(dir $@)
	@echo '$(ASSETS)' | cmp -s - $@ || echo '$(ASSETS)' > $@

$(BUILD)/gen/migrations.c: scripts/embed.sh $(MIGRATIONS) $(BUILD)/gen/migrations.list
	sh scripts/embed.sh sf_migrations $(MIGRATIONS) > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/assets.c: scripts/embed.sh $(ASSETS) $(BUILD)/gen/assets.list
	sh scripts/embed.sh sf_assets $(ASSETS) > $@.tmp && mv $@.tmp $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c
	$(CC) $(CFLAGS) -MMD -MP -Iserver -c -o $@ $<

$(BUILD)/bench/bare_mhd: bench/bare_mhd.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/bench/%: bench/%.c $(BUILD)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -Icore $(LDFLAGS) -o $@ $< $(BUILD)/libcore.a $(LDLIBS)

# Regenerates the synthetic PX trace set: $(BUILD)/tools/px_synth > data/px/synthetic.csv
$(BUILD)/tools/px_synth: tools/px_synth.c $(BUILD)/libcore.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -Icore $(LDFLAGS) -o $@ $< $(BUILD)/libcore.a $(LDLIBS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

-include $(CORE_OBJ:.o=.d) $(SERVER_OBJ:.o=.d) $(GEN_OBJ:.o=.d) $(TESTS:=.d) \
	$(BUILD)/bench/bench_lattice.d $(BUILD)/bench/bench_search.d $(BUILD)/bench/bench_racetrack.d \
	$(BUILD)/bench/bench_digger.d
