// v1model externs: hash (crc16, crc32, csum16, xor16, identity; base + h % max; max 0),
// register read/write, indirect counter, random with lo == hi, log_msg.
#include <core.p4>
#include <v1model.p4>

header in_t {
    bit<72> data;   // the CRC check string "123456789"
}

header res_t {
    bit<16> crc16;
    bit<32> crc32;
    bit<16> csum16;
    bit<16> xor16;
    bit<64> ident;
    bit<8>  crc16_mod;   // 5 + crc16 % 100
    bit<8>  max_zero;    // 7 + crc16 % 0 -> 7 (BMv2 treats max 0 as 1)
    bit<8>  max_wide;    // 9 + crc16 % 2^64 -> 9 (BMv2 keeps max's low 64 bits: 0, as 1)
    bit<8>  seen;        // per-device packet count from a register
    bit<8>  rnd;
    bit<32> slot3;       // register element 3 (written by the control plane)
}

struct headers_t {
    in_t  inp;
    res_t res;
}

struct meta_t {}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.inp); transition accept; }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply {} }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<8>>(4) seen;
    register<bit<32>>(8) slots;
    counter(4, CounterType.packets_and_bytes) per_port;

    apply {
        hdr.res.setValid();
        hash(hdr.res.crc16, HashAlgorithm.crc16, 16w0, { hdr.inp.data }, 32w65536);
        hash(hdr.res.crc32, HashAlgorithm.crc32, 32w0, { hdr.inp.data }, 64w4294967296);
        hash(hdr.res.csum16, HashAlgorithm.csum16, 16w0, { hdr.inp.data }, 32w65536);
        hash(hdr.res.xor16, HashAlgorithm.xor16, 16w0, { hdr.inp.data }, 32w65536);
        hash(hdr.res.ident, HashAlgorithm.identity, 64w0, { hdr.inp.data }, 64w0xffffffffffffffff);
        hash(hdr.res.crc16_mod, HashAlgorithm.crc16, 8w5, { hdr.inp.data }, 16w100);
        hash(hdr.res.max_zero, HashAlgorithm.crc16, 8w7, { hdr.inp.data }, 16w0);
        hash(hdr.res.max_wide, HashAlgorithm.crc16, 8w9, { hdr.inp.data }, 128w0x10000000000000000);

        bit<8> n;
        seen.read(n, 0);
        n = n + 1;
        seen.write(0, n);
        hdr.res.seen = n;

        random(hdr.res.rnd, 8w5, 8w5);
        slots.read(hdr.res.slot3, 3);
        per_port.count((bit<32>) sm.ingress_port);
        log_msg("packet {} on port {}", { n, sm.ingress_port });
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.inp); pkt.emit(hdr.res); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
