/* p4sim's Tofino Native Architecture (TNA) include: the subset of tna.p4 p4sim declares,
 * with the published names and signatures (test_tna_include.py checks each against the real
 * files), so that programs written for the Tofino compiler compile unchanged. */
#ifndef _TOFINO1_NATIVE_ARCHITECTURE_
#define _TOFINO1_NATIVE_ARCHITECTURE_

#include "tofino1_specs.p4"
#include "tofino1_arch.p4"

#endif
