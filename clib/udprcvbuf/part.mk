# clib/udprcvbuf: an LD_PRELOAD library that sets the receive buffer of every UDP socket a
# program opens (DC_UDP_RCVBUF=BYTES), for the ngtcp2 flows' `udp_rcvbuf: large` (Debian's
# gtlsclient never sets one; see udprcvbuf.c's header).
.PHONY: udprcvbuf-build
BUILD_TARGETS += udprcvbuf-build
UDPRCVBUF := $(BUILD)/clib/libudprcvbuf.so

udprcvbuf-build: $(UDPRCVBUF)

$(UDPRCVBUF): $(ROOT)/clib/udprcvbuf/udprcvbuf.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -shared -o $@ $< -ldl
