/* The control-plane objects of a TNA program as p4c-barefoot writes them in P4Info
 * (--p4runtime-force-std-externs): tables (sized, unsized, const entries, a default with
 * arguments, a renamed key, an @id), actions (local, global, directly called, @hidden, an
 * @id), Counter (an @id, which bf-p4c ignores on externs), Meter, Register and a Hash (no
 * entry of its own), in two controls and a sub-control; for Tofino 1 (tna.p4) and 2
 * (t2na.p4). */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t { ethernet_h ethernet; }
struct metadata_t { bit<16> hash; bit<32> value; }

parser ObjIngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                        out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

action set_port(inout ingress_intrinsic_metadata_for_tm_t tm, PortId_t port) {
    tm.ucast_egress_port = port;
}

control Classifier(inout headers_t hdr, inout metadata_t md) {

    action classify(bit<32> value) { md.value = value; }
    action unclassified() { }

    table classes {
        key = { hdr.ethernet.ether_type : ternary @name("type"); }
        actions = { classify; unclassified; }
        default_action = unclassified();
    }

    apply { classes.apply(); }
}

control ObjIngress(inout headers_t hdr, inout metadata_t md,
                   in ingress_intrinsic_metadata_t ig_intr_md,
                   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<64>, PortId_t>(512, CounterType_t.PACKETS_AND_BYTES) rx_bytes;
    Meter<bit<8>>(256, MeterType_t.BYTES) rate;
    Register<bit<32>, bit<10>>(1024, 7) last_value;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) flow_hash;
    Classifier() classifier;

    action forward(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    action drop() { ig_dprsr_md.drop_ctl = 1; }
    @hidden action mark() { hdr.ethernet.src_addr = 1; }
    action metered(PortId_t port) { ig_tm_md.ucast_egress_port = port; }

    table ports {
        key = { ig_intr_md.ingress_port : exact; }
        actions = { forward; drop; set_port(ig_tm_md); }
        default_action = forward(4);
        size = 64;
    }

    table flows {
        key = { hdr.ethernet.dst_addr : exact; md.hash : exact; }
        actions = { metered; @defaultonly NoAction; }
    }

    @id(5) table fixed {
        key = { hdr.ethernet.ether_type : exact; }
        actions = { drop; NoAction; }
        const entries = { 0x88cc : drop(); }
        size = 16;
    }

    apply {
        rx_bytes.count(ig_intr_md.ingress_port);
        md.hash = flow_hash.get({hdr.ethernet.src_addr, hdr.ethernet.dst_addr});
        if (ig_prsr_md.parser_err != 0) {
            drop();
        } else {
            ports.apply();
            flows.apply();
            fixed.apply();
            classifier.apply(hdr, md);
        }
        rate.execute((bit<8>)ig_intr_md.ingress_port);
        mark();
        ig_tm_md.bypass_egress = 1;
    }
}

control ObjIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr.ethernet); }
}

parser ObjEgressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                       out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control ObjEgress(inout headers_t hdr, inout metadata_t md,
                  in egress_intrinsic_metadata_t eg_intr_md,
                  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    @id(7) Counter<bit<32>, PortId_t>(512, CounterType_t.PACKETS) tx_packets;

    @id(0x100) action set_src(bit<48> mac) { hdr.ethernet.src_addr = mac; }

    table egress_macs {
        key = { eg_intr_md.egress_port : exact; }
        actions = { set_src; NoAction; }
        size = 512;
    }

    apply {
        tx_packets.count(eg_intr_md.egress_port);
        egress_macs.apply();
    }
}

control ObjEgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                          in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr.ethernet); }
}

Pipeline(ObjIngressParser(), ObjIngress(), ObjIngressDeparser(),
         ObjEgressParser(), ObjEgress(), ObjEgressDeparser()) pipe;

Switch(pipe) main;
