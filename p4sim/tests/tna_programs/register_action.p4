/* RegisterAction: apply(inout value, out rv) runs per packet on one register cell as a
 * single read-modify-write (tofino1_base.p4), with conditions on the cell and on packet
 * fields, and returns rv to execute()'s caller:
 *   op 1 "cycle": returns the cell, then counts it up 0, 1, 2, 3, 0, ...
 *   op 2 "max":   keeps the larger of the cell and the probe's operand, returns the new cell
 *   op 3 "read":  returns the cell unchanged
 * Register(size, initial_value): cells start at 0 in `cycles`, at 5 in `maxima`. */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

header probe_h {
    bit<8> op;
    bit<8> index;
    bit<32> operand;
    bit<32> result;
}

struct headers_t { probe_h probe; }
struct metadata_t { }

parser RegIngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                        out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control RegIngress(inout headers_t hdr, inout metadata_t md,
                   in ingress_intrinsic_metadata_t ig_intr_md,
                   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<8>>(256, 0) cycles;
    Register<bit<32>, bit<8>>(256, 5) maxima;

    RegisterAction<bit<32>, bit<8>, bit<32>>(cycles) cycle = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            if (value >= 3) {
                value = 0;
            } else {
                value = value + 1;
            }
        }
    };

    RegisterAction<bit<32>, bit<8>, bit<32>>(maxima) keep_max = {
        void apply(inout bit<32> value, out bit<32> rv) {
            if (hdr.probe.operand > value) {
                value = hdr.probe.operand;
            }
            rv = value;
        }
    };

    RegisterAction<bit<32>, bit<8>, bit<32>>(cycles) read_cycle = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
        }
    };

    apply {
        if (hdr.probe.op == 1) {
            hdr.probe.result = cycle.execute(hdr.probe.index);
        } else if (hdr.probe.op == 2) {
            hdr.probe.result = keep_max.execute(hdr.probe.index);
        } else if (hdr.probe.op == 3) {
            hdr.probe.result = read_cycle.execute(hdr.probe.index);
        }
        ig_tm_md.ucast_egress_port = 1;
        ig_tm_md.bypass_egress = 1;
    }
}

control RegIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser RegEgressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                       out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control RegEgress(inout headers_t hdr, inout metadata_t md,
                  in egress_intrinsic_metadata_t eg_intr_md,
                  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control RegEgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                          in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(RegIngressParser(), RegIngress(), RegIngressDeparser(),
         RegEgressParser(), RegEgress(), RegEgressDeparser()) pipe;

Switch(pipe) main;
