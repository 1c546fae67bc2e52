// Evaluation order and copy semantics that p4c's STF samples caught p4sim out on:
// copy-out on `exit`, an action writing the variable it also gets as inout, the calls of
// an assignment in order with the rest evaluated after them (p4c's order), an inout
// argument outside a stack, a register declared at the top level, extract<H>(_),
// `const int` locals, p4c's @priority on entries and a mask on a serializable-enum key.
// The expected frame was checked on BMv2 (python -m p4sim.conformance).
#include <core.p4>
#include <v1model.p4>

enum bit<16> E { A = 0x1111, B = 0x2222 }

header skip_t { bit<16> s; }
header h_t { bit<8> idx; bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; bit<16> t; }
header w_t { bit<8> x; }
struct headers { h_t h; w_t[2] w; }
struct metadata { E e; }

register<bit<8>>(4) shared;

bit<8> bump(inout bit<8> v) { v = v + 1; return 5; }
bit<8> post(inout bit<8> v) { bit<8> old = v; v = v + 1; return old; }
bit<8> same(in bit<8> v) { return v; }

parser P(packet_in pk, out headers hdr, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pk.extract<skip_t>(_);
        pk.extract(hdr.h);
        pk.extract(hdr.w.next);
        pk.extract(hdr.w.next);
        transition accept;
    }
}

control I(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    action set_c(bit<8> v) { hdr.h.c = v; }
    action set_f(bit<8> v) { hdr.h.f = v; }
    action alias(inout headers hv) { hdr.h.b = 9; }
    action set_a_exit(inout bit<8> v) { v = 7; exit; }
    action touch(inout bit<8> v) { }
    table pri {
        key = { hdr.h.t : ternary; }
        actions = { set_c; }
        const entries = {
            0x0011 &&& 0x00ff : set_c(1) @priority(3);
            0x1111            : set_c(2);
            0x1111 &&& 0xf0ff : set_c(3) @priority(1);
        }
    }
    table en {
        key = { m.e : ternary; }
        actions = { set_f; }
        const entries = {
            E.B &&& 0xff00 : set_f(1);
            E.A &&& 0xff00 : set_f(2);
        }
    }
    apply {
        sm.egress_spec = 1;
        shared.write(0, hdr.h.a);
        hdr.w[hdr.h.idx].x = bump(hdr.h.idx);
        hdr.w[post(hdr.h.idx) & 1].x |= 0x80;
        hdr.w[same(hdr.h.idx) & 1].x = bump(hdr.h.idx);
        touch(hdr.w[hdr.h.e].x);  // index 2 of w_t[2]: the packet goes on
        pri.apply();
        m.e = (E)hdr.h.t;
        en.apply();
        alias(hdr);
        set_a_exit(hdr.h.a);
        hdr.h.b = 0xee;
    }
}

control Eg(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    apply {
        const int three = 3;
        bit<8> tmp;
        shared.read(tmp, 0);
        hdr.h.e = tmp + three;
    }
}

control VC(inout headers hdr, inout metadata m) { apply { } }
control CC(inout headers hdr, inout metadata m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); pk.emit(hdr.w); } }

V1Switch(P(), VC(), I(), Eg(), CC(), D()) main;
