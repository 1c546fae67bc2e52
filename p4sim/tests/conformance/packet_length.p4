// standard_metadata.packet_length in egress as simple_switch gives it: BMv2 keeps the length
// in a packet register that egress reads; p4c writes setValid() as add_header and
// setInvalid() as remove_header, which add and take off the header's bytes when its
// validity changes (targets/simple_switch/primitives.cpp). Header assignments, stack
// shifts, the members a union's setValid() invalidates and truncate() leave it; a setValid()
// in the parser counts, and so does `h = {...}` (p4c writes it as h.setValid() and field
// assignments); resubmit and I2E clones start again from the received length,
// multicast copies keep ingress's, E2E clones egress's, a recirculated packet its
// deparsed length. Ingress reads the received length throughout. Also pinned: egress sees
// instance_type 0 after a resubmit or recirculation (ingress_thread sets NORMAL before
// it enqueues). Found by the program differential (progdiff): p4sim gave the received length.
#include <core.p4>
#include <v1model.p4>

header op_t { bit<8> kind; }
header a_t { bit<16> x; }
header b_t { bit<32> y; }
header e_t { bit<8> v; }
header res_t { bit<16> ilen; bit<16> elen; bit<8> iitype; bit<8> eitype; }
header_union u_t { a_t a; b_t b; }

struct headers_t { res_t res; op_t op; a_t a; b_t b; a_t c; u_t u; e_t[2] st; }
struct meta_t {
    bit<16> ilen;
    bit<8> iitype;
    @field_list(1) bit<8> rpass;
    @field_list(2) bit<8> cpass;
}

parser prs(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.op);
        pkt.extract(hdr.a);
        transition select(hdr.op.kind) {
            17: in_parser;
            default: accept;
        }
    }
    state in_parser {
        hdr.b.setValid();
        transition accept;
    }
}

control vck(inout headers_t hdr, inout meta_t meta) { apply {} }

control ing(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.instance_type == 4) {  // recirculated: on a port of its own, as BMv2 may
            sm.egress_spec = 4;       // send it after later packets
        }
        meta.iitype = (bit<8>)sm.instance_type;
        bit<8> k = hdr.op.kind;
        if (k == 1) { hdr.b.setValid(); }
        else if (k == 2) { hdr.a.setInvalid(); }
        else if (k == 3) { hdr.b.setValid(); hdr.b.setValid(); }
        else if (k == 4) { hdr.a.setInvalid(); hdr.a.setInvalid(); }
        else if (k == 5) { hdr.c = hdr.a; }
        else if (k == 6) { hdr.u.b.setValid(); hdr.u.a.setValid(); }
        else if (k == 7) { hdr.st[0].setValid(); hdr.st.push_front(1); }
        else if (k == 8) { hdr.st[0].setValid(); hdr.st.pop_front(1); }
        else if (k == 9) { hdr.b.setValid(); hdr.b.setInvalid(); }
        else if (k == 10) { hdr.a = {7}; }
        else if (k == 11) { hdr.b.setValid(); truncate(4); }
        else if (k == 12) {
            hdr.b.setValid();
            if (meta.rpass == 0) { meta.rpass = 1; resubmit_preserving_field_list(1); }
        }
        else if (k == 13) { hdr.b.setValid(); clone_preserving_field_list(CloneType.I2E, 5, 2); }
        else if (k == 14) { hdr.b.setValid(); sm.mcast_grp = 3; }
        else if (k == 18) { hdr.a.setInvalid(); hdr.c.setValid(); hdr.c = hdr.a; }
        else if (k == 20) { hdr.b = {32w0x01020304}; }
        else if (k == 21) { hdr.b = {y = 32w5}; hdr.a = {x = 16w9}; }
        else if (k == 19) { hdr.u.a.setInvalid(); hdr.u.b.setValid(); hdr.u.b.setInvalid(); }
        meta.ilen = (bit<16>)sm.packet_length;
    }
}

control egr(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.res.setValid();
        hdr.res.ilen = meta.ilen;
        hdr.res.elen = (bit<16>)sm.packet_length;
        hdr.res.iitype = meta.iitype;
        hdr.res.eitype = (bit<8>)sm.instance_type;
        if (hdr.op.kind == 15 && meta.cpass == 0) {
            hdr.b.setValid();
            meta.cpass = 1;
            clone_preserving_field_list(CloneType.E2E, 5, 2);
        }
        if (hdr.op.kind == 16 && meta.rpass == 0) {
            hdr.b.setValid();
            meta.rpass = 1;
            recirculate_preserving_field_list(1);
        }
    }
}
control uck(inout headers_t hdr, inout meta_t meta) { apply {} }

control dep(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.res);
        pkt.emit(hdr.op);
        pkt.emit(hdr.a);
        pkt.emit(hdr.b);
        pkt.emit(hdr.c);
        pkt.emit(hdr.u);
        pkt.emit(hdr.st);
    }
}

V1Switch(prs(), vck(), ing(), egr(), uck(), dep()) main;
