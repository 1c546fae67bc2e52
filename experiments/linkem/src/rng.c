/* SPDX-License-Identifier: Apache-2.0 */
#include "rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double rng_uniform(struct rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

int rng_bernoulli(struct rng *r, double p)
{
	if (p <= 0)
		return 0;
	if (p >= 1)
		return 1;
	return rng_uniform(r) < p;
}

/* Marsaglia's polar method; the second value of each pair is dropped so that one call
 * consumes a predictable amount of the stream regardless of history. */
double rng_normal(struct rng *r)
{
	double u, v, s;

	do {
		u = 2.0 * rng_uniform(r) - 1.0;
		v = 2.0 * rng_uniform(r) - 1.0;
		s = u * u + v * v;
	} while (s >= 1.0 || s == 0.0);
	return u * sqrt(-2.0 * log(s) / s);
}

double rng_uniform_std(struct rng *r) { return (2.0 * rng_uniform(r) - 1.0) * sqrt(3.0); }

/* Pareto with x_m = 1 and shape a = 3: mean a/(a-1) = 1.5, variance a/((a-1)^2 (a-2)) = 3/4. */
double rng_pareto_std(struct rng *r)
{
	double x = pow(1.0 - rng_uniform(r), -1.0 / 3.0);

	return (x - 1.5) / sqrt(0.75);
}

/* netem's "paretonormal" table mixes a normal and a Pareto variate 1:3; the mix has
 * variance 1/16 + 9/16, rescaled here to 1. */
double rng_paretonormal_std(struct rng *r)
{
	double z = 0.25 * rng_normal(r) + 0.75 * rng_pareto_std(r);

	return z / sqrt(0.625);
}
