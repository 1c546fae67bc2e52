/* SPDX-License-Identifier: Apache-2.0
 *
 * The pipeline's outputs, as the generated program (runtime.h) writes them and the packet I/O
 * (io.c) sends them: records of (port u32, length u32, frame bytes) appended to a buffer its
 * owner keeps. The I/O loop hands the pipeline one buffer for a whole batch and sends the
 * frames straight from it, so a frame is copied once in user space on its way out (deparsed
 * into this buffer); the kernel's copy into the socket buffer is the only other.
 */
#ifndef P4N_OUTBUF_H
#define P4N_OUTBUF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define P4N_OUT_HDR 8 /* port u32, length u32: then the frame */

struct p4n_out {
	uint8_t *buf;
	size_t len, cap;
};

/* A record of `n` frame bytes for `port` appended at o->len: where its frame bytes go, or
 * NULL (nothing appended) when the buffer cannot grow. The buffer may move: keep offsets. */
static inline uint8_t *p4n_out_append(struct p4n_out *o, uint32_t port, uint32_t n)
{
	size_t need = o->len + P4N_OUT_HDR + n;
	if (need > o->cap) {
		size_t cap = need * 2;
		uint8_t *grown = realloc(o->buf, cap);
		if (!grown)
			return NULL;
		o->buf = grown, o->cap = cap;
	}
	uint8_t *rec = o->buf + o->len;
	memcpy(rec, &port, 4);
	memcpy(rec + 4, &n, 4);
	o->len = need;
	return rec + P4N_OUT_HDR;
}

/* The record at offset `off` (< o->len): its port and frame length; the offset of the next. */
static inline size_t p4n_out_read(const struct p4n_out *o, size_t off, uint32_t *port, uint32_t *n)
{
	memcpy(port, o->buf + off, 4);
	memcpy(n, o->buf + off + 4, 4);
	return off + P4N_OUT_HDR + *n;
}

#endif /* P4N_OUTBUF_H */
