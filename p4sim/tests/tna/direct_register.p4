/* DirectRegister: each entry of the port table keeps its own cell (initial value 10), which
 * a DirectRegisterAction in the entry's action returns and increments; a miss has no cell. */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header result_h {
    bit<32> seen;
}

struct headers_t {
    ethernet_h ethernet;
    result_h result;
}

struct metadata_t { }

parser DrIngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                       out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.result);
        transition accept;
    }
}

control DrIngress(inout headers_t hdr, inout metadata_t md,
                  in ingress_intrinsic_metadata_t ig_intr_md,
                  in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                  inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                  inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    DirectRegister<bit<32>>(10) seen;

    DirectRegisterAction<bit<32>, bit<32>>(seen) count_seen = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = value + 1;
        }
    };

    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        hdr.result.seen = count_seen.execute();
    }

    action back() {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }

    table ports {
        key = { hdr.ethernet.dst_addr : exact; }
        actions = { forward; @defaultonly back; }
        default_action = back();
        registers = seen;
        size = 16;
    }

    apply {
        ports.apply();
        ig_tm_md.bypass_egress = 1;
    }
}

control DrIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                          in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser DrEgressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                      out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control DrEgress(inout headers_t hdr, inout metadata_t md,
                 in egress_intrinsic_metadata_t eg_intr_md,
                 in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                 inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                 inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control DrEgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                         in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(DrIngressParser(), DrIngress(), DrIngressDeparser(),
         DrEgressParser(), DrEgress(), DrEgressDeparser()) pipe;

Switch(pipe) main;
