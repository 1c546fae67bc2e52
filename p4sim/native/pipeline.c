/* SPDX-License-Identifier: Apache-2.0
 *
 * The v1model traffic manager in C, step for step as p4sim/v1model/device.py (BMv2's order):
 * ingress, I2E clone, resubmit, multicast or unicast, egress, E2E clone, drop, deparse,
 * recirculate or transmit. Included by the generated program after its types and blocks
 * (hdr_t, meta_t, sm_t, gen_* functions, preserve_fields()).
 */

enum { NORMAL = 0, INGRESS_CLONE = 1, EGRESS_CLONE = 2, RECIRC = 4, REPLICATION = 5, RESUBMIT = 6 };
#define DROP_PORT 511
#define MAX_RECIRCULATIONS 16

static uint64_t now_us(struct dev *d) { return (uint64_t)((now_s() - d->start) * 1e6) & MASK(48); }

static void new_sm(struct dev *d, struct pkt *p, uint32_t port, uint32_t len, uint32_t itype)
{
	memset(&p->sm, 0, sizeof p->sm);
	p->sm.f_ingress_port = port;
	p->sm.f_packet_length = len;
	p->sm.f_instance_type = itype;
	p->sm.f_ingress_global_timestamp = now_us(d);
}

static void clear_requests(struct pkt *p)
{
	p->clone_session = -1;
	p->clone_type = -1;
	p->clone_fields = -1;
	p->resubmit_fields = -1;
	p->recirc_fields = -1;
	p->truncate = 0;
	memset(p->direct_colors, 0, sizeof p->direct_colors);
}

static int parse(struct dev *d, struct pkt *p)
{
	p->pos = 0;
	int err = gen_parser(d, p);
	return err > 0 ? err : 0; /* an explicit reject records no error */
}

static void run_ingress(struct dev *d, uint32_t port, const uint8_t *frame, uint32_t len,
			uint32_t itype, const meta_t *preserved, int fields, int depth);

static void run_egress(struct dev *d, struct pkt *p, uint32_t port, uint32_t rid, uint32_t itype);

static void do_clone(struct dev *d, struct pkt *cur, uint32_t itype, int original)
{
	struct group *s = &d->sessions[cur->clone_session & (MAX_GROUPS - 1)];
	if (cur->clone_session >= MAX_GROUPS || !s->present)
		return;
	uint32_t port = cur->sm.f_ingress_port;
	struct pkt base_, *base = &base_;
	if (original) {
		memset(&base->hdr, 0, sizeof base->hdr);
		memset(&base->meta, 0, sizeof base->meta);
		base->data = cur->frame, base->len = cur->flen;
		base->frame = cur->frame, base->flen = cur->flen;
		base->depth = cur->depth;
		new_sm(d, base, port, cur->length, itype);
		clear_requests(base);
		base->egress_length = cur->length; /* BMv2 resets it, then parses again */
		base->sm.f_parser_error = parse(d, base);
		base->payload = cur->frame + base->pos;
		base->plen = cur->flen - base->pos;
	} else {
		base->hdr = cur->hdr;
		memset(&base->meta, 0, sizeof base->meta);
		new_sm(d, base, port, cur->length, itype);
		base->payload = cur->payload, base->plen = cur->plen;
		base->frame = cur->frame, base->flen = cur->flen;
		base->depth = cur->depth;
		base->egress_length = cur->egress_length; /* with egress's setValid/setInvalid */
	}
	preserve_fields(&base->meta, &cur->meta, cur->clone_fields);
	base->length = cur->length;
	for (uint32_t i = 0; i < s->n; i++) {
		struct pkt c = *base;
		c.truncate = s->trunc;
		run_egress(d, &c, s->r[i].port, s->r[i].rid, itype);
	}
}

