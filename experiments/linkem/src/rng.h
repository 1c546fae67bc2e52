/* SPDX-License-Identifier: Apache-2.0
 * Reproducible random numbers: xoshiro256** seeded by splitmix64, and the delay
 * distributions netem offers, each normalised to mean 0 and standard deviation 1 so
 * that a sample is `mean + sd * z` whatever the shape. */
#ifndef LINKEM_RNG_H
#define LINKEM_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

void rng_seed(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
double rng_uniform(struct rng *r); /* [0, 1) with 53 random bits */
int rng_bernoulli(struct rng *r, double p);

/* Standardised samples (mean 0, sd 1). */
double rng_normal(struct rng *r);
double rng_uniform_std(struct rng *r);	    /* uniform on [-sqrt(3), sqrt(3)] */
double rng_pareto_std(struct rng *r);	    /* Pareto, shape 3 (as netem's table) */
double rng_paretonormal_std(struct rng *r); /* 1/4 normal + 3/4 Pareto, rescaled */

#endif /* LINKEM_RNG_H */
