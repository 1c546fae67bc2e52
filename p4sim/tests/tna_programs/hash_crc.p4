/* Hash: the predefined CRCs of HashAlgorithm_t (the Tofino tools' crc_8, crc_16 and crc_32:
 * CRC-8 poly 0x07, CRC-16/ARC poly 0x8005 reflected, CRC-32 as Ethernet's) over the 9-byte
 * message of a probe header; the packet leaves on port 1 with the three results. One action
 * per hash: a Tofino action takes at most 32 bits from the hash units. */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

header probe_h {
    bit<72> msg;
    bit<8> crc8;
    bit<16> crc16;
    bit<32> crc32;
}

struct headers_t { probe_h probe; }
struct metadata_t { }

parser HashIngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                         out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control HashIngress(inout headers_t hdr, inout metadata_t md,
                    in ingress_intrinsic_metadata_t ig_intr_md,
                    in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                    inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Hash<bit<8>>(HashAlgorithm_t.CRC8) crc8;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) crc16;
    Hash<bit<32>>(HashAlgorithm_t.CRC32) crc32;

    action hash8() { hdr.probe.crc8 = crc8.get({hdr.probe.msg}); }
    action hash16() { hdr.probe.crc16 = crc16.get({hdr.probe.msg}); }
    action hash32() { hdr.probe.crc32 = crc32.get({hdr.probe.msg}); }

    apply {
        hash8();
        hash16();
        hash32();
        ig_tm_md.ucast_egress_port = 1;
        ig_tm_md.bypass_egress = 1;
    }
}

control HashIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser HashEgressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                        out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control HashEgress(inout headers_t hdr, inout metadata_t md,
                   in egress_intrinsic_metadata_t eg_intr_md,
                   in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                   inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                   inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control HashEgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(HashIngressParser(), HashIngress(), HashIngressDeparser(),
         HashEgressParser(), HashEgress(), HashEgressDeparser()) pipe;

Switch(pipe) main;
