// varbit: IPv4 options extracted with extract(hdr, size), covered by the header checksum,
// emitted back; HeaderTooShort when the options exceed the varbit's maximum width.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> total_len;
    bit<16> identification; bit<3> flags; bit<13> frag_offset;
    bit<8> ttl; bit<8> protocol; bit<16> hdr_checksum;
    bit<32> src; bit<32> dst;
}
header ipv4_options_t { varbit<64> options; }

struct headers_t { ethernet_t eth; ipv4_t ipv4; ipv4_options_t opts; }
struct meta_t {}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.type) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        pkt.extract(hdr.opts, (bit<32>) (((bit<16>) hdr.ipv4.ihl - 5) * 32));
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst, hdr.opts.options },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.parser_error == error.HeaderTooShort) {
            sm.egress_spec = 9;
        } else if (sm.checksum_error == 1) {
            sm.egress_spec = 8;
        } else {
            hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
            sm.egress_spec = 1;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }

control CC(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst, hdr.opts.options },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
