// What P4Info lists of code after an `exit` (p4c writes P4Info after its front end):
// in a body without a `return` such code stays, so its table and its directly called
// actions are listed (ingress); in a body with a `return`, p4c's RemoveReturns drops what
// follows an `exit` too, so they are not (egress).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }

action set_one(inout h_t v) { v.a = 1; }
action set_two(inout h_t v) { v.a = 2; }

control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action local_after_exit() { hdr.h.a = 3; }
    action by_table() { hdr.h.a = 4; }
    table kept_after_exit { key = { hdr.h.a : exact; } actions = { by_table; } }
    apply {
        if (hdr.h.a == 7) { exit; set_one(hdr.h); }
        exit;
        local_after_exit();
        kept_after_exit.apply();
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action dropped_after_exit() { hdr.h.a = 5; }
    table dropped_table { key = { hdr.h.a : exact; } actions = { NoAction; } }
    apply {
        if (hdr.h.a == 8) { return; }
        exit;
        set_two(hdr.h);
        dropped_after_exit();
        dropped_table.apply();
    }
}
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
