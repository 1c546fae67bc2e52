/* RegisterAction: per-ingress-port sequence numbers from a Register with an initial value;
 * apply() returns the stored value and stores value + 1, or 0 past a limit (a condition on
 * the value and on metadata); a second RegisterAction on the same register reads only.
 * DirectCounter counts the hits of the port table. The results go out in the frame. */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header result_h {
    bit<16> limit;
    bit<16> seq;
    bit<16> peek;
}

struct headers_t {
    ethernet_h ethernet;
    result_h result;
}

struct metadata_t { }

parser RaIngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                       out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.result);
        transition accept;
    }
}

control RaIngress(inout headers_t hdr, inout metadata_t md,
                  in ingress_intrinsic_metadata_t ig_intr_md,
                  in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                  inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                  inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<16>, PortId_t>(512, 100) seqs;
    DirectCounter<bit<64>>(CounterType_t.PACKETS_AND_BYTES) port_hits;

    RegisterAction<bit<16>, PortId_t, bit<16>>(seqs) next_seq = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
            if (value >= hdr.result.limit) {
                value = 0;
            } else {
                value = value + 1;
            }
        }
    };

    RegisterAction<bit<16>, PortId_t, bit<16>>(seqs) peek_seq = {
        void apply(inout bit<16> value, out bit<16> rv) {
            rv = value;
        }
    };

    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
        port_hits.count();
    }

    table ports {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { forward; }
        counters = port_hits;
        size = 16;
    }

    apply {
        if (hdr.result.limit == 0) {
            hdr.result.peek = peek_seq.execute(ig_intr_md.ingress_port);
        } else {
            hdr.result.seq = next_seq.execute(ig_intr_md.ingress_port);
        }
        ports.apply();
        ig_tm_md.bypass_egress = 1;
    }
}

control RaIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                          in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser RaEgressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                      out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control RaEgress(inout headers_t hdr, inout metadata_t md,
                 in egress_intrinsic_metadata_t eg_intr_md,
                 in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                 inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                 inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control RaEgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                         in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(RaIngressParser(), RaIngress(), RaIngressDeparser(),
         RaEgressParser(), RaEgress(), RaEgressDeparser()) pipe;

Switch(pipe) main;
