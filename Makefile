# chessd: build, test, run, bench. `make` builds build/chessd with what is
# installed and never installs anything. `make run` first installs what
# running needs (`make deps-run`: the compiler, the libraries' -dev packages,
# redis-server, Stockfish); `make test` and `make bench` also install the test
# tooling (`make deps-test`: CUnit, Node and the test suites' npm packages,
# nginx, clang for the fuzz targets, kubectl...). Each checks once per build
# directory (see RUN_DEPS_STAMP); `make deps` is both, checked again every time.
CC ?= cc
OPTFLAGS ?= -O3
CFLAGS ?= $(OPTFLAGS) -g
WARNINGS = -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror
CPPFLAGS += -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
ALL_CFLAGS = $(WARNINGS) $(CFLAGS) $(CPPFLAGS) $(LIB_CFLAGS) -MMD -MP
# `make test SANITIZE=1` builds into build/sanitize with AddressSanitizer and
# UndefinedBehaviorSanitizer and runs the whole suite there; any report fails.
ifeq ($(SANITIZE),1)
BUILD ?= build/sanitize
OPTFLAGS = -O1
SANITIZE_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CFLAGS += $(SANITIZE_FLAGS)
export ASAN_OPTIONS = detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1
# The variant perft counts up to 10M nodes under the sanitizers (all of them without).
export CHESSD_VARIANT_PERFT_BUDGET = 10000000
endif
BUILD ?= build

# The libraries, by their pkg-config names, with the Debian package that
# ships each .pc file: chessd's own, then the test runner's. libedit (BSD
# licence) is linked into the one chessd binary, but only `chessd play`
# calls it (api/play/play_input.c, the line editing of a person's moves).
PKG_CONFIG ?= pkg-config
LIB_PKGS = libmicrohttpd:libmicrohttpd-dev libcjson:libcjson-dev hiredis:libhiredis-dev libssl:libssl-dev libcrypto:libssl-dev \
	libedit:libedit-dev
TEST_PKGS = cunit:libcunit1-dev
pc_names = $(foreach p,$(1),$(firstword $(subst :, ,$(p))))
# pkg-config is asked once, when a recipe first needs the flags (so after
# `make test` or `make run` has installed the packages on a fresh machine).
LIB_CFLAGS = $(eval LIB_CFLAGS := $$(shell $(PKG_CONFIG) --cflags $(call pc_names,$(LIB_PKGS)) 2>/dev/null))$(LIB_CFLAGS)
LIB_LIBS = $(eval LIB_LIBS := $$(shell $(PKG_CONFIG) --libs $(call pc_names,$(LIB_PKGS)) 2>/dev/null) -lpthread -lm)$(LIB_LIBS)
TEST_CFLAGS = $(eval TEST_CFLAGS := $$(shell $(PKG_CONFIG) --cflags $(call pc_names,$(TEST_PKGS)) 2>/dev/null))$(TEST_CFLAGS)
TEST_LIBS = $(eval TEST_LIBS := $$(shell $(PKG_CONFIG) --libs $(call pc_names,$(TEST_PKGS)) 2>/dev/null))$(TEST_LIBS)

RULES_SRC = $(wildcard rules/*.c rules/base/*.c)
# api/ and its layer folders (api/http, api/game, api/render, api/live, api/play).
API_SRC = $(filter-out api/chessd.c,$(wildcard api/*.c api/*/*.c)) $(wildcard store/*.c)
API_ASM = $(wildcard api/*.S)
# Every .c file under $(1) (folders, searched recursively).
rwildcard = $(foreach d,$(wildcard $(addsuffix /*,$(1))),$(call rwildcard,$(d)) $(filter %.c,$(d)))
# The CUnit runner (tests/run_tests.c) and, at any depth, the shared helpers
# (tests/support) and the suites in the folders that mirror the sources
# (tests/rules, tests/store, tests/api, tests/api/http ...). The other folders
# under tests/ (bench, fuzz ...) build their C files themselves. The fake
# store replaces store/, so only the fuzz target that needs it links it.
TEST_SRC = $(filter-out tests/support/fake_store.c,$(wildcard tests/*.c) $(call rwildcard,tests/support tests/rules tests/store tests/api))

RULES_OBJ = $(RULES_SRC:%.c=$(BUILD)/%.o)
API_OBJ = $(API_SRC:%.c=$(BUILD)/%.o) $(API_ASM:%.S=$(BUILD)/%.o)
TEST_OBJ = $(TEST_SRC:%.c=$(BUILD)/%.o)

# What `make run` needs (`make deps-run`): the build, the service's libraries,
# the redis-server (with redis-cli) that tests/run-local.sh starts, and the
# engines chessd runs by default (--engine, /usr/games/stockfish, which Debian's
# stockfish installs; without it the engine routes answer 503; --variant-engine,
# /usr/games/fairy-stockfish, Debian's fairy-stockfish, for the variants).
RUN_PACKAGES = build-essential pkg-config libmicrohttpd-dev libcjson-dev libhiredis-dev libssl-dev libedit-dev \
	redis-server redis-tools stockfish fairy-stockfish
# What only the tests need (`make deps-test`), the fuzz targets' too (FUZZ_PACKAGES, tests/fuzz/fuzz.mk);
# chromium drives the embeddable board's page in tests/e2e/embed.test.mjs (with npm's playwright-core);
# npm, kubectl and the npm packages are installed after these (see $(TEST_DEPS_STAMP)).
# The tests use Stockfish and Fairy-Stockfish too (the UCI driver's suites, the
# differential tests, the computer in variants); they come with RUN_PACKAGES,
# which `make test` installs first.
TEST_PACKAGES = libcunit1-dev openssl hyperfine nodejs python3 curl jq nginx librsvg2-bin chromium \
	tmux $(FUZZ_PACKAGES)
# Only `make bench` needs these (it installs them itself); its game bench
# also starts a local Redis Cluster (redis-server, and redis-tools for
# redis-cli --cluster and redis-benchmark --cluster), and checks with curl and jq.
BENCH_PACKAGES = wrk redis-server redis-tools curl jq pgn-extract bc

# Node packages of the tests (the oracles, the e2e suite, the spec's lint and
# generated client), installed by `make deps-test` from their lock files.
NPM_DIRS = $(patsubst %/package-lock.json,%,$(wildcard tests/*/package-lock.json))

