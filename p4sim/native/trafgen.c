/* SPDX-License-Identifier: Apache-2.0
 *
 * trafgen fwd IN OUT SECONDS: the raw veth + AF_PACKET ceiling of `python -m p4sim.bench`
 * (built on first use, cached): io.c's TPACKET ring and sendmmsg forwarding IN -> OUT
 * untouched, no pipeline. Prints {"rx": N, "tx": N}. The bench's frames come from
 * clib/pktgen (rate, flood, latency).
 */
#include "io.c"

#include <stdio.h>

static size_t forward_to_1(void *dev, uint32_t port, const uint8_t *f, size_t n, uint8_t **out)
{
	static uint8_t buf[70000];
	(void)dev, (void)port;
	uint32_t p = 1, len = (uint32_t)n;
	memcpy(buf, &p, 4);
	memcpy(buf + 4, &len, 4);
	memcpy(buf + 8, f, n);
	*out = buf;
	return n + 8;
}

static void *stopper(void *arg)
{
	struct io *io = arg;
	sleep(io->stop ? 0 : (unsigned)(uintptr_t)io->dev);
	p4nio_stop(io);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5 || strcmp(argv[1], "fwd")) {
		fprintf(stderr, "trafgen: error: usage: trafgen fwd IN OUT SECONDS\n");
		return 2;
	}
	struct io *io = p4nio_new();
	if (p4nio_add_port(io, 0, argv[2], 1500, NULL) ||
	    p4nio_add_port(io, 1, argv[3], 1500, NULL)) {
		fprintf(stderr, "trafgen: error: cannot open %s/%s\n", argv[2], argv[3]);
		return 1;
	}
	p4nio_set_pipeline(io, forward_to_1, NULL, NULL, (void *)(uintptr_t)atoi(argv[4]), -1);
	pthread_t t;
	pthread_create(&t, NULL, stopper, io);
	p4nio_run(io);
	printf("{\"rx\": %llu, \"tx\": %llu}\n", (unsigned long long)io->rx,
	       (unsigned long long)io->tx);
	return 0;
}
