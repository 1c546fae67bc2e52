// A parser's or control's `apply` with an argument left out takes the parameter's
// default value (P4_16 "Optional parameters and default values"), both when the
// sub-block is instantiated and when it is invoked by its type directly; a struct
// parameter's default may be a list of constants.
#include <core.p4>
#include <v1model.p4>

header H { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; }
struct Pair { bit<8> hi; bit<8> lo; }

struct Headers { H h; }
struct Meta {}

parser Shift(out bit<8> x, in bit<8> y = 0x40) {
    state start {
        x = y >> 2;
        transition accept;
    }
}

control Add(inout bit<8> x, in bit<8> y = 7) {
    apply { x = x + y; }
}

control Mix(inout bit<8> x, in Pair p = { 0xf0, 0x0f }) {  // a struct default
    apply { x = (x & p.hi) | p.lo; }
}

parser P(packet_in pkt, out Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    Shift() shift;
    state start {
        pkt.extract(hdr.h);
        shift.apply(hdr.h.a);           // y = 0x40: a = 0x10
        Shift.apply(hdr.h.b, hdr.h.b);  // y given: b = b >> 2
        transition accept;
    }
}

control Ing(inout Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    Add() add;
    apply {
        add.apply(hdr.h.c);             // c + 7
        Add.apply(hdr.h.d, 1);          // d + 1
        Mix.apply(hdr.h.e);             // (e & 0xf0) | 0x0f
        sm.egress_spec = 2;
    }
}

control Eg(inout Headers hdr, inout Meta m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout Headers hdr, inout Meta m) { apply {} }
control Upd(inout Headers hdr, inout Meta m) { apply {} }

control Dep(packet_out pkt, in Headers hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(P(), Vrfy(), Ing(), Eg(), Upd(), Dep()) main;