.PHONY: all test bench bench-levels deps deps-run deps-test run clean soak check-build-deps check-test-deps FORCE

all: $(BUILD)/chessd

# `make run` and `make test` are all a newcomer needs on a fresh Debian 12:
# they install what they need first, once per build directory (the stamps
# below). `make run` installs only RUN_PACKAGES; `make test` and `make bench`
# also TEST_PACKAGES, npm, kubectl and the npm packages, `npm ci` once per
# lock file (its stamp lives in that node_modules and goes when npm ci
# replaces it). Every other goal builds with what is installed. Edits to this
# Makefile do not rerun the checks: after changing a package list, run
# `make deps` (or deps-run, deps-test), which always checks again.
RUN_DEPS_STAMP = $(BUILD)/.deps-run
TEST_DEPS_STAMP = $(BUILD)/.deps-test
NPM_STAMPS = $(NPM_DIRS:%=%/node_modules/.npm-ci-done)
ifneq ($(filter test bench,$(MAKECMDGOALS)),)
AUTO_DEPS = $(RUN_DEPS_STAMP) $(TEST_DEPS_STAMP) $(NPM_STAMPS)
else ifneq ($(filter run,$(MAKECMDGOALS)),)
AUTO_DEPS = $(RUN_DEPS_STAMP)
endif
ifneq ($(filter deps deps-run deps-test,$(MAKECMDGOALS)),)
$(RUN_DEPS_STAMP) $(TEST_DEPS_STAMP): FORCE
endif
FORCE:

# Fails, naming them, when any of the pkg-config packages in $(1) (name:debian-package) is missing.
define need_pkgs
@command -v $(PKG_CONFIG) >/dev/null 2>&1 || { echo "make: $(PKG_CONFIG) is not installed: run 'make deps'" >&2; exit 1; }
@missing=""; for p in $(1); do \
		$(PKG_CONFIG) --exists "$${p%%:*}" || missing="$$missing $${p%%:*} (Debian package $${p#*:})"; \
	done; \
	[ -z "$$missing" ] || { echo "make: missing libraries:$$missing; run 'make deps' to install them" >&2; exit 1; }
endef

# Every object waits for these checks (order-only: they never rebuild anything).
check-build-deps: | $(AUTO_DEPS)
	@command -v $(CC) >/dev/null 2>&1 || { echo "make: the C compiler '$(CC)' is not installed: run 'make deps'" >&2; exit 1; }
	$(call need_pkgs,$(LIB_PKGS))

check-test-deps: | check-build-deps
	$(call need_pkgs,$(TEST_PKGS))

$(BUILD)/%.o: %.c | check-build-deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(TEST_OBJ): ALL_CFLAGS += $(TEST_CFLAGS)
$(TEST_OBJ): | check-test-deps

# The OpenAPI document is embedded in the binary (api/spec.S, .incbin).
$(BUILD)/api/spec.o: api/spec.S openapi.yaml | check-build-deps
	@mkdir -p $(dir $@)
	$(CC) -c $< -o $@

$(BUILD)/librules.a: $(RULES_OBJ)
	ar rcs $@ $^

