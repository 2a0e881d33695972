# chessd: build, test, run, bench. `make` builds build/chessd; `make test`
# builds and runs every test; `make deps` installs the Debian packages needed.
CC ?= cc
OPTFLAGS ?= -O3
CFLAGS ?= $(OPTFLAGS) -g
WARNINGS = -std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror
CPPFLAGS += -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
ALL_CFLAGS = $(WARNINGS) $(CFLAGS) $(CPPFLAGS) -MMD -MP
# `make test SANITIZE=1` builds into build/sanitize with AddressSanitizer and
# UndefinedBehaviorSanitizer and runs the whole suite there; any report fails.
ifeq ($(SANITIZE),1)
BUILD ?= build/sanitize
OPTFLAGS = -O1
SANITIZE_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CFLAGS += $(SANITIZE_FLAGS)
export ASAN_OPTIONS = detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1
endif
BUILD ?= build
API_LIBS = -lmicrohttpd -lcjson -lhiredis -lcrypto -lpthread

RULES_SRC = $(wildcard rules/*.c)
API_SRC = $(filter-out api/chessd.c,$(wildcard api/*.c)) $(wildcard store/*.c)
API_ASM = $(wildcard api/*.S)
TEST_SRC = $(wildcard tests/*.c)

RULES_OBJ = $(RULES_SRC:%.c=$(BUILD)/%.o)
API_OBJ = $(API_SRC:%.c=$(BUILD)/%.o) $(API_ASM:%.S=$(BUILD)/%.o)
TEST_OBJ = $(TEST_SRC:%.c=$(BUILD)/%.o)

DEB_PACKAGES = build-essential pkg-config libmicrohttpd-dev libcjson-dev libhiredis-dev libcunit1-dev \
	libssl-dev redis-server redis-tools stockfish hyperfine nodejs python3 curl jq nginx \
	clang-14 libclang-rt-14-dev
# Only `make bench` needs these.
BENCH_PACKAGES = wrk

# Node packages of the test oracles, installed by `make deps` from their lock files.
NPM_DIRS = $(patsubst %/package-lock.json,%,$(wildcard tests/*/package-lock.json))

.PHONY: all test bench deps run clean soak

all: $(BUILD)/chessd

# Every build first makes sure the packages are there (see deps), so `make run`
# and `make test` work on a fresh machine; the stamp keeps it to once per
# build directory and lock file change.
DEPS_STAMP = $(BUILD)/.deps-installed
$(DEPS_STAMP): Makefile $(wildcard tests/*/package-lock.json)
	@mkdir -p $(BUILD)
	$(MAKE) --no-print-directory deps
	@touch $@

$(BUILD)/%.o: %.c | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# The OpenAPI document is embedded in the binary (api/spec.S, .incbin).
$(BUILD)/api/spec.o: api/spec.S openapi.yaml | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -c $< -o $@

$(BUILD)/librules.a: $(RULES_OBJ)
	ar rcs $@ $^

$(BUILD)/chessd: $(BUILD)/api/chessd.o $(API_OBJ) $(BUILD)/librules.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(API_LIBS)

$(BUILD)/run_tests: $(TEST_OBJ) $(API_OBJ) $(BUILD)/librules.a
	$(CC) $(CFLAGS) -o $@ $^ -lcunit $(LDLIBS) $(API_LIBS)

REDOCLY = tests/openapi/node_modules/.bin/redocly

test: $(DEPS_STAMP) $(BUILD)/run_tests $(BUILD)/chessd
	CHESSD_BIN=$(BUILD)/chessd $(BUILD)/run_tests
	tests/layering.sh $(BUILD)
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true $(REDOCLY) lint --format=stylish openapi.yaml
	tests/k8s/run.sh
	CHESSD_BIN=$(BUILD)/chessd tests/e2e/run.sh
ifneq ($(SANITIZE),1)
	@# A few seconds of each fuzz target on its seeds (the fuzz builds carry ASan and UBSan themselves).
	$(MAKE) --no-print-directory fuzz-short
endif

bench: $(BUILD)/chessd
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(BENCH_PACKAGES)" NPM_DIRS=
	tests/bench/perft_bench.sh $(BUILD)/chessd
	tests/bench/http_bench.sh $(BUILD)/chessd
	tests/bench/game_bench.sh $(BUILD)/chessd
	$(MAKE) --no-print-directory $(BUILD)/jsonw_bench && $(BUILD)/jsonw_bench

# jsonw against a cJSON tree on a full Position (the figure quoted in api/jsonw.h).
$(BUILD)/jsonw_bench: $(BUILD)/tests/bench/jsonw_bench.o $(API_OBJ) $(BUILD)/librules.a
	$(CC) $(CFLAGS) -o $@ $^ $(LDLIBS) $(API_LIBS)

# Soak test (not in CI, a few minutes): SOAK_SECONDS (default 180), see tests/soak/soak.sh.
soak: $(BUILD)/chessd
	CHESSD_BIN=$(BUILD)/chessd SOAK_SUMMARY=$(BUILD)/soak-summary.txt tests/soak/soak.sh

# Starts a private redis-server too when CHESSD_REDIS_URL is not set.
run: $(BUILD)/chessd
	scripts/run-local.sh $(BUILD)/chessd

deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	else echo "all packages installed"; fi
	@# Debian's nodejs lacks npm; a NodeSource nodejs bundles it (and conflicts with Debian's npm).
	@command -v npm >/dev/null 2>&1 || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq npm; }
	@for d in $(NPM_DIRS); do npm ci --prefix $$d --no-audit --no-fund || exit 1; done
	@# tests/k8s needs `kubectl kustomize`: Debian's kubernetes-client, unless a kubectl is already installed
	@# (another vendor's kubectl package owns /usr/bin/kubectl and kubernetes-client cannot replace it).
	@[ -z "$(NPM_DIRS)" ] || command -v kubectl >/dev/null 2>&1 || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq kubernetes-client; }

clean:
	rm -rf $(BUILD)

-include $(RULES_OBJ:.o=.d) $(API_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/api/chessd.d

include mk/image.mk
include mk/fuzz.mk
