// A table key that is a field of an invalid header matches as 0 on BMv2, whatever the
// field holds (bm_sim's MatchKeyBuilder): here the field was written while the header
// was invalid. A slice of such a field, or a key computed from it, p4c copies into a
// temporary first: those read what the field holds. So does a field of a stack element
// (p4c's IsLikeLeftValue counts the constant index as a complex expression); a field of a
// struct in a header is one of the header's fields (p4c flattens it) and matches as 0.
#include <core.p4>
#include <v1model.p4>

header R {
    bit<8> sel; bit<8> exact_hit; bit<8> slice_hit; bit<8> computed_hit; bit<8> elem_hit;
    bit<8> struct_hit;
}
header H { bit<16> f; }
struct S { bit<16> f; }
header G { S s; }

struct Headers { R r; H h; H[2] st; G g; }
struct Meta {}

parser P(packet_in pkt, out Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.r);
        transition select(hdr.r.sel) {
            1: with_h;
            default: accept;
        }
    }
    state with_h {
        pkt.extract(hdr.h);
        transition accept;
    }
}

control Ing(inout Headers hdr, inout Meta m, inout standard_metadata_t sm) {
    action hit_exact(bit<8> v) { hdr.r.exact_hit = v; }
    action hit_slice(bit<8> v) { hdr.r.slice_hit = v; }
    action hit_computed(bit<8> v) { hdr.r.computed_hit = v; }
    action hit_elem(bit<8> v) { hdr.r.elem_hit = v; }
    action hit_struct(bit<8> v) { hdr.r.struct_hit = v; }
    table by_field {
        key = { hdr.h.f: exact; }
        actions = { hit_exact; NoAction; }
        const entries = { 0: hit_exact(0x10); 0x1234: hit_exact(0x11); }
    }
    table by_slice {
        key = { hdr.h.f[7:0]: exact; }
        actions = { hit_slice; NoAction; }
        const entries = { 0: hit_slice(0x20); 0x34: hit_slice(0x21); }
    }
    table by_sum {
        key = { hdr.r.sel ++ hdr.h.f: exact @name("sum"); }
        actions = { hit_computed; NoAction; }
        const entries = { 0x001234: hit_computed(0x31); 0x000000: hit_computed(0x30); }
    }
    table by_elem {
        key = { hdr.st[1].f: exact; }
        actions = { hit_elem; NoAction; }
        const entries = { 0: hit_elem(0x40); 0x1234: hit_elem(0x41); }
    }
    table by_struct {
        key = { hdr.g.s.f: exact; }
        actions = { hit_struct; NoAction; }
        const entries = { 0: hit_struct(0x50); 0x1234: hit_struct(0x51); }
    }
    apply {
        if (!hdr.h.isValid()) {
            hdr.h.f = 0x1234;  // written, the header still invalid
        }
        hdr.st[1].f = 0x1234;  // st and g are never valid
        hdr.g.s.f = 0x1234;
        by_field.apply();
        by_slice.apply();
        by_sum.apply();
        by_elem.apply();
        by_struct.apply();
        sm.egress_spec = 2;
    }
}

control Eg(inout Headers hdr, inout Meta m, inout standard_metadata_t sm) { apply {} }
control Vrfy(inout Headers hdr, inout Meta m) { apply {} }
control Upd(inout Headers hdr, inout Meta m) { apply {} }

control Dep(packet_out pkt, in Headers hdr) {
    apply {
        pkt.emit(hdr);
    }
}

V1Switch(P(), Vrfy(), Ing(), Eg(), Upd(), Dep()) main;
