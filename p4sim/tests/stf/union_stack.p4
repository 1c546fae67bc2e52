// A stack of header unions (P4_16 spec, "Header unions" and "Header stacks"): members
// extracted through `next` (nextIndex moves on per element), through a constant index,
// validity per member, push_front moving whole unions, emitted element by
// element with only the valid member.
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> kind; bit<8> op; }
header b_t { bit<8> v; }
header w_t { bit<16> v; }
header_union u_t { b_t b; w_t w; }
struct headers { tag_t tag; u_t[3] u; }
struct metadata { }

parser P(packet_in pk, out headers hdr, inout metadata m, inout standard_metadata_t sm) {
    state start {
        pk.extract(hdr.tag);
        transition select(hdr.tag.kind) {
            1: bw;
            2: wb;
            default: accept;
        }
    }
    state bw { pk.extract(hdr.u.next.b); pk.extract(hdr.u.next.w); transition accept; }
    state wb { pk.extract(hdr.u[0].w); pk.extract(hdr.u[1].b); transition accept; }
}

control I(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.u[1].w.isValid()) { hdr.u[1].w.v = hdr.u[1].w.v + 1; }
        if (hdr.u[0].b.isValid()) { hdr.u[0].b.v = 0xb0; }
        if (hdr.tag.op == 1) {
            hdr.u.push_front(1);      // u[0] invalid, the rest one up
            hdr.u[0].b.setValid();
            hdr.u[0].b.v = 0x99;
        } else if (hdr.tag.op == 2) {
            hdr.u.pop_front(1);
        }
    }
}

control E(inout headers hdr, inout metadata m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata m) { apply { } }
control CC(inout headers hdr, inout metadata m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.tag); pk.emit(hdr.u); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
