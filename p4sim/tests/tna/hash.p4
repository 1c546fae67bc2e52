/* Hash outputs on the catalogue's check input "123456789" (9 bytes after Ethernet): the
 * predefined CRC16 and CRC32 and two CRCPolynomial ones, CRC-16/CCITT-FALSE (0x1021, init
 * 0xFFFF) and CRC-32C (0x1EDC6F41 reflected, init and xor 0xFFFFFFFF). Results follow the
 * input in the frame. */
#include <core.p4>
#include <tna.p4>

header ethernet_h {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

header check_h {
    bit<72> input;
}

header result_h {
    bit<16> crc16;
    bit<32> crc32;
    bit<16> ccitt;
    bit<32> crc32c;
}

struct headers_t {
    ethernet_h ethernet;
    check_h check;
    result_h result;
}

struct metadata_t { }

parser HashIngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                         out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        pkt.extract(hdr.check);
        pkt.extract(hdr.result);
        transition accept;
    }
}

control HashIngress(inout headers_t hdr, inout metadata_t md,
                    in ingress_intrinsic_metadata_t ig_intr_md,
                    in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                    inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    CRCPolynomial<bit<16>>(16w0x1021, false, false, false, 16w0xFFFF, 16w0x0000) ccitt_poly;
    CRCPolynomial<bit<32>>(32w0x1EDC6F41, true, false, false, 32w0xFFFFFFFF, 32w0xFFFFFFFF) c_poly;
    Hash<bit<16>>(HashAlgorithm_t.CRC16) crc16;
    Hash<bit<32>>(HashAlgorithm_t.CRC32) crc32;
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, ccitt_poly) ccitt;
    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, c_poly) crc32c;

    apply {
        // one hash result per table on Tofino: each under its own condition
        if (hdr.result.crc16 == 0) {
            hdr.result.crc16 = crc16.get({hdr.check.input});
        }
        if (hdr.result.crc32 == 0) {
            hdr.result.crc32 = crc32.get({hdr.check.input});
        }
        if (hdr.result.ccitt == 0) {
            hdr.result.ccitt = ccitt.get({hdr.check.input});
        }
        if (hdr.result.crc32c == 0) {
            hdr.result.crc32c = crc32c.get({hdr.check.input});
        }
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
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
