/* Meter colours (MeterColor_t: GREEN 0, YELLOW 1, RED 3), Random, and a Counter with
 * adjust_byte_count, written into the frame. */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header result_h {
    bit<8>  color;
    bit<8>  pad;
    bit<16> random;
}

struct headers_t {
    ethernet_h ethernet;
    result_h result;
}

struct metadata_t { }

parser MeterIngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                          out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.result);
        transition accept;
    }
}

control MeterIngress(inout headers_t hdr, inout metadata_t md,
                     in ingress_intrinsic_metadata_t ig_intr_md,
                     in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                     inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                     inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Meter<bit<9>>(512, MeterType_t.PACKETS) port_meter;
    Random<bit<16>>() rng;
    Counter<bit<64>, bit<9>>(512, CounterType_t.BYTES) port_bytes;

    apply {
        hdr.result.color = port_meter.execute(ig_intr_md.ingress_port);
        hdr.result.random = rng.get();
        port_bytes.count(ig_intr_md.ingress_port, 4);  // + the FCS the frame lost
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
        ig_tm_md.bypass_egress = 1;
    }
}

control MeterIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                             in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser MeterEgressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                         out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control MeterEgress(inout headers_t hdr, inout metadata_t md,
                    in egress_intrinsic_metadata_t eg_intr_md,
                    in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                    inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                    inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control MeterEgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                            in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(MeterIngressParser(), MeterIngress(), MeterIngressDeparser(),
         MeterEgressParser(), MeterEgress(), MeterEgressDeparser()) pipe;

Switch(pipe) main;