# The opening names (rules/opening.c) come from a table made at build time:
# rules/openings/openings_gen.c plays the data set's lines with the rules core
# (every object but opening.o, as an archive, so that only what it uses is
# linked) and writes $(BUILD)/gen/opening_table.h.
OPENINGS_TSV = $(sort $(wildcard rules/openings/*.tsv))
OPENING_TABLE = $(BUILD)/gen/opening_table.h
$(BUILD)/librules-base.a: $(filter-out $(BUILD)/rules/opening.o,$(RULES_OBJ))
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/tools/openings_gen: rules/openings/openings_gen.c $(BUILD)/librules-base.a | check-build-deps
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(BUILD)/librules-base.a
$(OPENING_TABLE): $(BUILD)/tools/openings_gen $(OPENINGS_TSV)
	@mkdir -p $(dir $@)
	$(BUILD)/tools/openings_gen $@ $(OPENINGS_TSV)
$(BUILD)/rules/opening.o: $(OPENING_TABLE)
$(BUILD)/rules/opening.o: private ALL_CFLAGS += -I$(BUILD)/gen

# The rules core is linked first, so its code (perft's hot loops) sits at the
# same addresses whatever api/ and store/ grow to: its speed then does not
# move with their size (a layout shift alone once cost perft 15%).
$(BUILD)/chessd: $(RULES_OBJ) $(BUILD)/api/chessd.o $(API_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(LIB_LIBS)

# tests/api/game/test_tokens.c makes OpenSSL's RAND_bytes, HMAC and digest copies fail on demand through these wrappers.
TEST_LDFLAGS = -Wl,--wrap=RAND_bytes,--wrap=HMAC,--wrap=EVP_MD_CTX_copy_ex

$(BUILD)/run_tests: $(TEST_OBJ) $(API_OBJ) $(BUILD)/librules.a
	$(CC) $(CFLAGS) $(TEST_LDFLAGS) -o $@ $^ $(TEST_LIBS) $(LDLIBS) $(LIB_LIBS) -lm

REDOCLY = tests/openapi/node_modules/.bin/redocly

# Under the sanitizers the Cluster pass keeps the suites whose code differs
# on a Cluster (scripts across slots, bulk writes, streams, the webhook
# queue); the first pass runs them all (tests/e2e/run.sh).
ifeq ($(SANITIZE),1)
E2E_ENV = CHESSD_E2E_CLUSTER_SUITES="games idempotency bulk multi_events export webhooks"
endif

test: $(BUILD)/run_tests $(BUILD)/chessd | $(AUTO_DEPS)
	CHESSD_BIN=$(BUILD)/chessd $(BUILD)/run_tests
ifneq ($(SANITIZE),1)
	@# The CUnit suite again in a copy of the tracked files with nothing beside it.
	tests/fresh_clone.sh
endif
	tests/layering.sh $(BUILD)
	tests/header_guards.sh
	tests/file_openers.sh
	tests/api/http/interpose_guards.sh $(BUILD)
	tests/make_run_deps.sh
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true $(REDOCLY) lint --config tests/openapi/redocly.yaml --format=stylish openapi.yaml
	@# A TypeScript client generated from openapi.yaml, compiled with tsc --strict, plays a game on chessd.
	CHESSD_BIN=$(BUILD)/chessd tests/client/run.sh $(BUILD)/client
	tests/k8s/run.sh
	@# The oracles' own node tests: the variant oracles against the published perft counts.
	tests/oracle/run.sh
	CHESSD_BIN=$(BUILD)/chessd $(E2E_ENV) tests/e2e/run.sh
ifneq ($(SANITIZE),1)
	@# A few seconds of each fuzz target on its seeds (the fuzz builds carry ASan and UBSan themselves).
	$(MAKE) --no-print-directory fuzz-short
endif

# Installs the Debian packages of $(1) that are missing (apt-get, as root or with sudo).
define apt_install
@missing=""; for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	else echo "all packages installed"; fi
endef

bench: $(BUILD)/chessd | $(AUTO_DEPS)
	$(call apt_install,$(BENCH_PACKAGES))
	tests/bench/speed.sh $(BUILD)/chessd
	tests/bench/variant_bench.sh $(BUILD)/chessd
	@# A new seed each run (make test replays a fixed one); a failure names it for VARIANT_DIFF_SEED.
	VARIANT_DIFF_SEED=$$(date +%s) VARIANT_DIFF_PLIES=20000 CHESSD_BIN=$(BUILD)/chessd node --test tests/e2e/variants_differential.test.mjs
	$(MAKE) --no-print-directory $(BUILD)/move_floor && tests/bench/move_floor.sh $(BUILD)/move_floor
	tests/bench/game_growth.sh $(BUILD)/chessd
	tests/bench/clock_bench.sh $(BUILD)/chessd
	tests/bench/sleeping_bench.sh $(BUILD)/chessd
	tests/bench/bulk_bench.sh $(BUILD)/chessd
	tests/bench/fanout_bench.sh $(BUILD)/chessd
	BENCH_STREAMS=100 BENCH_GAMES=500 tests/bench/fanout_bench.sh $(BUILD)/chessd
	tests/bench/export_bench.sh $(BUILD)/chessd
	tests/bench/webhook_bench.sh $(BUILD)/chessd
	tests/bench/presence_bench.sh $(BUILD)/chessd
	tests/bench/pgn_bench.sh $(BUILD)/chessd
	$(MAKE) --no-print-directory $(BUILD)/jsonw_bench && $(BUILD)/jsonw_bench
	$(MAKE) --no-print-directory $(BUILD)/opening_bench && $(BUILD)/opening_bench
	tests/bench/engine_bench.sh $(BUILD)/chessd
	tests/bench/review_bench.sh $(BUILD)/chessd
	$(MAKE) --no-print-directory $(BUILD)/engine_match && $(BUILD)/engine_match --quick

# The strength of the levels of play, the full run api/engine/README.md's table of
# levels comes from (about 40 minutes on two cores; make bench runs --quick),
# then the levels in every variant the variant engine plays, each against the
# one below (a short match; no rating).
bench-levels: $(BUILD)/engine_match $(BUILD)/variant_levels | $(AUTO_DEPS)
	$(BUILD)/engine_match --markdown
	$(BUILD)/variant_levels

$(BUILD)/variant_levels: $(BUILD)/tests/bench/variant_levels.o $(BUILD)/tests/support/match.o $(API_OBJ) $(BUILD)/librules.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(LIB_LIBS) -lm

$(BUILD)/engine_match: $(BUILD)/tests/bench/engine_match.o $(BUILD)/tests/support/match.o $(API_OBJ) $(BUILD)/librules.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(LIB_LIBS) -lm

# What naming the opening adds to a 40-ply /v1/position/moves (the figure quoted in rules/opening.h).
$(BUILD)/opening_bench: $(BUILD)/tests/bench/opening_bench.o $(BUILD)/librules.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS)

# A move's I/O and nothing else, the floor under game_bench's CPU per move (tests/bench/move_floor.sh).
$(BUILD)/move_floor: $(BUILD)/tests/bench/move_floor.o
	$(CC) $(CFLAGS) -pthread -o $@ $^

# jsonw against a cJSON tree on a full Position (the figure quoted in api/http/jsonw.h).
$(BUILD)/jsonw_bench: $(BUILD)/tests/bench/jsonw_bench.o $(API_OBJ) $(BUILD)/librules.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(LIB_LIBS)

# Soak test (not in CI, a few minutes): SOAK_SECONDS (default 180), see tests/soak/soak.sh.
soak: $(BUILD)/chessd
	CHESSD_BIN=$(BUILD)/chessd SOAK_SUMMARY=$(BUILD)/soak-summary.txt tests/soak/soak.sh

# Starts a private redis-server too when CHESSD_REDIS_URL is not set.
run: $(BUILD)/chessd | $(AUTO_DEPS)
	tests/run-local.sh $(BUILD)/chessd

deps: deps-run deps-test
deps-run: $(RUN_DEPS_STAMP)
deps-test: $(TEST_DEPS_STAMP) $(NPM_STAMPS)

$(RUN_DEPS_STAMP):
	$(call apt_install,$(RUN_PACKAGES))
	@mkdir -p $(@D) && touch $@

$(TEST_DEPS_STAMP): | $(RUN_DEPS_STAMP)
	$(call apt_install,$(TEST_PACKAGES))
	@# Debian's nodejs lacks npm; a NodeSource nodejs bundles it (and conflicts with Debian's npm).
	@command -v npm >/dev/null 2>&1 || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq npm; }
	@# tests/k8s needs `kubectl kustomize`: Debian's kubernetes-client, unless a kubectl is already installed
	@# (another vendor's kubectl package owns /usr/bin/kubectl and kubernetes-client cannot replace it).
	@[ -z "$(NPM_DIRS)" ] || command -v kubectl >/dev/null 2>&1 || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq kubernetes-client; }
	@mkdir -p $(@D) && touch $@

# npm ci replaces node_modules, so the stamp inside it lasts until the next npm ci
# (errors only: no audit, funding or EBADENGINE warnings).
$(NPM_STAMPS): %/node_modules/.npm-ci-done: %/package-lock.json | $(TEST_DEPS_STAMP)
	npm ci --prefix $* --no-audit --no-fund --loglevel=error
	@mkdir -p $(@D) && touch $@

clean:
	rm -rf $(BUILD)

-include $(RULES_OBJ:.o=.d) $(API_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/api/chessd.d

include k8s/image/image.mk
include tests/fuzz/fuzz.mk

# Prints a variable's value (tests/make_run_deps.sh reads the package lists).
print-%:
	@echo '$($*)'
