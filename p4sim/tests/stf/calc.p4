// A calculator in the style of the P4 tutorials' calc exercise: a custom protocol found by
// lookahead<header>() in a select, const entries keyed by the operator character, and a
// reply sent back out of the ingress port with the MAC addresses swapped.
#include <core.p4>
#include <v1model.p4>

const bit<16> CALC_ETYPE = 0x1234;
const bit<8>  CALC_P     = 0x50;   // 'P'
const bit<8>  CALC_4     = 0x34;   // '4'
const bit<8>  CALC_VER   = 0x01;
const bit<8>  CALC_PLUS  = 0x2b;   // '+'
const bit<8>  CALC_MINUS = 0x2d;   // '-'
const bit<8>  CALC_AND   = 0x26;   // '&'
const bit<8>  CALC_OR    = 0x7c;   // '|'
const bit<8>  CALC_CARET = 0x5e;   // '^'

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }

header p4calc_t {
    bit<8>  p;
    bit<8>  four;
    bit<8>  ver;
    bit<8>  op;
    bit<32> operand_a;
    bit<32> operand_b;
    bit<32> res;
}

struct headers { ethernet_t ethernet; p4calc_t p4calc; }
struct metadata { }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            CALC_ETYPE : check_p4calc;
            default    : accept;
        }
    }
    state check_p4calc {
        transition select(packet.lookahead<p4calc_t>().p,
                          packet.lookahead<p4calc_t>().four,
                          packet.lookahead<p4calc_t>().ver) {
            (CALC_P, CALC_4, CALC_VER) : parse_p4calc;
            default                    : accept;
        }
    }
    state parse_p4calc {
        packet.extract(hdr.p4calc);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action send_back(bit<32> result) {
        bit<48> tmp;
        hdr.p4calc.res = result;
        tmp = hdr.ethernet.dstAddr;
        hdr.ethernet.dstAddr = hdr.ethernet.srcAddr;
        hdr.ethernet.srcAddr = tmp;
        standard_metadata.egress_spec = standard_metadata.ingress_port;
    }
    action operation_add()   { send_back(hdr.p4calc.operand_a + hdr.p4calc.operand_b); }
    action operation_sub()   { send_back(hdr.p4calc.operand_a - hdr.p4calc.operand_b); }
    action operation_and()   { send_back(hdr.p4calc.operand_a & hdr.p4calc.operand_b); }
    action operation_or()    { send_back(hdr.p4calc.operand_a | hdr.p4calc.operand_b); }
    action operation_xor()   { send_back(hdr.p4calc.operand_a ^ hdr.p4calc.operand_b); }
    action operation_drop()  { mark_to_drop(standard_metadata); }

    table calculate {
        key = { hdr.p4calc.op : exact; }
        actions = {
            operation_add; operation_sub; operation_and;
            operation_or; operation_xor; operation_drop;
        }
        const default_action = operation_drop();
        const entries = {
            CALC_PLUS  : operation_add();
            CALC_MINUS : operation_sub();
            CALC_AND   : operation_and();
            CALC_OR    : operation_or();
            CALC_CARET : operation_xor();
        }
    }

    apply {
        if (hdr.p4calc.isValid()) {
            calculate.apply();
        } else {
            operation_drop();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.p4calc);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(),
         MyDeparser()) main;
