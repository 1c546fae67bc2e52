/* SPDX-License-Identifier: Apache-2.0
 *
 * libFuzzer harness of the native switch's packet I/O (io.c) around a program's pipeline
 * (`python -m p4sim.native.fuzz`, the targets named *_io): iobench.c's stand-ins for the
 * kernel (a receive ring in memory, a send that copies frames out and refuses those past a
 * length, as an interface's MTU does) and io.c's own loop, rx_round(): batches of frames
 * through p4n_process_into() into one output buffer, transmit batches, up-calls for the CPU
 * port. Included after the generated program and fuzz_setup(), like fuzz_native.c.
 *
 * An input: one byte of settings (bits 0-1: the send limit, 14, 64, 1514 bytes or none;
 * bit 2: port 2 is the CPU port; bit 3: the ports are closed with the up-calls left queued,
 * and opened again), then frames into port 0, each a 16-bit little-endian
 * length and its bytes (the input's end cuts the last one short). A frame longer than a
 * ring slot is cut as the kernel cuts it (io.c counts it as truncated).
 */
#include "iobench.c"

static struct dev *fuzz_dev;
static struct io *fuzz_io;
static uint32_t fuzz_at; /* the ring slot the next frame goes to */

static void open_ports(void)
{
	fuzz_io = p4nio_new();
	fuzz_at = 0;
	for (uint32_t port = 0; port < BENCH_PORTS; port++) {
		char name[16];
		snprintf(name, sizeof name, "fuzz%u", port);
		if (p4nio_add_port(fuzz_io, port, name, 1500, NULL) < 0)
			abort();
		port_fd[port] = fuzz_io->p[port].fd;
	}
	p4nio_set_pipeline(fuzz_io, (process_fn)p4n_process_into, (lock_fn)p4n_lock,
			   (lock_fn)p4n_unlock, fuzz_dev, -1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_dev = fuzz_setup();
	open_ports();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t limits[4] = {14, 64, 1514, UINT32_MAX};
	if (size == 0)
		return 0;
	send_limit = limits[data[0] & 3];
	fuzz_io->cpu_port = data[0] & 4 ? 2 : -1;
	/* the frames one after the other, their lengths apart, as deliver() takes them */
	uint8_t *bytes = malloc(size);
	uint32_t *lens = malloc((size / 2 + 1) * sizeof *lens);
	uint32_t n = 0;
	size_t at = 0;
	for (size_t i = 1; i + 2 <= size;) {
		uint32_t len = data[i] | (uint32_t)data[i + 1] << 8;
		i += 2;
		if (len > size - i)
			len = (uint32_t)(size - i);
		memcpy(bytes + at, data + i, len);
		at += len, i += len;
		lens[n++] = len;
	}
	struct frames fs = {bytes, lens, n, 0, 0};
	for (uint32_t done = 0; done < n;) {
		unsigned burst = n - done < RX_BURST ? n - done : RX_BURST;
		done += deliver(&fuzz_io->p[0].ring, &fuzz_at, &fs, burst, 0);
		rx_round(fuzz_io);
	}
	if (data[0] & 8) {
		p4nio_close(fuzz_io);
		open_ports();
	}
	/* what went up for the CPU port: taken as the Python side takes it */
	uint8_t up[1 << 16];
	uint32_t kind, port;
	while (fuzz_io->qlen)
		p4nio_upcall(fuzz_io, up, sizeof up, &kind, &port, 0);
	p4n_digests_clear(fuzz_dev);
	free(bytes);
	free(lens);
	return 0;
}
