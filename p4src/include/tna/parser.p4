// TNA parsers. Ingress: the intrinsic metadata and port metadata prefix, then the same
// header graph as the v1model DcParser (include/parser.p4). Egress: the bridged PDCP shim
// and Ethernet, the one header DcEgress rewrites; the rest is payload.
#ifndef DC_TNA_PARSER_P4
#define DC_TNA_PARSER_P4

#include "../headers.p4"

// Egress sees the bridged shim (d_c = 0: none) and Ethernet (MAC rewrite).
struct egress_headers_t {
    pdcp_t            pdcp;
    inner_ethertype_t inner_ethertype;
    ethernet_t        ethernet;
}

struct egress_metadata_t {
}

parser DcIngressParser(packet_in packet,
                       out parsed_headers_t hdr,
                       out local_metadata_t meta,
                       out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        packet.extract(ig_intr_md);
        packet.advance(PORT_METADATA_SIZE);
        transition parse_ethernet;
    }

    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_PDCP: parse_pdcp;
            ETHERTYPE_IPV4: parse_ipv4;
            ETHERTYPE_IPV6: parse_ipv6;
            default: accept;
        }
    }

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

parser DcEgressParser(packet_in packet,
                      out egress_headers_t hdr,
                      out egress_metadata_t meta,
                      out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        packet.extract(eg_intr_md);
        packet.extract(hdr.pdcp);
        packet.extract(hdr.inner_ethertype);
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

#endif // DC_TNA_PARSER_P4
