// How hash data is serialised (BMv2's BufBuilder): fields packed MSB first across byte
// boundaries, zero bits padded at the end. p4c copies hash() data into temporaries, so a
// field of an invalid header counts with the value it reads as, and only a whole invalid
// header is left out (checksum data, not copied, leaves out fields of invalid headers).
#include <core.p4>
#include <v1model.p4>

header in_t { bit<32> a; bit<16> b; bit<4> c; bit<4> d; bit<8> opt_present; }
header opt_t { bit<8> v; }
header res_t { bit<32> packed; bit<32> odd; bit<32> with_opt; bit<32> with_hdr; bit<16> port_hash; }
struct headers { in_t inp; opt_t opt; res_t res; }
struct metadata { }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.inp);
        transition select(hdr.inp.opt_present) { 1: parse_opt; default: accept; }
    }
    state parse_opt { pkt.extract(hdr.opt); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        // a | b | c d  = 7 bytes
        hash(hdr.res.packed, HashAlgorithm.crc32, (bit<32>) 0,
             { hdr.inp.a, hdr.inp.b, hdr.inp.c, hdr.inp.d }, (bit<64>) 1 << 32);
        // 12 bits: padded with 4 zero bits to 2 bytes
        hash(hdr.res.odd, HashAlgorithm.crc32, (bit<32>) 0,
             { hdr.inp.b[11:0] }, (bit<64>) 1 << 32);
        // the opt header's field counts even when the header is invalid (it reads as 0 here)
        hash(hdr.res.with_opt, HashAlgorithm.crc32, (bit<32>) 0,
             { hdr.inp.a, hdr.opt.v }, (bit<64>) 1 << 32);
        // the whole opt header counts only when it is valid
        hash(hdr.res.with_hdr, HashAlgorithm.crc32, (bit<32>) 0,
             { hdr.inp.a, hdr.opt }, (bit<64>) 1 << 32);
        // base + h % max with a 16-bit result
        hash(hdr.res.port_hash, HashAlgorithm.crc32, 16w100, { hdr.inp.a }, 32w1000);
        sm.egress_spec = 1;
    }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.inp); pkt.emit(hdr.opt); pkt.emit(hdr.res); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
