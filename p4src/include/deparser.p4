// The deparser: emits the headers in wire order. Only valid headers are emitted, so a DC
// frame gets Ethernet | PDCP | inner ethertype | L3 | L4 and every other frame what it had.
#ifndef DC_DEPARSER_P4
#define DC_DEPARSER_P4

#include "headers.p4"

control DcDeparser(packet_out packet, in parsed_headers_t hdr) {
    apply {
#ifdef DC_ADAPTIVE
        packet.emit(hdr.packet_in);
#endif // DC_ADAPTIVE
        packet.emit(hdr.ethernet);
#ifdef DC_ADAPTIVE
        packet.emit(hdr.feedback);
#endif // DC_ADAPTIVE
        packet.emit(hdr.pdcp);
        packet.emit(hdr.inner_ethertype);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.ipv6);
        packet.emit(hdr.udp);
        packet.emit(hdr.tcp);
    }
}

#endif // DC_DEPARSER_P4
