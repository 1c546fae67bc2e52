# clib/pktio: the AF_PACKET library (sockets, sendmmsg batches, TPACKET_V2 rings) and its
# AF_XDP side (pktio_xsk: a socket per interface, libxdp), shared by
# linkem, clib/pktgen and p4sim's native engine (which compiles pktio.c
# itself, at run time). Built once here; parts link $(PKTIO_LIB) and add $(PKTIO_CFLAGS).
PKTIO_DIR    := $(ROOT)/clib/pktio
PKTIO_OUT    := $(BUILD)/clib
PKTIO_LIB    := $(PKTIO_OUT)/libpktio.a
PKTIO_CFLAGS := -I$(PKTIO_DIR)
PKTIO_DEPS   := $(PKTIO_LIB) $(PKTIO_DIR)/pktio.h $(PKTIO_DIR)/pktio_xsk.h
# what a part that calls pktio_xsk_* links besides $(PKTIO_LIB)
PKTIO_XSK_LIBS = $$(pkg-config --libs libxdp libbpf)

$(PKTIO_LIB): $(PKTIO_DIR)/pktio.c $(PKTIO_DIR)/pktio.h $(PKTIO_DIR)/pktio_xsk.c \
              $(PKTIO_DIR)/pktio_xsk.h
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -c -o $(PKTIO_OUT)/pktio.o $<
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -c -o $(PKTIO_OUT)/pktio_xsk.o \
		$(PKTIO_DIR)/pktio_xsk.c
	$(AR) rcs $@ $(PKTIO_OUT)/pktio.o $(PKTIO_OUT)/pktio_xsk.o
