// PDCP splitter for Dual Connectivity research (v1model; BMv2 simple_switch_grpc and p4sim).
// Numbers each downlink packet of a DC user with a PDCP SN and sends it to leg A or leg B by
// batch counters, or to both (duplication); single-connectivity users and uplink traffic are
// forwarded unchanged. Frame format and port convention: DESIGN.md sections 3 and 4.
// Build: p4c-bm2-ss --p4runtime-files dc_splitter.p4info.txtpb -o dc_splitter.json dc_splitter.p4
//        (add -D PDCP_SN_12 for 12-bit SNs).
#include <core.p4>
#include <v1model.p4>

#include "include/defines.p4"
#include "include/headers.p4"
#include "include/parser.p4"
#include "include/checksums.p4"
#include "include/ingress.p4"
#include "include/egress.p4"
#include "include/deparser.p4"

V1Switch(DcParser(),
         DcVerifyChecksum(),
         DcIngress(),
         DcEgress(),
         DcComputeChecksum(),
         DcDeparser()) main;
