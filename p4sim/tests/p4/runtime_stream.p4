/* The stream side of P4Runtime for the differential (p4sim/conformance/rtdiff.py): every frame
 * a PacketOut brings in (on CPU_PORT) goes back to the controller as a PacketIn saying its
 * ingress port and whether its kind is in the parser value set `kinds` (a ValueSetEntry makes
 * it so) or the table `kinds_seen` has an entry for it (matched 2), and leaves a digest of its
 * tag and kind (sent once a DigestEntry configures it). */
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 64

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> pad;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> matched;
}

header data_t {
    bit<8>  kind;
    bit<32> tag;
}

struct headers_t {
    packet_in_t  packet_in;
    packet_out_t packet_out;
    data_t       data;
}

struct meta_t {
    bit<7> matched;
}

struct learn_t {
    bit<32> tag;
    bit<8>  kind;
}

parser StreamParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                    inout standard_metadata_t std_meta) {
    value_set<bit<8>>(4) kinds;
    state start {
        transition select(std_meta.ingress_port) {
            CPU_PORT: from_cpu;
            default: data;
        }
    }
    state from_cpu {
        pkt.extract(hdr.packet_out);
        transition data;
    }
    state data {
        pkt.extract(hdr.data);
        transition select(hdr.data.kind) {
            kinds: marked;
            default: accept;
        }
    }
    state marked {
        meta.matched = 1;
        transition accept;
    }
}

control StreamVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control StreamIngress(inout headers_t hdr, inout meta_t meta,
                      inout standard_metadata_t std_meta) {
    action seen() {
        meta.matched = 2;
    }
    table kinds_seen {
        key = { hdr.data.kind: exact @name("kind"); }
        actions = { seen; NoAction; }
        default_action = NoAction();
        size = 16;
    }
    apply {
        kinds_seen.apply();
        hdr.packet_out.setInvalid();
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = std_meta.ingress_port;
        hdr.packet_in.matched = meta.matched;
        std_meta.egress_spec = CPU_PORT;
        digest<learn_t>(1, {hdr.data.tag, hdr.data.kind});
    }
}

control StreamEgress(inout headers_t hdr, inout meta_t meta,
                     inout standard_metadata_t std_meta) {
    apply { }
}

control StreamCompute(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control StreamDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.data);
    }
}

V1Switch(StreamParser(), StreamVerify(), StreamIngress(), StreamEgress(), StreamCompute(),
         StreamDeparser()) main;
