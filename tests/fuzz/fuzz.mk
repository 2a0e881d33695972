# libFuzzer targets (tests/fuzz/fuzz_*.c) under ASan and UBSan, built with clang.
# Included from the Makefile (include tests/fuzz/fuzz.mk):
#   make fuzz         builds $(FUZZ_BUILD)/<target> for every tests/fuzz/fuzz_*.c
#   make fuzz-short   runs each target FUZZ_SHORT_SECONDS on its seed corpus (for make test)
#   make fuzz-long    runs each target FUZZ_SECONDS (default 600); with -j they run side by side
#   make fuzz-run-<target> FUZZ_SECONDS=N   one target only
# Objects go to $(FUZZ_BUILD)/obj, new inputs to $(FUZZ_BUILD)/corpus/<target>, crashes to
# $(FUZZ_BUILD)/artifacts/<target>/: tests/fuzz/corpus/ (the committed seeds) is only read.

# Debian packages these targets need (the Makefile's deps installs them).
FUZZ_PACKAGES = clang-14 libclang-rt-14-dev

CC_FUZZ ?= $(or $(shell command -v clang-14 2>/dev/null),$(shell command -v clang 2>/dev/null),clang-14)
FUZZ_BUILD ?= $(BUILD)/fuzz
FUZZ_OBJ = $(FUZZ_BUILD)/obj
FUZZ_CFLAGS ?= -O1 -g
FUZZ_SANITIZE = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# The libraries' flags and the package checks are the Makefile's (LIB_CFLAGS, LIB_LIBS, check-build-deps).
FUZZ_ALL_CFLAGS = $(WARNINGS) $(FUZZ_CFLAGS) $(CPPFLAGS) $(LIB_CFLAGS) $(FUZZ_SANITIZE) -fsanitize=fuzzer-no-link -MMD -MP
FUZZ_LIBS = $(LIB_LIBS)

FUZZ_SHORT_SECONDS ?= 10
FUZZ_SHORT_RUNS ?= 500000
FUZZ_SECONDS ?= 600
# Extra libFuzzer flags for every run (e.g. FUZZ_FLAGS=-jobs=2).
FUZZ_FLAGS ?=

# The server's own sources minus main (chessd.c) and the libmicrohttpd glue
# (server.c): tests/fuzz/http_harness.c hands requests to the router itself, plus
# the targets' shared helpers (tests/fuzz/*.c other than fuzz_*.c).
FUZZ_LIB_SRC = $(wildcard rules/*.c rules/base/*.c) $(filter-out api/chessd.c api/server.c,$(wildcard api/*.c api/*/*.c)) $(wildcard store/*.c) \
	$(filter-out tests/fuzz/fuzz_%.c,$(wildcard tests/fuzz/*.c))
FUZZ_LIB_OBJ = $(FUZZ_LIB_SRC:%.c=$(FUZZ_OBJ)/%.o) $(patsubst %.S,$(FUZZ_OBJ)/%.o,$(wildcard api/*.S))
FUZZ_TARGETS = $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS = $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%)

.PHONY: check-fuzz-deps fuzz fuzz-short fuzz-long $(FUZZ_TARGETS:%=fuzz-short-%) $(FUZZ_TARGETS:%=fuzz-run-%)

fuzz: $(FUZZ_BINS)

# Order-only prerequisite of every fuzz object: the libraries, then clang.
check-fuzz-deps: | check-build-deps
	@command -v $(CC_FUZZ) >/dev/null 2>&1 || { echo "make: $(CC_FUZZ) is not installed (the fuzz targets need clang): run 'make deps'" >&2; exit 1; }

$(FUZZ_OBJ)/%.o: %.c | check-fuzz-deps
	@mkdir -p $(dir $@)
	$(CC_FUZZ) $(FUZZ_ALL_CFLAGS) -c $< -o $@

# rules/opening.c includes the table the Makefile generates (OPENING_TABLE).
$(FUZZ_OBJ)/rules/opening.o: $(OPENING_TABLE)
$(FUZZ_OBJ)/rules/opening.o: private FUZZ_ALL_CFLAGS += -I$(BUILD)/gen

# api/spec.S embeds openapi.yaml with .incbin.
$(FUZZ_OBJ)/api/spec.o: api/spec.S openapi.yaml | check-fuzz-deps
	@mkdir -p $(dir $@)
	$(CC_FUZZ) -c $< -o $@

# An archive, so each target links only the objects it needs; a target
# linked with the fake store (fuzz_games) never pulls store_redis.o.
$(FUZZ_BUILD)/libchessd-fuzz.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# The targets' own objects are kept (make would delete them as intermediates).
.SECONDARY: $(FUZZ_TARGETS:%=$(FUZZ_OBJ)/tests/fuzz/%.o)

$(FUZZ_BUILD)/fuzz_%: $(FUZZ_OBJ)/tests/fuzz/fuzz_%.o $(FUZZ_BUILD)/libchessd-fuzz.a
	$(CC_FUZZ) $(FUZZ_CFLAGS) $(FUZZ_SANITIZE) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS)

# fuzz_games plays against the fake store (tests/support/fake_store.c),
# linked before the archive: its store_* functions are then defined before
# the archive is searched, and store/'s Redis code is never pulled in.
$(FUZZ_BUILD)/fuzz_games: $(FUZZ_OBJ)/tests/fuzz/fuzz_games.o $(FUZZ_OBJ)/tests/support/fake_store.o \
		$(FUZZ_BUILD)/libchessd-fuzz.a
	$(CC_FUZZ) $(FUZZ_CFLAGS) $(FUZZ_SANITIZE) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS)

# One run of target $(1) for $(2) seconds, at most $(3) inputs (empty: no limit).
# A crash, leak, timeout or failed check makes libFuzzer, and so make, fail.
define fuzz_run
	@mkdir -p $(FUZZ_BUILD)/corpus/$(1) $(FUZZ_BUILD)/artifacts/$(1)
	UBSAN_OPTIONS=print_stacktrace=1 $(FUZZ_BUILD)/$(1) -max_total_time=$(2) $(if $(3),-runs=$(3)) -timeout=10 -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_BUILD)/artifacts/$(1)/ \
		$(if $(wildcard tests/fuzz/$(1).dict),-dict=tests/fuzz/$(1).dict) $(FUZZ_FLAGS) \
		$(FUZZ_BUILD)/corpus/$(1) tests/fuzz/corpus/$(1)
endef

fuzz-short: $(FUZZ_TARGETS:%=fuzz-short-%)

fuzz-long: $(FUZZ_TARGETS:%=fuzz-run-%)

$(FUZZ_TARGETS:%=fuzz-short-%): fuzz-short-%: $(FUZZ_BUILD)/%
	$(call fuzz_run,$*,$(FUZZ_SHORT_SECONDS),$(FUZZ_SHORT_RUNS))

$(FUZZ_TARGETS:%=fuzz-run-%): fuzz-run-%: $(FUZZ_BUILD)/%
	$(call fuzz_run,$*,$(FUZZ_SECONDS),)

-include $(FUZZ_LIB_OBJ:.o=.d) $(FUZZ_TARGETS:%=$(FUZZ_OBJ)/tests/fuzz/%.d) $(FUZZ_OBJ)/tests/support/fake_store.d
