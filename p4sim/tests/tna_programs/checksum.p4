/* Checksum as TNA uses it for IPv4: verify() in the ingress parser (the header's checksum
 * must make the one's-complement sum 0xFFFF), update() in the ingress deparser over the
 * header without its checksum field (RFC 1071). A packet with a good checksum leaves on
 * port 1 with its TTL decremented and the checksum recomputed; a bad one is dropped. */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header ipv4_h {
    bit<4> version;
    bit<4> ihl;
    bit<8> diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3> flags;
    bit<13> frag_offset;
    bit<8> ttl;
    bit<8> protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

struct headers_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
}

struct metadata_t { bool checksum_ok; }

parser CsumIngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                         out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ipv4_checksum;

    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        ipv4_checksum.add(hdr.ipv4);
        md.checksum_ok = ipv4_checksum.verify();  // true: the checksum is valid
        transition accept;
    }
}

control CsumIngress(inout headers_t hdr, inout metadata_t md,
                    in ingress_intrinsic_metadata_t ig_intr_md,
                    in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                    inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (hdr.ipv4.isValid() && !md.checksum_ok) {
            ig_dprsr_md.drop_ctl = 1;
        } else if (hdr.ipv4.isValid()) {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
            ig_tm_md.ucast_egress_port = 1;
        }
        ig_tm_md.bypass_egress = 1;
    }
}

control CsumIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_checksum;

    apply {
        hdr.ipv4.hdr_checksum = ipv4_checksum.update({
            hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
            hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
            hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        pkt.emit(hdr);
    }
}

parser CsumEgressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                        out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control CsumEgress(inout headers_t hdr, inout metadata_t md,
                   in egress_intrinsic_metadata_t eg_intr_md,
                   in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                   inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                   inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control CsumEgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(CsumIngressParser(), CsumIngress(), CsumIngressDeparser(),
         CsumEgressParser(), CsumEgress(), CsumEgressDeparser()) pipe;

Switch(pipe) main;
