/* SPDX-License-Identifier: Apache-2.0
 *
 * libFuzzer harness of the native engine (`python -m p4sim.native.fuzz`): the C generated
 * from a P4 program (its parser, controls, deparser, pipeline.c, api.c), built with
 * AddressSanitizer and UndefinedBehaviorSanitizer, takes arbitrary frames on arbitrary
 * ingress ports. Included after the generated program and fuzz_setup(), the control
 * plane's C API calls that fuzz.py recorded while its entries were installed.
 *
 * An input: two bytes of ingress port (little-endian; p4n_process_into keeps 9 bits, as the
 * packet I/O passes any port number), then the frame, 0 bytes and up (libFuzzer's -max_len
 * bounds it). State (registers, counters, meters) carries over from one input to the next,
 * as on the wire. With P4SIM_FUZZ_PRINT set, each output is printed ("port hex-bytes"), for
 * the test that compares the replayed setup with the device it was recorded from.
 */
#include <stdio.h>

static struct dev *fuzz_dev;
static int fuzz_print;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	fuzz_dev = fuzz_setup();
	fuzz_print = getenv("P4SIM_FUZZ_PRINT") != NULL;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t port = 0;
	if (size >= 2) {
		port = data[0] | (uint32_t)data[1] << 8;
		data += 2, size -= 2;
	} else {
		size = 0; /* a runt of the input itself: the empty frame on port 0 */
	}
	uint8_t *out;
	size_t n = p4n_process(fuzz_dev, port, data, size, &out);
	/* Every output record lies inside the buffer and fits what a port can be given. */
	for (size_t off = 0; off < n;) {
		uint32_t egress, len;
		if (n - off < P4N_OUT_HDR) {
			fprintf(stderr, "output record header cut at %zu of %zu bytes\n", off, n);
			abort();
		}
		size_t frame = off + P4N_OUT_HDR;
		off = p4n_out_read(&fuzz_dev->own_out, off, &egress, &len);
		if (off > n || egress > 0x1FF) {
			fprintf(stderr, "output record past the buffer or on port %u\n", egress);
			abort();
		}
		if (fuzz_print) {
			printf("%u ", egress);
			for (uint32_t i = 0; i < len; i++)
				printf("%02x", out[frame + i]);
			printf("\n");
		}
	}
	p4n_digests_clear(fuzz_dev);
	return 0;
}
