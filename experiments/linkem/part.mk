# linkem: the user-space link emulator of the DC legs (C) and its Python driver.
#   make linkem-build   build/linkem/linkem and the tests' frame generator (clib/pktgen)
#   make linkem-test    C unit tests of the scheduling core (plain and under ASan/UBSan) and of
#                       the leg feedback reports (under ASan/UBSan),
#                       then the integration tests on veths in namespaces
#   make linkem-bench   delay error, rate accuracy and frame rate at 20/100/500 Mbit/s
#   make linkem-bench-cost  CPU us per frame, wakeups/s, delay error and idle CPU, this tree's
#                       linkem against main's side by side (LINKEM_COST_ARGS: --baseline REF)
.PHONY: linkem-build linkem-test linkem-unit linkem-bench linkem-bench-cost
BUILD_TARGETS += linkem-build
TEST_TARGETS  += linkem-test
BENCH_TARGETS += linkem-bench linkem-bench-cost

LINKEM_DIR    := $(ROOT)/experiments/linkem
LINKEM_OUT    := $(BUILD)/linkem
LINKEM_CFLAGS := -O2 -g -Wall -Wextra -Werror -std=gnu11
LINKEM_CORE   := $(addprefix $(LINKEM_DIR)/src/,link.c rng.c trace.c spec.c hist.c feedback.c)
LINKEM_HDRS   := $(wildcard $(LINKEM_DIR)/src/*.h)
LINKEM_SAN    := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

linkem-build: $(LINKEM_OUT)/linkem pktgen-build

# the program around the core: options, I/O, JSON stats, control socket, event loop
LINKEM_PROG   := $(addprefix $(LINKEM_DIR)/src/,options.c io.c stats.c control.c main.c)

$(LINKEM_OUT)/linkem: $(LINKEM_CORE) $(LINKEM_PROG) $(LINKEM_HDRS) $(PKTIO_DEPS)
	@mkdir -p $(@D)
	$(CC) $(LINKEM_CFLAGS) $(PKTIO_CFLAGS) -o $@ $(LINKEM_CORE) $(LINKEM_PROG) $(PKTIO_LIB) $(PKTIO_XSK_LIBS) -lm

$(LINKEM_OUT)/test_link: $(LINKEM_CORE) $(LINKEM_DIR)/tests/test_link.c $(LINKEM_HDRS)
	@mkdir -p $(@D)
	$(CC) $(LINKEM_CFLAGS) -I$(LINKEM_DIR)/src -o $@ $(LINKEM_CORE) $(LINKEM_DIR)/tests/test_link.c -lm

$(LINKEM_OUT)/test_link_san: $(LINKEM_CORE) $(LINKEM_DIR)/tests/test_link.c $(LINKEM_HDRS)
	@mkdir -p $(@D)
	$(CC) $(LINKEM_CFLAGS) $(LINKEM_SAN) -I$(LINKEM_DIR)/src -o $@ $(LINKEM_CORE) $(LINKEM_DIR)/tests/test_link.c -lm

$(LINKEM_OUT)/test_feedback: $(LINKEM_CORE) $(LINKEM_DIR)/tests/test_feedback.c $(LINKEM_HDRS)
	@mkdir -p $(@D)
	$(CC) $(LINKEM_CFLAGS) $(LINKEM_SAN) -I$(LINKEM_DIR)/src -o $@ $(LINKEM_CORE) $(LINKEM_DIR)/tests/test_feedback.c -lm

# the C tests' shared CHECK harness
$(LINKEM_OUT)/test_link $(LINKEM_OUT)/test_link_san $(LINKEM_OUT)/test_feedback: $(LINKEM_DIR)/tests/check.h

linkem-unit: $(LINKEM_OUT)/test_link $(LINKEM_OUT)/test_link_san $(LINKEM_OUT)/test_feedback
	$(LINKEM_OUT)/test_link
	$(LINKEM_OUT)/test_link_san
	$(LINKEM_OUT)/test_feedback

linkem-test: linkem-build linkem-unit
	$(PY) -m pytest -q experiments/tests/test_linkem_*.py

linkem-bench: linkem-build
	$(PY) $(LINKEM_DIR)/bench/bench.py

linkem-bench-cost: linkem-build
	$(PY) $(LINKEM_DIR)/bench/cost.py $(LINKEM_COST_ARGS)
