// Serializable enums convert implicitly to their underlying type (spec 8.12.2): in
// assignments, arithmetic, comparisons, shifts, select labels and action arguments. Two
// values of the same enum type still compare as enum values.
#include <core.p4>
#include <v1model.p4>

enum bit<8> Kind { ping = 5, pong = 7 }
header h_t { bit<8> k; bit<8> sum; bit<16> shifted; bit<8> from_select; bit<8> same; bit<8> arg; }
struct headers { h_t h; }
struct metadata { bit<8> path; }

parser P(packet_in pk, out headers hdr, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.h);
        transition select(hdr.h.k) {
            Kind.ping: is_ping;                  // a label of the enum type
            default: accept;
        }
    }
    state is_ping { m.path = 1; transition accept; }
}

control I(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    action note(bit<8> v) { hdr.h.arg = v; }
    table t {
        key = { hdr.h.k: exact; }
        actions = { note; NoAction; }
        const entries = { Kind.pong : note(Kind.ping); }   // key and argument from the enum
    }
    apply {
        sm.egress_spec = 1;
        Kind k = Kind.pong;
        hdr.h.sum = hdr.h.k + Kind.ping;                   // arithmetic
        hdr.h.shifted = 16w1 << Kind.ping;                 // shift amount
        hdr.h.from_select = m.path;
        if (k == Kind.pong && hdr.h.k == Kind.pong) {      // enum == enum, bit == enum
            hdr.h.same = 1;
        }
        t.apply();
    }
}

control E(inout headers hdr, inout metadata m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata m) { apply { } }
control CC(inout headers hdr, inout metadata m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
