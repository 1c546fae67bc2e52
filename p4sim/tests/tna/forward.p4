/* The smallest useful TNA program: forward by ingress port, count, drop on parser error. */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t { ethernet_h ethernet; }
struct metadata_t { }

parser FwdIngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                        out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control FwdIngress(inout headers_t hdr, inout metadata_t md,
                   in ingress_intrinsic_metadata_t ig_intr_md,
                   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<64>, PortId_t>(512, CounterType_t.PACKETS_AND_BYTES) rx_counter;

    action forward(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    action drop() { ig_dprsr_md.drop_ctl = 1; }

    table ports {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { forward; drop; }
        default_action = drop();
        size = 512;
    }

    apply {
        rx_counter.count(ig_intr_md.ingress_port);
        if (ig_prsr_md.parser_err != 0) {
            drop();
        } else {
            ports.apply();
        }
        ig_tm_md.bypass_egress = 1;
    }
}

control FwdIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr.ethernet); }
}

parser FwdEgressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                       out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control FwdEgress(inout headers_t hdr, inout metadata_t md,
                  in egress_intrinsic_metadata_t eg_intr_md,
                  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control FwdEgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                          in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(FwdIngressParser(), FwdIngress(), FwdIngressDeparser(),
         FwdEgressParser(), FwdEgress(), FwdEgressDeparser()) pipe;

Switch(pipe) main;
