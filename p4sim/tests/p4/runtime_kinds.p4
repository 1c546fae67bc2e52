/* Match kinds and direct resources for the P4Runtime differential (p4sim/conformance/rtdiff.py):
 * a writable table with range, optional and ternary keys and a direct counter (p4c's samples
 * have range and optional keys in const tables only), an lpm table with a direct meter, and
 * actions that clone and multicast, so that clone sessions and multicast groups matter. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t ethernet;
}

struct meta_t {
    bit<32> color;
}

parser KindsParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                   inout standard_metadata_t std_meta) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control KindsVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control KindsIngress(inout headers_t hdr, inout meta_t meta,
                     inout standard_metadata_t std_meta) {
    direct_counter(CounterType.packets_and_bytes) classify_counter;
    direct_meter<bit<32>>(MeterType.bytes) src_meter;

    action forward(bit<9> port) {
        std_meta.egress_spec = port;
    }
    action drop() {
        mark_to_drop(std_meta);
    }
    action clone_to(bit<32> session) {
        clone(CloneType.I2E, session);
    }
    action multicast(bit<16> group) {
        std_meta.mcast_grp = group;
    }
    action police() {
        src_meter.read(meta.color);
    }

    table classify {
        key = {
            hdr.ethernet.ether_type: range @name("ether_type");
            std_meta.ingress_port: optional @name("in_port");
            hdr.ethernet.dst_addr: ternary @name("dst_mac");
        }
        actions = { forward; drop; clone_to; multicast; NoAction; }
        counters = classify_counter;
        size = 64;
        default_action = NoAction();
    }
    table sources {
        key = { hdr.ethernet.src_addr: lpm @name("src_mac"); }
        actions = { police; NoAction; }
        meters = src_meter;
        size = 16;
        default_action = NoAction();
    }

    apply {
        classify.apply();
        sources.apply();
    }
}

control KindsEgress(inout headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std_meta) {
    apply { }
}

control KindsCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control KindsDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
    }
}

V1Switch(KindsParser(), KindsVerify(), KindsIngress(), KindsEgress(), KindsCompute(),
         KindsDeparser()) main;
