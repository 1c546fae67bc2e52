// Action profiles and selectors (v1model `implementation`): ECMP over groups of next hops,
// picked by a crc16 hash of the flow's addresses, protocol and UDP ports (fields of an
// invalid UDP header are left out of the hash, as BMv2 does), and a plain action profile
// whose members are shared by two tables.
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> type; }
header ipv4_t {
    bit<8> ver_ihl; bit<8> tos; bit<16> len; bit<16> id; bit<16> frag;
    bit<8> ttl; bit<8> proto; bit<16> csum; bit<32> src; bit<32> dst;
}
header udp_t { bit<16> sport; bit<16> dport; bit<16> len; bit<16> csum; }
struct headers_t { ethernet_t eth; ipv4_t ipv4; udp_t udp; }
struct meta_t { bit<16> vrf; bit<8> class; }

parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.eth);
        transition select(hdr.eth.type) { 0x0800: ipv4; default: accept; }
    }
    state ipv4 {
        pk.extract(hdr.ipv4);
        transition select(hdr.ipv4.proto) { 17: udp; default: accept; }
    }
    state udp { pk.extract(hdr.udp); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t m) { apply { } }

control MyIngress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action set_nhop(bit<9> port, bit<48> mac) {
        sm.egress_spec = port;
        hdr.eth.dst = mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    action drop() { mark_to_drop(sm); }
    action set_class(bit<8> c) { m.class = c; }

    @max_group_size(8)
    action_selector(HashAlgorithm.crc16, 32w128, 32w16) ecmp_selector;
    action_profile(32w16) classes;

    table ecmp {
        key = {
            hdr.ipv4.dst: lpm;
            hdr.ipv4.src: selector;
            hdr.ipv4.dst: selector;
            hdr.ipv4.proto: selector;
            hdr.udp.sport: selector;
            hdr.udp.dport: selector;
            m.vrf[7:0]: selector;
        }
        actions = { set_nhop; drop; }
        // BMv2 runs no action on a miss in a table with an implementation (p4c warns
        // that the default action is not supported there): missed packets are not dropped
        default_action = drop();
        implementation = ecmp_selector;
        size = 64;
    }
    table classify_src {
        key = { hdr.ipv4.src: exact; }
        actions = { set_class; }
        implementation = classes;
    }
    table classify_dst {
        key = { hdr.ipv4.dst: exact; }
        actions = { set_class; }
        implementation = classes;
    }
    apply {
        m.vrf = 0x0102;
        if (hdr.ipv4.isValid()) {
            if (!classify_src.apply().hit) {
                classify_dst.apply();
            }
            ecmp.apply();
            hdr.ipv4.tos = m.class;
        }
    }
}

control MyEgress(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t hdr) {
    apply { pk.emit(hdr.eth); pk.emit(hdr.ipv4); pk.emit(hdr.udp); }
}

V1Switch(P(), VC(), MyIngress(), MyEgress(), CC(), D()) main;
