/* Hash with a custom CRCPolynomial: CRC-16/CCITT-FALSE (0x1021, not reflected, init 0xFFFF,
 * no final xor) and CRC-32C (0x1EDC6F41 reflected, init and xor 0xFFFFFFFF) over the 9-byte
 * message of a probe header; the packet leaves on port 1 with both results. */
#include <core.p4>
#if __TARGET_TOFINO__ == 2
#include <t2na.p4>
#else
#include <tna.p4>
#endif

header probe_h {
    bit<72> msg;
    bit<16> ccitt;
    bit<32> crc32c;
}

struct headers_t { probe_h probe; }
struct metadata_t { }

parser CustomIngressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                         out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.probe);
        transition accept;
    }
}

control CustomIngress(inout headers_t hdr, inout metadata_t md,
                    in ingress_intrinsic_metadata_t ig_intr_md,
                    in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                    inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                    inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    CRCPolynomial<bit<16>>(16w0x1021, false, false, false, 16w0xFFFF, 16w0x0000) ccitt_poly;
    CRCPolynomial<bit<32>>(32w0x1EDC6F41, true, false, false, 32w0xFFFFFFFF, 32w0xFFFFFFFF)
        crc32c_poly;
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, ccitt_poly) ccitt;
    Hash<bit<32>>(HashAlgorithm_t.CUSTOM, crc32c_poly) crc32c;

    action hash_ccitt() { hdr.probe.ccitt = ccitt.get({hdr.probe.msg}); }
    action hash_crc32c() { hdr.probe.crc32c = crc32c.get({hdr.probe.msg}); }

    apply {
        hash_ccitt();
        hash_crc32c();
        ig_tm_md.ucast_egress_port = 1;
        ig_tm_md.bypass_egress = 1;
    }
}

control CustomIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}

parser CustomEgressParser(packet_in pkt, out headers_t hdr, out metadata_t md,
                        out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control CustomEgress(inout headers_t hdr, inout metadata_t md,
                   in egress_intrinsic_metadata_t eg_intr_md,
                   in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                   inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                   inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control CustomEgressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t md,
                           in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(CustomIngressParser(), CustomIngress(), CustomIngressDeparser(),
         CustomEgressParser(), CustomEgress(), CustomEgressDeparser()) pipe;

Switch(pipe) main;
