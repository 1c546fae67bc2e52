// Multi-hop route tracing in the style of the tutorials' MRI exercise: a parser loop driven
// by a counter in nested struct metadata, a header stack grown with push_front in egress,
// and a keyless table whose default action the control plane sets (the switch id).
#include <core.p4>
#include <v1model.p4>

#define MAX_HOPS 3

header count_t { bit<8> count; }
header hop_t { bit<8> swid; }

struct headers { count_t cnt; hop_t[MAX_HOPS] hops; }
struct parser_metadata_t { bit<8> remaining; }
struct metadata { parser_metadata_t parser_metadata; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.cnt);
        meta.parser_metadata.remaining = hdr.cnt.count;
        transition select(meta.parser_metadata.remaining) {
            0 : accept;
            default : parse_hop;
        }
    }
    state parse_hop {
        packet.extract(hdr.hops.next);
        meta.parser_metadata.remaining = meta.parser_metadata.remaining - 1;
        transition select(meta.parser_metadata.remaining) {
            0 : accept;
            default : parse_hop;
        }
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.parser_error != error.NoError) {
            mark_to_drop(standard_metadata);
        } else {
            standard_metadata.egress_spec = 1;
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    action add_hop(bit<8> swid) {
        hdr.cnt.count = hdr.cnt.count + 1;
        hdr.hops.push_front(1);
        hdr.hops[0].setValid();
        hdr.hops[0].swid = swid;
    }
    table hop { actions = { add_hop; NoAction; } default_action = NoAction(); }
    apply {
        if (hdr.cnt.count < MAX_HOPS) {
            hop.apply();
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.cnt); packet.emit(hdr.hops); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
