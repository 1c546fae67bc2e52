// Language features: typedef/type, constants, plain and serializable enums, switch on a
// value, functions with out parameters, nested control instances, header stack push/pop and
// indexing, header and struct assignment, {...} initializers, setInvalid, bool casts.
#include <core.p4>
#include <v1model.p4>

typedef bit<8> byte_t;
type bit<16> port_id_t;
const byte_t MAGIC = 0x5a;
const bit<16> DOUBLE_MAGIC = MAGIC ++ MAGIC;

enum Color { RED, GREEN, BLUE }
enum bit<8> Proto { TCP = 6, UDP = 17 }

header op_t { byte_t code; byte_t x; }
header item_t { byte_t v; }
header res_t {
    byte_t a;       // switch on the code
    byte_t b;       // function result
    byte_t c;       // out parameter of the function
    bit<16> d;      // DOUBLE_MAGIC
    byte_t e;       // enum results
    byte_t f;       // nested control result
    bit<1> g;       // (bit<1>) bool
    bit<7> h;       // stack lastIndex after the push, or 0x7f
}

struct headers_t {
    op_t      op;
    res_t     res;
    item_t[4] items;
    item_t    spare;
}

struct pair_t { byte_t lo; byte_t hi; }
struct meta_t { pair_t p; Color color; bit<32> last; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.op);
        transition select(hdr.op.x) {
            0: accept;
            default: parse_items;
        }
    }
    state parse_items {
        pkt.extract(hdr.items.next);
        pkt.extract(hdr.items.next);
        meta.last = hdr.items.lastIndex;  // lastIndex exists in parsers only (P4_16 spec)
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply {} }

// Returns x * 2 and reports x + 1 through an out parameter.
bit<8> twice(in bit<8> x, out bit<8> plus_one) {
    plus_one = x + 1;
    return x << 1;
}

control Classify(in byte_t code, out byte_t result) {
    apply {
        if (code == MAGIC) {
            result = 0xee;
            return;
        }
        result = 0x11;
    }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Classify() classify;

    apply {
        hdr.res.setValid();
        switch (hdr.op.code) {
            1: { hdr.res.a = 10; }
            2:
            3: { hdr.res.a = 23; }
            default: { hdr.res.a = 99; }
        }
        hdr.res.b = twice(hdr.op.x, hdr.res.c);
        hdr.res.d = DOUBLE_MAGIC;

        meta.color = Color.GREEN;
        Proto p = (Proto) hdr.op.x;
        if (meta.color == Color.GREEN && p == Proto.UDP) {
            hdr.res.e = (bit<8>) Proto.UDP;
        } else if (meta.color == Color.GREEN) {
            hdr.res.e = 1;
        }

        classify.apply(hdr.op.code, hdr.res.f);
        hdr.res.g = (bit<1>) (hdr.op.x > 100);

        meta.p = { 0x0a, 0x0b };
        pair_t q = { hi = 0x0d, lo = 0x0c };
        meta.p = q;

        if (hdr.items[0].isValid()) {
            // push_front(1): elements move up, the new element 0 is invalid.
            hdr.items.push_front(1);
            hdr.items[0].setValid();
            hdr.items[0].v = meta.p.lo;
            hdr.spare = hdr.items[2];      // header assignment copies validity and fields
            hdr.items[2].setInvalid();
            hdr.res.h = (bit<7>) (meta.last + 1);  // push_front(1) moved the last one up
        } else {
            hdr.res.h = 0x7f;
        }
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply {} }
control CC(inout headers_t hdr, inout meta_t meta) { apply {} }
control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
