// TNA deparsers: headers in wire order (as include/deparser.p4); only valid ones are emitted.
// Ingress puts the bridged PDCP shim in front of the frame; egress emits it behind Ethernet.
#ifndef DC_TNA_DEPARSER_P4
#define DC_TNA_DEPARSER_P4

#include "parser.p4"

control DcIngressDeparser(packet_out packet,
                          inout parsed_headers_t hdr,
                          in local_metadata_t meta,
                          in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        packet.emit(hdr.shim_pdcp);         // bridged to egress (include/headers.p4)
        packet.emit(hdr.shim_ethertype);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.pdcp);
        packet.emit(hdr.inner_ethertype);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.ipv6);
        packet.emit(hdr.udp);
        packet.emit(hdr.tcp);
    }
}

control DcEgressDeparser(packet_out packet,
                         inout egress_headers_t hdr,
                         in egress_metadata_t meta,
                         in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.pdcp);
        packet.emit(hdr.inner_ethertype);
    }
}

#endif // DC_TNA_DEPARSER_P4
