// The parser. Parses Ethernet, the PDCP shim (frames already on a DC leg), IPv4,
// IPv6, UDP and TCP. Anything else is accepted after the last header it recognises and is
// handled by the port table; a frame too short for a header it announces ends with a parser
// error and is dropped by the ingress (documented rule, README "Forwarding rules").
#ifndef DC_PARSER_P4
#define DC_PARSER_P4

#include "headers.p4"

parser DcParser(packet_in packet,
                out parsed_headers_t hdr,
                inout local_metadata_t meta,
                inout standard_metadata_t std_meta) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
#ifdef DC_ADAPTIVE
            ETHERTYPE_PDCP: parse_pdcp_pdu;
#else
            ETHERTYPE_PDCP: parse_pdcp;
#endif // DC_ADAPTIVE
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

#ifdef DC_ADAPTIVE
    // The D/C bit tells a data PDU from a control PDU (a leg's feedback report).
    state parse_pdcp_pdu {
        transition select(packet.lookahead<bit<4>>()) {
            (PDCP_CONTROL_PDU ++ PDCP_PDU_DC_FEEDBACK): parse_feedback;
            default: parse_pdcp;
        }
    }

    state parse_feedback {
        packet.extract(hdr.feedback);
        transition accept;
    }
#endif // DC_ADAPTIVE

    state parse_pdcp {
        packet.extract(hdr.pdcp);
        packet.extract(hdr.inner_ethertype);
        transition select(hdr.inner_ethertype.ether_type) {
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        // L4 only for option-less first fragments: options stay in the payload untouched.
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (5, 0, IP_PROTO_UDP): parse_udp;
            (5, 0, IP_PROTO_TCP): parse_tcp;
            default: accept;
        }
    }

    state parse_ipv6 {
        packet.extract(hdr.ipv6);
        transition select(hdr.ipv6.next_hdr) {
            IP_PROTO_UDP: parse_udp;
            IP_PROTO_TCP: parse_tcp;
            default: accept;
        }
    }

    state parse_udp {
        packet.extract(hdr.udp);
        transition accept;
    }

    state parse_tcp {
        packet.extract(hdr.tcp);
        transition accept;
    }
}

#endif // DC_PARSER_P4
