// for loops (P4_16 1.2.5: init/update lists, break, continue) and compound assignment.
// Frame: op (1 byte), n (1 byte), r (4 bytes, result), s (1 byte, second result).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> op; bit<8> n; bit<32> r; bit<8> s; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pk, out headers hdr, inout metadata m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}

control I(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    action triangle() {                         // r = 1 + 2 + ... + n
        hdr.h.r = 0;
        for (bit<8> i = 1; i <= hdr.h.n; i = i + 1) {
            hdr.h.r = hdr.h.r + (bit<32>)i;
        }
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.op == 1) {
            triangle();
        } else if (hdr.h.op == 2) {             // two variables, two updates: r = n * n
            hdr.h.r = 0;
            for (bit<8> i = 0, bit<8> j = hdr.h.n; i < j; i = i + 1, hdr.h.s = hdr.h.s + 1) {
                for (bit<8> k = 0; k < j; k = k + 1) {
                    hdr.h.r = hdr.h.r + 1;
                }
            }
        } else if (hdr.h.op == 3) {             // break at 5, continue on odd: r = 0+2+4
            hdr.h.r = 0;
            for (bit<8> i = 0; i < hdr.h.n; i = i + 1) {
                if (i == 5) { break; }
                if (i[0:0] == 1) { continue; }
                hdr.h.r = hdr.h.r + (bit<32>)i;
            }
        } else if (hdr.h.op == 4) {             // no init, a true condition: ends by break
            bit<8> i = 0;
            for (; true; i = i + 1) {
                if (i == hdr.h.n) { break; }
            }
            hdr.h.s = i;
        } else if (hdr.h.op == 5) {             // never ends: the packet is dropped
            for (bit<8> i = 0; i < 10; ) { hdr.h.r = hdr.h.r + 1; }
        } else if (hdr.h.op == 6) {             // compound assignments, wrapping as `a = a op b`
            hdr.h.r = 0x10;
            hdr.h.r += 0x20;                    // 0x30
            hdr.h.r -= 0x40;                    // 0xfffffff0
            hdr.h.r *= 2;                       // 0xffffffe0
            hdr.h.r >>= 4;                      // 0x0ffffffe
            hdr.h.r <<= 8;                      // 0xfffffe00
            hdr.h.r &= 0x00ffff00;              // 0x00fffe00
            hdr.h.r |= 0x0000000f;              // 0x00fffe0f
            hdr.h.r ^= 0x00000101;              // 0x00ffff0e
            hdr.h.s = 250;
            hdr.h.s |+|= 10;                    // saturates at 255
            hdr.h.s |-|= 5;                     // 250
            hdr.h.s /= 4;                       // 62
            hdr.h.s %= 8;                       // 6
        }
    }
}

control E(inout headers hdr, inout metadata m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata m) { apply { } }
control CC(inout headers hdr, inout metadata m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
