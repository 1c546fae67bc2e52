/* SPDX-License-Identifier: Apache-2.0
 *
 * The control plane's C API (called through ctypes by p4sim/native/device.py, under the
 * device lock): allocation, table records and buckets, registers, counters, meters, PRE,
 * digests. Sizes come from the program model; nothing grows past them.
 *
 * A function that allocates returns 0, or -1 when memory ran out (p4n_new: NULL); a call
 * that fails leaves the device as it was (what it allocated is freed), so the caller can
 * undo its own side and say what could not be allocated.
 */

struct dev *p4n_new(uint32_t ntables, uint32_t nregs, uint32_t nctrs, uint32_t nmtrs)
{
	struct dev *d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->tables = calloc(ntables + 1, sizeof *d->tables);
	d->regs = calloc(nregs + 1, sizeof *d->regs);
	d->ctrs = calloc(nctrs + 1, sizeof *d->ctrs);
	d->mtrs = calloc(nmtrs + 1, sizeof *d->mtrs);
	d->mcast = calloc(MAX_GROUPS, sizeof *d->mcast);
	d->sessions = calloc(MAX_GROUPS, sizeof *d->sessions);
	d->digests = calloc(DIGEST_RING, sizeof *d->digests);
	d->hdr_cap = 256;
	d->hdr_buf = malloc(d->hdr_cap);
	if (!d->tables || !d->regs || !d->ctrs || !d->mtrs || !d->mcast || !d->sessions ||
	    !d->digests || !d->hdr_buf) {
		free(d->tables), free(d->regs), free(d->ctrs), free(d->mtrs), free(d->mcast);
		free(d->sessions), free(d->digests), free(d->hdr_buf);
		free(d);
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->start = now_s();
	return d;
}

void p4n_lock(struct dev *d) { pthread_mutex_lock(&d->lock); }
void p4n_unlock(struct dev *d) { pthread_mutex_unlock(&d->lock); }
uint64_t p4n_aborts(struct dev *d) { return d->aborts; }

/* The records' and buckets' arrays of table `t`; -1 (the table left empty) without memory. */
int p4n_table_init(struct dev *d, uint32_t t, uint32_t nwords, uint32_t nexact,
		   const uint16_t *exact_words, uint32_t nargs, uint32_t capacity, int32_t lpm_word)
{
	struct table *tb = &d->tables[t];
	uint32_t nargs_stored = nargs ? nargs : 1;
	uint32_t nbuckets = 16;
	while (nbuckets < 2 * capacity)
		nbuckets <<= 1;
	uint16_t *ew = calloc(nexact + 1, sizeof *ew);
	struct bucket **heads = calloc(nbuckets, sizeof *heads);
	struct rec *recs = calloc(capacity, sizeof *recs);
	uint64_t *default_args = calloc(nargs_stored, 8);
	uint32_t with_args = 0;
	if (recs)
		while (with_args < capacity && (recs[with_args].args = calloc(nargs_stored, 8)))
			with_args++;
	if (!ew || !heads || !recs || !default_args || with_args < capacity) {
		for (uint32_t i = 0; i < with_args; i++)
			free(recs[i].args);
		free(ew), free(heads), free(recs), free(default_args);
		return -1;
	}
	memcpy(ew, exact_words, nexact * sizeof *ew);
	tb->lpm_word = lpm_word;
	tb->nwords = nwords, tb->nexact = nexact, tb->nargs = nargs_stored;
	tb->size = capacity;
	tb->exact_words = ew;
	tb->nbuckets = nbuckets;
	tb->heads = heads;
	tb->recs = recs;
	tb->default_args = default_args;
	tb->default_action = -1;
	return 0;
}

/* Set the match checks and action of record `slot` (its counters and meter stay). */
int p4n_table_set_rec(struct dev *d, uint32_t t, int32_t slot, int32_t action, uint32_t nchecks,
		      const uint16_t *words, const uint8_t *is_range, const uint64_t *a,
		      const uint64_t *b, const uint64_t *args)
{
	struct table *tb = &d->tables[t];
	struct rec *r = &tb->recs[slot];
	struct check *checks = calloc(nchecks + 1, sizeof *checks);
	if (!checks)
		return -1;
	free(r->checks);
	r->checks = checks;
	for (uint32_t i = 0; i < nchecks; i++) {
		r->checks[i].word = words[i];
		r->checks[i].is_range = is_range[i];
		r->checks[i].a = a[i];
		r->checks[i].b = b[i];
	}
	r->nchecks = (uint16_t)nchecks;
	r->action = action;
	memcpy(r->args, args, tb->nargs * 8);
	return 0;
}

void p4n_table_reset_rec(struct dev *d, uint32_t t, int32_t slot)
{
	struct rec *r = &d->tables[t].recs[slot];
	r->packets = r->bytes = 0;
	memset(&r->meter, 0, sizeof r->meter);
}

static void free_bucket(struct bucket *b)
{
	for (uint32_t l = 0; l < b->nlevels; l++)
		free(b->levels[l].slots), free(b->levels[l].vals);
	free(b->levels);
	free(b->slots);
	free(b);
}

static int popcount_desc(const void *a, const void *b)
{
	int x = __builtin_popcountll(((const struct lpm_level *)a)->mask);
	int y = __builtin_popcountll(((const struct lpm_level *)b)->mask);
	return y - x;
}

/* The per-prefix-length index of a routing table's bucket; the first record (bucket order)
 * of each (mask, value) wins, as in the scan. -1 without memory (free_bucket frees what
 * was built). */
static int build_levels(struct table *tb, struct bucket *b)
{
	uint32_t *count = calloc(b->n + 1, sizeof *count);
	uint64_t *masks = calloc(b->n + 1, sizeof *masks);
	if (!count || !masks) {
		free(count), free(masks);
		return -1;
	}
	uint32_t nl = 0;
	for (uint32_t i = 0; i < b->n; i++) {
		const struct rec *r = &tb->recs[b->slots[i]];
		uint64_t m = r->nchecks ? r->checks[0].b : 0;
		uint32_t l = 0;
		while (l < nl && masks[l] != m)
			l++;
		if (l == nl)
			masks[nl++] = m;
		count[l]++;
	}
	b->levels = calloc(nl + 1, sizeof *b->levels);
	if (!b->levels) {
		free(count), free(masks);
		return -1;
	}
	b->nlevels = nl;
	for (uint32_t l = 0; l < nl; l++) {
		struct lpm_level *lv = &b->levels[l];
		lv->mask = masks[l];
		lv->cap = 4;
		while (lv->cap < 2 * count[l])
			lv->cap <<= 1;
		lv->slots = malloc(lv->cap * sizeof *lv->slots);
		lv->vals = calloc(lv->cap, sizeof *lv->vals);
		if (!lv->slots || !lv->vals) {
			free(count), free(masks);
			return -1;
		}
		memset(lv->slots, 0xff, lv->cap * sizeof *lv->slots);
	}
	for (uint32_t i = 0; i < b->n; i++) {
		const struct rec *r = &tb->recs[b->slots[i]];
		uint64_t m = r->nchecks ? r->checks[0].b : 0, v = r->nchecks ? r->checks[0].a : 0;
		uint32_t l = 0;
		while (masks[l] != m)
			l++;
		struct lpm_level *lv = &b->levels[l];
		uint32_t h = hash_words(&v, 1) & (lv->cap - 1);
		while (lv->slots[h] >= 0 && lv->vals[h] != v)
			h = (h + 1) & (lv->cap - 1);
		if (lv->slots[h] < 0)
			lv->slots[h] = b->slots[i], lv->vals[h] = v;
	}
	qsort(b->levels, nl, sizeof *b->levels, popcount_desc);
	free(count);
	free(masks);
	return 0;
}

/* A bucket of the n records `slots` whose exact words are `exact`; NULL without memory. */
static struct bucket *new_bucket(struct table *tb, const uint64_t *exact, uint32_t n,
				 const int32_t *slots)
{
	struct bucket *b = calloc(1, sizeof *b + tb->nexact * 8);
	if (!b)
		return NULL;
	memcpy(b->key, exact, tb->nexact * 8);
	b->slots = malloc(n * sizeof *b->slots);
	if (!b->slots) {
		free(b);
		return NULL;
	}
	memcpy(b->slots, slots, n * sizeof *slots);
	b->n = n;
	if (tb->lpm_word >= 0 && build_levels(tb, b) < 0) {
		free_bucket(b);
		return NULL;
	}
	return b;
}

/* Replace the bucket of records whose exact words are `exact` (n = 0 removes it); without
 * memory for the new one, the old one stays. */
int p4n_table_set_bucket(struct dev *d, uint32_t t, const uint64_t *exact, uint32_t n,
			 const int32_t *slots)
{
	struct table *tb = &d->tables[t];
	struct bucket *b = NULL;
	if (n && !(b = new_bucket(tb, exact, n, slots)))
		return -1;
	struct bucket **ref = bucket_ref(tb, exact);
	struct bucket *old = *ref;
	if (old) {
		*ref = old->next;
		free_bucket(old);
	}
	if (!b)
		return 0;
	ref = bucket_ref(tb, exact);
	b->next = *ref;
	*ref = b;
	return 0;
}

/* Set group `g` of table `t` (an action selector's group, members in handle order). */
int p4n_table_set_group(struct dev *d, uint32_t t, uint32_t g, uint32_t n, const int32_t *actions,
			const uint64_t *args)
{
	struct table *tb = &d->tables[t];
	if (g >= tb->ngroups) {
		uint32_t grown = g + 1 > 2 * tb->ngroups ? g + 1 : 2 * tb->ngroups;
		struct sel_group *groups = realloc(tb->groups, grown * sizeof *groups);
		if (!groups)
			return -1;
		memset(groups + tb->ngroups, 0, (grown - tb->ngroups) * sizeof *groups);
		tb->groups = groups;
		tb->ngroups = grown;
	}
	int32_t *new_actions = calloc(n + 1, sizeof *new_actions);
	uint64_t *new_args = calloc((size_t)(n + 1) * tb->nargs, 8);
	if (!new_actions || !new_args) {
		free(new_actions), free(new_args);
		return -1;
	}
	memcpy(new_actions, actions, n * sizeof *actions);
	memcpy(new_args, args, (size_t)n * tb->nargs * 8);
	struct sel_group *sg = &tb->groups[g];
	free(sg->actions), free(sg->args);
	sg->actions = new_actions;
	sg->args = new_args;
	sg->n = n;
	return 0;
}

void p4n_table_set_default(struct dev *d, uint32_t t, int32_t action, const uint64_t *args)
{
	struct table *tb = &d->tables[t];
	tb->default_action = action;
	memcpy(tb->default_args, args, tb->nargs * 8);
}

void p4n_table_counter(struct dev *d, uint32_t t, int32_t slot, uint64_t *pk, uint64_t *by, int set)
{
	struct rec *r = &d->tables[t].recs[slot];
	if (set) {
		r->packets = *pk, r->bytes = *by;
	} else {
		*pk = r->packets, *by = r->bytes;
	}
}

void p4n_table_meter(struct dev *d, uint32_t t, int32_t slot, int on, double cir, double cb,
		     double pir, double pb)
{
	meter_config(&d->tables[t].recs[slot].meter, on, cir, cb, pir, pb);
}

int p4n_reg_init(struct dev *d, uint32_t i, uint32_t size, uint32_t width)
{
	uint64_t *cells = calloc(size + 1, 8);
	if (!cells)
		return -1;
	d->regs[i].size = size;
	d->regs[i].mask = MASK(width);
	d->regs[i].v = cells;
	return 0;
}

uint64_t *p4n_reg_cells(struct dev *d, uint32_t i) { return d->regs[i].v; }

int p4n_ctr_init(struct dev *d, uint32_t i, uint32_t size)
{
	uint64_t *packets = calloc(size + 1, 8), *bytes = calloc(size + 1, 8);
	if (!packets || !bytes) {
		free(packets), free(bytes);
		return -1;
	}
	d->ctrs[i].size = size;
	d->ctrs[i].packets = packets;
	d->ctrs[i].bytes = bytes;
	return 0;
}

uint64_t *p4n_ctr_cells(struct dev *d, uint32_t i, int bytes)
{
	return bytes ? d->ctrs[i].bytes : d->ctrs[i].packets;
}

int p4n_mtr_init(struct dev *d, uint32_t i, uint32_t size)
{
	struct meter_cell *cells = calloc(size + 1, sizeof *cells);
	if (!cells)
		return -1;
	d->mtrs[i].size = size;
	d->mtrs[i].cells = cells;
	return 0;
}

void p4n_mtr_config(struct dev *d, uint32_t i, uint32_t idx, int on, double cir, double cb,
		    double pir, double pb)
{
	if (idx < d->mtrs[i].size)
		meter_config(&d->mtrs[i].cells[idx], on, cir, cb, pir, pb);
}

/* kind 0: multicast group, 1: clone session. n replicas; present 0 deletes. 0, -1 without
 * memory (the group stays as it was), or -2 for an id the tables cannot hold (the control
 * plane admits none: p4sim.model.MAX_MCAST_GROUP). */
int p4n_set_group(struct dev *d, int kind, uint32_t id, int present, uint32_t n,
		  const uint32_t *ports, const uint32_t *rids, uint32_t trunc)
{
	if (id >= MAX_GROUPS)
		return -2;
	struct group *g = kind ? &d->sessions[id] : &d->mcast[id];
	struct replica *replicas = NULL;
	if (present && !(replicas = calloc(n + 1, sizeof *replicas)))
		return -1;
	free(g->r);
	memset(g, 0, sizeof *g);
	if (!present)
		return 0;
	g->present = 1;
	g->n = n;
	g->trunc = trunc;
	g->r = replicas;
	for (uint32_t i = 0; i < n; i++)
		g->r[i].port = ports[i], g->r[i].rid = rids[i];
	return 0;
}

uint32_t p4n_digests(struct dev *d, struct digest_rec **out)
{
	*out = d->digests;
	return d->ndigests;
}

void p4n_digests_clear(struct dev *d) { d->ndigests = 0; }

uint32_t p4n_digest_rec_size(void) { return sizeof(struct digest_rec); }

/* The pipeline alone, for the benchmark: nanoseconds per frame over `n` runs of one frame
 * (the outputs are built as for the data path, then discarded). */
double p4n_bench_process(struct dev *d, uint32_t port, const uint8_t *frame, size_t len, uint32_t n)
{
	uint8_t *out;
	double t0 = now_s();
	for (uint32_t i = 0; i < n; i++)
		p4n_process(d, port, frame, len, &out);
	return (now_s() - t0) * 1e9 / (n ? n : 1);
}

void p4n_free(struct dev *d, uint32_t ntables, uint32_t nregs, uint32_t nctrs, uint32_t nmtrs)
{
	for (uint32_t t = 0; t < ntables; t++) {
		struct table *tb = &d->tables[t];
		for (uint32_t b = 0; b < tb->nbuckets; b++)
			for (struct bucket *x = tb->heads[b], *next; x; x = next) {
				next = x->next;
				free_bucket(x);
			}
		for (uint32_t i = 0; i < tb->size; i++) {
			free(tb->recs[i].checks);
			free(tb->recs[i].args);
		}
		for (uint32_t g = 0; g < tb->ngroups; g++)
			free(tb->groups[g].actions), free(tb->groups[g].args);
		free(tb->groups);
		free(tb->heads), free(tb->recs), free(tb->default_args),
			free((void *)tb->exact_words);
	}
	for (uint32_t i = 0; i < nregs; i++)
		free(d->regs[i].v);
	for (uint32_t i = 0; i < nctrs; i++)
		free(d->ctrs[i].packets), free(d->ctrs[i].bytes);
	for (uint32_t i = 0; i < nmtrs; i++)
		free(d->mtrs[i].cells);
	for (uint32_t i = 0; i < MAX_GROUPS; i++)
		free(d->mcast[i].r), free(d->sessions[i].r);
	free(d->tables), free(d->regs), free(d->ctrs), free(d->mtrs), free(d->mcast);
	free(d->sessions), free(d->digests), free(d->own_out.buf), free(d->scratch);
	free(d->hdr_buf);
	pthread_mutex_destroy(&d->lock);
	free(d);
}
