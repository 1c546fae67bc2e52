// An entry's key written as a list expression, {a} or {a, b}, is the key tuple itself, as
// p4c reads it (ListExpression::buildOrReturn; p4c's action-two-params): {8w1} is the
// one key 1 of table one, {8w1, 8w0x17} the two keys of table two. A mask or a range
// cannot stand inside the braces (p4c: a syntax error), only in (a, b &&& m).
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; bit<8> r; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) { state start { pk.extract(hdr.h); transition accept; } }
control VC(inout H hdr, inout M m) { apply {} }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
  action set(bit<8> v) { hdr.h.r = v; }
  table one {
    key = { hdr.h.a : exact; }
    actions = { set; NoAction; }
    const entries = { {8w1} : set(10); (8w2) : set(20); 3 : set(30); }
    default_action = NoAction();
  }
  table two {
    key = { hdr.h.a : exact; hdr.h.b : ternary; }
    actions = { set; NoAction; }
    const entries = { {8w1, 8w0x17} : set(11); (8w2, _) : set(22); }
    default_action = NoAction();
  }
  apply { sm.egress_spec = 1; if (hdr.h.b == 0) { one.apply(); } else { two.apply(); } }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply {} }
control CC(inout H hdr, inout M m) { apply {} }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
