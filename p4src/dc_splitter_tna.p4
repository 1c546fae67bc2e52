// PDCP splitter for Dual Connectivity research on Tofino (TNA; T2NA with --target tofino2).
// Same behaviour and the same tables, actions, registers and counters as dc_splitter.p4
// (v1model): p4src/README.md. Only the architecture glue differs (include/tna/).
// Build: p4c --target tofino --arch tna --p4runtime-files dc_splitter_tna.p4info.txtpb
//            dc_splitter_tna.p4          (add -D PDCP_SN_12 for 12-bit SNs;
//        --target tofino2 --arch t2na for Tofino 2).
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

#ifdef DC_ADAPTIVE
#error "DC_ADAPTIVE (leg feedback and credit) is supported on v1model only: p4src/README.md"
#endif

#define DC_TNA 1  // include/headers.p4: the bridged PDCP shim
#include "include/defines.p4"
#include "include/headers.p4"
#include "include/tna/parser.p4"
#include "include/tna/ingress.p4"
#include "include/tna/egress.p4"
#include "include/tna/deparser.p4"

Pipeline(DcIngressParser(),
         DcIngress(),
         DcIngressDeparser(),
         DcEgressParser(),
         DcEgress(),
         DcEgressDeparser()) pipe;

Switch(pipe) main;
