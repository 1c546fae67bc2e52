// Entry priorities of the program's own entries (P4_16 spec, "Entry priorities"), as p4c
// and BMv2 apply them: p4c sorts a table's entries by priority (highest first; lowest first
// with `largest_priority_wins = false`; equal ones as listed), BMv2 matches them in that
// order, and p4c's `@priority(N)` annotation replaces an entry's position in that order.
// Byte 0 selects the table, byte 1 (and 2) are its keys, byte 3 names the entry that hit.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> sel; bit<8> k; bit<8> k2; bit<8> v; }
struct headers { h_t h; }
struct metadata { }

parser P(packet_in pk, out headers hdr, inout metadata m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}

control I(inout headers hdr, inout metadata m, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.v = v; }

    // Given out of order: the largest wins (the default), wherever it is listed.
    table largest {
        key = { hdr.h.k: ternary; }
        actions = { set; }
        entries = {
            priority = 10: 0x10 &&& 0xf0 : set(1);
            priority = 20: 0x11 &&& 0xff : set(2);
            priority = 5:  0x12 &&& 0xfe : set(3);
        }
    }
    // The same entries, the smallest wins.
    table smallest {
        key = { hdr.h.k: ternary; }
        actions = { set; }
        largest_priority_wins = false;
        entries = {
            priority = 10: 0x10 &&& 0xf0 : set(1);
            priority = 20: 0x11 &&& 0xff : set(2);
            priority = 5:  0x12 &&& 0xfe : set(3);
        }
    }
    // Entries without a priority count down from the one before by priority_delta:
    // 100, 90, 200, 190.
    table delta {
        key = { hdr.h.k: ternary; }
        actions = { set; }
        priority_delta = 10;
        entries = {
            priority = 100: 0x10 &&& 0xf0 : set(1);
            0x11 &&& 0xff : set(2);
            priority = 200: 0x13 &&& 0xff : set(3);
            0x1f &&& 0xff : set(4);
        }
    }
    // priority_delta = 0 (p4c takes it): entries without a priority repeat the one before.
    table delta_zero {
        key = { hdr.h.k: ternary; }
        actions = { set; }
        priority_delta = 0;
        entries = {
            priority = 5: 0x10 &&& 0xf0 : set(1);
            0x11 &&& 0xff : set(2);
            priority = 7: 0x20 &&& 0xf0 : set(3);
            0x21 &&& 0xff : set(4);
        }
    }
    // No priorities and the smallest wins: still the first listed wins.
    table none_smallest {
        key = { hdr.h.k: ternary; }
        actions = { set; }
        largest_priority_wins = false;
        entries = {
            0x10 &&& 0xf0 : set(1);
            0x11 &&& 0xff : set(2);
        }
    }
    // Equal priorities: the first listed wins.
    table ties {
        key = { hdr.h.k: ternary; }
        actions = { set; }
        entries = {
            priority = 5: 0x10 &&& 0xf0 : set(1);
            priority = 5: 0x11 &&& 0xff : set(2);
            priority = 7: 0x20 &&& 0xf0 : set(3);
            priority = 7: 0x21 &&& 0xff : set(4);
        }
    }
    // p4c's @priority(N): BMv2's own priority (the smallest wins); an entry without one
    // has its position, so the third entry ties with the first and loses to it.
    table annotated {
        key = { hdr.h.k: ternary; }
        actions = { set; }
        const entries = {
            0x10 &&& 0xf0 : set(1) @priority(3);
            0x11 &&& 0xff : set(2) @priority(1);
            0x12 &&& 0xfe : set(3);
            0x14 &&& 0xfc : set(4) @priority(9);
            0x15 &&& 0xff : set(5);
        }
    }
    // @priority(N) beside `priority =`: p4c sorts by the latter (9, 7, 5) and hands BMv2
    // the position (1) or the annotation (9, 2): BMv2 priorities set(2) 1, set(3) 9, set(1) 2.
    table annotated_given {
        key = { hdr.h.k: ternary; }
        actions = { set; }
        entries = {
            priority = 5: 0x10 &&& 0xf0 : set(1) @priority(2);
            priority = 9: 0x11 &&& 0xff : set(2);
            priority = 7: 0x12 &&& 0xff : set(3) @priority(9);
        }
    }
    // Range keys.
    table ranges {
        key = { hdr.h.k: range; }
        actions = { set; }
        entries = {
            priority = 1: 0x00 .. 0xff : set(1);
            priority = 3: 0x10 .. 0x1f : set(2);
            priority = 2: 0x18 .. 0x20 : set(3);
        }
    }
    // An exact and an optional key.
    table opt {
        key = { hdr.h.k: exact; hdr.h.k2: optional; }
        actions = { set; }
        largest_priority_wins = false;
        entries = {
            priority = 9: (0x01, _) : set(1);
            priority = 4: (0x01, 0x07) : set(2);
            priority = 6: (0x02, 0x07) : set(3);
            priority = 2: (0x02, _) : set(4);
        }
    }
    // An lpm key beside a ternary one: the priority decides, not the prefix length.
    table lpm_ternary {
        key = { hdr.h.k: lpm; hdr.h.k2: ternary; }
        actions = { set; }
        entries = {
            priority = 1: (0x10 &&& 0xff, _) : set(1);
            priority = 2: (0x10 &&& 0xf0, _) : set(2);
            priority = 3: (0x00 &&& 0x00, 0x05 &&& 0xff) : set(3);
        }
    }
    // Const entries without priorities: the first listed wins.
    table listed {
        key = { hdr.h.k: ternary; }
        actions = { set; }
        const entries = {
            0x10 &&& 0xf0 : set(1);
            0x11 &&& 0xff : set(2);
        }
    }

    apply {
        sm.egress_spec = 1;
        if (hdr.h.sel == 1) { largest.apply(); }
        else if (hdr.h.sel == 2) { smallest.apply(); }
        else if (hdr.h.sel == 3) { delta.apply(); }
        else if (hdr.h.sel == 4) { none_smallest.apply(); }
        else if (hdr.h.sel == 5) { ties.apply(); }
        else if (hdr.h.sel == 6) { annotated.apply(); }
        else if (hdr.h.sel == 7) { ranges.apply(); }
        else if (hdr.h.sel == 8) { opt.apply(); }
        else if (hdr.h.sel == 9) { lpm_ternary.apply(); }
        else if (hdr.h.sel == 10) { listed.apply(); }
        else if (hdr.h.sel == 11) { annotated_given.apply(); }
        else if (hdr.h.sel == 12) { delta_zero.apply(); }
    }
}

control E(inout headers hdr, inout metadata m, inout standard_metadata_t sm) { apply { } }
control VC(inout headers hdr, inout metadata m) { apply { } }
control CC(inout headers hdr, inout metadata m) { apply { } }
control D(packet_out pk, in headers hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
