/* p4sim's Tofino 2 Native Architecture (T2NA) include: the subset of t2na.p4 p4sim declares,
 * with the published names and signatures (test_tna_include.py checks each against the real
 * files), so that programs written for the Tofino compiler compile unchanged. As the real
 * t2na.p4, it needs __TARGET_TOFINO__ == 2 (`-D__TARGET_TOFINO__=2`). */
#ifndef _TOFINO2_NATIVE_ARCHITECTURE_
#define _TOFINO2_NATIVE_ARCHITECTURE_

#if __TARGET_TOFINO__ == 2
#include "tofino2_specs.p4"
#else
#error Target does not support tofino2 native architecture
#endif
#include "tofino2_arch.p4"

#endif
