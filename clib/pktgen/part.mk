# clib/pktgen: the frame generator and sink of linkem's tests and benchmark, the pdcp-agent
# benchmark and p4sim's switch benchmark (test frames or PDCP PDUs, paced or not, or closed
# and open loops through a switch; see pktgen.c's header).
.PHONY: pktgen-build
BUILD_TARGETS += pktgen-build
PKTGEN := $(PKTIO_OUT)/pktgen

pktgen-build: $(PKTGEN)

$(PKTGEN): $(ROOT)/clib/pktgen/pktgen.c $(PKTIO_DEPS)
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror $(PKTIO_CFLAGS) -o $@ $< $(PKTIO_LIB) -lm
