/* Counter: indexed by the ingress port (PACKETS), by a header field and only when the probe
 * asks for it (PACKETS_AND_BYTES), and in egress by the egress port; DirectCounter: one cell
 * per entry of its table, counting the entry's hits (a miss has no entry, so nothing counts
 * it, whatever the default action calls). The STF checks packet
 * counts; it leaves byte counts alone: the TNA files do not say which length a Tofino
 * counter adds (adjust_byte_count exists to correct it), so there is nothing to check them
 * against. */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

header probe_h {
    bit<8> cls;
    bit<8> count_it;
}

struct headers_t { probe_h probe; }
struct metadata_t { }

parser CtrIngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                        out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control CtrIngress(inout headers_t hdr, inout metadata_t md,
                   in ingress_intrinsic_metadata_t ig_intr_md,
                   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<32>, PortId_t>(512, CounterType_t.PACKETS) rx_by_port;
    Counter<bit<64>, bit<8>>(256, CounterType_t.PACKETS_AND_BYTES) by_class;
    DirectCounter<bit<32>>(CounterType_t.PACKETS) class_hits;

    action hit() { class_hits.count(); }

    table classes {
        key = { hdr.probe.cls : exact; }
        actions = { hit; @defaultonly NoAction; }
        const default_action = NoAction();
        counters = class_hits;
        size = 16;
    }

    apply {
        rx_by_port.count(ig_intr_md.ingress_port);
        if (hdr.probe.count_it == 1) {
            by_class.count(hdr.probe.cls);
        }
        classes.apply();
        ig_tm_md.ucast_egress_port = 4;
    }
}

control CtrIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser CtrEgressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                       out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control CtrEgress(inout headers_t hdr, inout metadata_t md,
                  in egress_intrinsic_metadata_t eg_intr_md,
                  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    Counter<bit<32>, PortId_t>(512, CounterType_t.PACKETS) tx_by_port;

    apply { tx_by_port.count(eg_intr_md.egress_port); }
}

control CtrEgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                          in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(CtrIngressParser(), CtrIngress(), CtrIngressDeparser(),
         CtrEgressParser(), CtrEgress(), CtrEgressDeparser()) pipe;

Switch(pipe) main;
