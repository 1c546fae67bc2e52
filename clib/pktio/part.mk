# clib/pktio: the AF_PACKET library (sockets, sendmmsg batches, TPACKET_V2 rings) shared by
# linkem, clib/pktgen and p4sim's native engine (which compiles pktio.c
# itself, at run time). Built once here; parts link $(PKTIO_LIB) and add $(PKTIO_CFLAGS).
PKTIO_DIR    := $(ROOT)/clib/pktio
PKTIO_OUT    := $(BUILD)/clib
PKTIO_LIB    := $(PKTIO_OUT)/libpktio.a
PKTIO_CFLAGS := -I$(PKTIO_DIR)
PKTIO_DEPS   := $(PKTIO_LIB) $(PKTIO_DIR)/pktio.h

$(PKTIO_LIB): $(PKTIO_DIR)/pktio.c $(PKTIO_DIR)/pktio.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -c -o $(PKTIO_OUT)/pktio.o $<
	$(AR) rcs $@ $(PKTIO_OUT)/pktio.o
