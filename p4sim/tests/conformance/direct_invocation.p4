// Direct type invocation (P4_16 spec, "Direct type invocation"): `T.apply(...)` on a parser
// or control type applies a fresh instance of T named by the type, so a table of control
// Fwd applied from ingress I is `I.Fwd.t`, as p4c names it. And a parser state without a
// transition statement transitions to reject (spec, "Parser states").
#include <core.p4>
#include <v1model.p4>

header a_t { bit<8> kind; }
header b_t { bit<8> v; }
header res_t { bit<8> err; bit<8> tag; }
struct headers_t { a_t a; b_t b; res_t res; }
struct meta_t { bit<8> tag; }

parser Inner(packet_in pkt, out b_t b) {
    state start {
        pkt.extract(b);
        transition select(b.v) {
            0xff: stop;
            default: accept;
        }
    }
    state stop {
        b.v = 0xfe;  // no transition: reject, the caller stops too
    }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        Inner.apply(pkt, hdr.b);
        meta.tag = 1;
        transition accept;
    }
}

control Tag(inout meta_t meta) {
    apply { meta.tag = meta.tag + 0x10; }
}

control Fwd(in a_t a, inout meta_t meta, inout standard_metadata_t sm) {
    action to(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = { a.kind: exact; }
        actions = { to; NoAction; }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 3;
        t.apply();
        Tag.apply(meta);
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply {} }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        Fwd.apply(hdr.a, meta, sm);
        Tag.apply(meta);
        hdr.res.setValid();
        hdr.res.err = sm.parser_error == error.NoError ? 8w0 : 8w1;
        hdr.res.tag = meta.tag;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
