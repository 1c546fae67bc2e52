/* The TNA device of p4sim, block by block: traffic manager (unicast, multicast with
 * egress_rid, drop_ctl, no port = drop, bypass_egress), Hash CRC16/CRC32, min/max, Checksum
 * verified in the ingress parser and updated in the ingress deparser, egress drop_ctl. */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

// op selects what ingress does with the packet; arg is its port or multicast group.
header data_h {
    bit<8>  op;
    bit<8>  csum_ok;
    bit<16> arg;
    bit<16> csum;
    bit<16> crc16;
    bit<32> crc32;
    bit<16> rid;
    bit<16> small;
    bit<16> large;
}

struct headers_t {
    ethernet_h ethernet;
    data_h data;
}

struct metadata_t {
    bool csum_ok;
}

parser DevIngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                        out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() data_csum;

    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.data);
        data_csum.add({hdr.data.op, hdr.data.csum_ok, hdr.data.arg, hdr.data.csum});
        md.csum_ok = data_csum.verify();
        transition accept;
    }
}

control DevIngress(inout headers_t hdr, inout metadata_t md,
                   in ingress_intrinsic_metadata_t ig_intr_md,
                   in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                   inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Hash<bit<16>>(HashAlgorithm_t.CRC16) crc16;
    Hash<bit<32>>(HashAlgorithm_t.CRC32) crc32;

    apply {
        hdr.data.crc16 = crc16.get({hdr.data.op, hdr.data.arg});
        if (hdr.data.op != 0) {  // a second table: one hash result per action on Tofino
            hdr.data.crc32 = crc32.get({hdr.data.op, hdr.data.arg});
        }
        hdr.data.small = min(hdr.data.arg, 16w100);
        hdr.data.large = max(hdr.data.arg, 16w100);
        if (md.csum_ok) {
            hdr.data.csum_ok = 1;
        }
        if (hdr.data.op == 1) {
            ig_tm_md.ucast_egress_port = hdr.data.arg[8:0];
        } else if (hdr.data.op == 2) {
            ig_tm_md.mcast_grp_a = hdr.data.arg;
        } else if (hdr.data.op == 3) {
            ig_tm_md.ucast_egress_port = hdr.data.arg[8:0];
            ig_dprsr_md.drop_ctl = 1;
        } else if (hdr.data.op == 5) {
            ig_tm_md.ucast_egress_port = hdr.data.arg[8:0];
            ig_tm_md.bypass_egress = 1;
        }
        // op 4: no port, no group: the traffic manager drops it
    }
}

control DevIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                           in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() data_csum;

    apply {
        hdr.data.csum = data_csum.update({hdr.data.op, hdr.data.csum_ok, hdr.data.arg});
        pkt.emit(hdr);
    }
}

parser DevEgressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                       out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.data);
        transition accept;
    }
}

control DevEgress(inout headers_t hdr, inout metadata_t md,
                  in egress_intrinsic_metadata_t eg_intr_md,
                  in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                  inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                  inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        hdr.data.rid = eg_intr_md.egress_rid;
        if (eg_intr_md.egress_port == 7) {
            eg_dprsr_md.drop_ctl = 1;
        }
    }
}

control DevEgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                          in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(DevIngressParser(), DevIngress(), DevIngressDeparser(),
         DevEgressParser(), DevEgress(), DevEgressDeparser()) pipe;

Switch(pipe) main;