static void run_egress(struct dev *d, struct pkt *p, uint32_t port, uint32_t rid, uint32_t itype)
{
	uint32_t trunc = p->truncate;
	clear_requests(p);
	p->truncate = trunc;
	p->sm.f_egress_port = port;
	p->sm.f_egress_spec = 0;
	p->sm.f_packet_length = p->egress_length;
	p->sm.f_egress_rid = rid;
	p->sm.f_instance_type = itype;
	p->sm.f_egress_global_timestamp = now_us(d);
	p->stop = 0;
	gen_egress(d, p);
	if (p->stop == STOP_ABORT) {
		d->aborts++;
		return;
	}
	if (p->clone_session >= 0 && p->clone_type == 1)
		do_clone(d, p, EGRESS_CLONE, 0);
	if (p->sm.f_egress_spec == DROP_PORT)
		return;
	p->stop = 0;
	gen_compute(d, p);
	if (p->stop == STOP_ABORT) { /* no memory for a checksum over the payload */
		d->aborts++;
		return;
	}
	p->out_len = 0;
	p->stop = 0;
	gen_deparser(d, p);
	if (p->stop == STOP_ABORT) { /* no memory for the headers */
		d->aborts++;
		return;
	}
	const uint8_t *hbuf = d->hdr_buf; /* read before the next deparser runs */
	if (p->recirc_fields >= 0) {
		size_t n = p->out_len + p->plen;
		if (p->truncate && p->truncate < n)
			n = p->truncate;
		uint8_t *f = malloc(n ? n : 1);
		if (!f) { /* no memory for the recirculated frame: dropped, counted */
			d->aborts++;
			return;
		}
		size_t ca = p->out_len < n ? p->out_len : n;
		memcpy(f, hbuf, ca);
		memcpy(f + ca, p->payload, n - ca);
		run_ingress(d, p->sm.f_ingress_port, f, n, RECIRC, &p->meta, p->recirc_fields,
			    p->depth + 1);
		free(f);
		return;
	}
	emit_output(d, port, hbuf, p->out_len, p->payload, p->plen, p->truncate);
}

static void run_ingress(struct dev *d, uint32_t port, const uint8_t *frame, uint32_t len,
			uint32_t itype, const meta_t *preserved, int fields, int depth)
{
	if (depth > MAX_RECIRCULATIONS)
		return;
	struct pkt pk, *p = &pk;
	memset(&p->hdr, 0, sizeof p->hdr);
	memset(&p->meta, 0, sizeof p->meta);
	if (preserved)
		preserve_fields(&p->meta, preserved, fields);
	new_sm(d, p, port, len, itype);
	clear_requests(p);
	p->data = frame, p->len = len;
	p->frame = frame, p->flen = len;
	p->length = len;
	p->egress_length = len;
	p->depth = depth;
	p->sm.f_parser_error = parse(d, p);
	p->payload = frame + p->pos;
	p->plen = len - p->pos;
	p->stop = 0;
	gen_verify(d, p);
	if (p->stop != STOP_ABORT) {
		p->stop = 0;
		gen_ingress(d, p);
	}
	if (p->stop == STOP_ABORT) {
		d->aborts++;
		return;
	}
	if (p->clone_session >= 0 && p->clone_type == 0)
		do_clone(d, p, INGRESS_CLONE, 1);
	if (p->resubmit_fields >= 0) {
		run_ingress(d, port, frame, len, RESUBMIT, &p->meta, p->resubmit_fields, depth + 1);
		return;
	}
	uint32_t grp = p->sm.f_mcast_grp;
	if (grp) {
		struct group *g = &d->mcast[grp & (MAX_GROUPS - 1)];
		if (grp < MAX_GROUPS && g->present) {
			for (uint32_t i = 0; i < g->n; i++) {
				struct pkt c = *p;
				run_egress(d, &c, g->r[i].port, g->r[i].rid, REPLICATION);
			}
		}
		return;
	}
	if (p->sm.f_egress_spec == DROP_PORT)
		return;
	/* unicast enters egress as NORMAL, also after resubmit or recirculation (BMv2) */
	run_egress(d, p, p->sm.f_egress_spec, 0, NORMAL);
}

/* ------------------------------------------------------------------ entry points */
/* The outputs of the frame appended to `out` (records of port, length, bytes; see outbuf.h):
 * the packet I/O passes one buffer per batch and sends from it. */
void p4n_process_into(struct dev *d, uint32_t port, const uint8_t *frame, size_t len,
		      struct p4n_out *out)
{
	d->out = out;
	run_ingress(d, port & 0x1FF, frame, (uint32_t)len, NORMAL, NULL, -1,
		    0); /* len 0 too, as BMv2 */
}

/* The outputs of this frame alone, in the device's own buffer (valid until the next call). */
size_t p4n_process(struct dev *d, uint32_t port, const uint8_t *frame, size_t len, uint8_t **out)
{
	d->own_out.len = 0;
	p4n_process_into(d, port, frame, len, &d->own_out);
	*out = d->own_out.buf;
	return d->own_out.len;
}
