/* SPDX-License-Identifier: Apache-2.0
 *
 * trafgen fwd IN OUT SECONDS: the raw veth + AF_PACKET ceiling of `python -m p4sim.bench`
 * (built on first use, cached): io.c's TPACKET ring and sendmmsg forwarding IN -> OUT
 * untouched, no pipeline. Prints {"rx": N, "tx": N}. The bench's frames come from
 * clib/pktgen (rate, flood, latency).
 */
#include "io.c"

#include <stdio.h>

static void forward_to_1(void *dev, uint32_t port, const uint8_t *f, size_t n, struct p4n_out *out)
{
	(void)dev, (void)port;
	uint8_t *copy = p4n_out_append(out, 1, (uint32_t)n);
	if (copy)
		memcpy(copy, f, n);
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
