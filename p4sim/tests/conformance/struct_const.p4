#include <core.p4>
#include <v1model.p4>

// Constants of struct, header and tuple types (spec 10.1): a struct constant compared with
// a struct, its fields as select labels, table entries and action arguments, a nested struct
// constant, a header constant assigned (valid) and a local constant in a control.
struct PortId_t { bit<9> v; }
struct Pair_t { PortId_t port; bit<8> tag; }
header h_t { bit<8> a; bit<8> b; }
header out_t { bit<8> r0; bit<8> r1; bit<8> r2; bit<8> r3; bit<9> p; bit<7> pad; }

const PortId_t CPU_PORT = {9w192};
const PortId_t PORT_3 = { v = 3 };
const Pair_t PAIR = { port = PORT_3, tag = 0x5a };
const h_t PATTERN = { 8w0xca, 8w0xfe };
const tuple<bit<8>, bit<16>> T = { 1, 2 };

struct headers_t { h_t h; out_t o; h_t k; }
struct meta_t { PortId_t foo; Pair_t pair; }

parser P(packet_in pk, out headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        transition select(hdr.h.a) {
            PAIR.tag: tagged;
            PATTERN.a: pat;
            default: accept;
        }
    }
    state tagged { m.pair = PAIR; transition accept; }
    state pat { m.foo = CPU_PORT; transition accept; }
}

control I(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) {
    action set_port(bit<9> p) { sm.egress_spec = p; }
    table t {
        key = { hdr.h.b : exact; }
        actions = { set_port; NoAction; }
        const entries = {
            PAIR.tag : set_port(PORT_3.v);
            PATTERN.b : set_port(CPU_PORT.v - 190);
        }
        default_action = set_port(1);
    }
    apply {
        const PortId_t LOCAL = { v = 7 };
        hdr.o.setValid();
        hdr.o.r0 = (m.foo == CPU_PORT) ? 8w1 : 8w0;
        hdr.o.r1 = (m.pair == PAIR) ? 8w1 : 8w0;
        hdr.o.r2 = T[0] + (bit<8>)T[1] + PAIR.port.v[7:0];
        hdr.o.p = LOCAL.v + PAIR.port.v;
        hdr.o.pad = 0;
        if (hdr.h.a == 0xca) {
            hdr.k = PATTERN;
        }
        hdr.o.r3 = hdr.k.isValid() ? hdr.k.b : 8w0xee;
        t.apply();
    }
}

control E(inout headers_t hdr, inout meta_t m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers_t hdr, inout meta_t m) { apply { } }
control CC(inout headers_t hdr, inout meta_t m) { apply { } }
control D(packet_out pk, in headers_t hdr) {
    apply { pk.emit(hdr.o); pk.emit(hdr.h); pk.emit(hdr.k); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
