// Header types, the parsed-header struct and the per-packet metadata of the splitter.
// The frame format on the DC legs is DESIGN.md section 3:
//   Ethernet(0x88B5) | PDCP data PDU header | inner ethertype | original L3 packet.
#ifndef DC_HEADERS_P4
#define DC_HEADERS_P4

#include "defines.p4"

header ethernet_t {
    mac_addr_t dst_addr;
    mac_addr_t src_addr;
    bit<16>    ether_type;
}

// PDCP data PDU header for DRBs (TS 38.323 figures 6.2.2.1-1 / 6.2.2.2-1): D/C, R..., SN.
header pdcp_t {
    bit<1>             d_c;
    bit<PDCP_R_WIDTH>  reserved;
    pdcp_sn_t          sn;
}

// The original ethertype, so that the receiver can restore the frame.
header inner_ethertype_t {
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>      version;
    bit<4>      ihl;
    bit<6>      dscp;
    bit<2>      ecn;
    bit<16>     total_len;
    bit<16>     identification;
    bit<3>      flags;
    bit<13>     frag_offset;
    bit<8>      ttl;
    bit<8>      protocol;
    bit<16>     hdr_checksum;
    ipv4_addr_t src_addr;
    ipv4_addr_t dst_addr;
}

header ipv6_t {
    bit<4>      version;
    bit<8>      traffic_class;
    bit<20>     flow_label;
    bit<16>     payload_len;
    bit<8>      next_hdr;
    bit<8>      hop_limit;
    ipv6_addr_t src_addr;
    ipv6_addr_t dst_addr;
}

header udp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<16> len;
    bit<16> checksum;
}

header tcp_t {
    bit<16> src_port;
    bit<16> dst_port;
    bit<32> seq_no;
    bit<32> ack_no;
    bit<4>  data_offset;
    bit<4>  res;
    bit<8>  flags;
    bit<16> window;
    bit<16> checksum;
    bit<16> urgent_ptr;
}

#ifdef DC_ADAPTIVE
// Leg feedback report (p4src/README.md, "Leg feedback frames"): a PDCP control PDU of a type
// TS 38.323 reserves, carrying DDDS-like fields (TS 38.425). Lost SN ranges may follow; the
// switch does not parse them.
header dc_feedback_t {
    bit<1>      d_c;            // 0: control PDU
    bit<3>      pdu_type;       // PDCP_PDU_DC_FEEDBACK
    bit<4>      reserved;
    bit<8>      version;
    bit<8>      leg;
    bit<8>      lost_ranges;    // number of [start, end] SN pairs after this header
    bit<32>     seq;
    ipv4_addr_t ue_addr;
    bit<32>     desired_bytes;  // desired buffer size: drain rate x (target delay + link delay)
    bit<32>     drain_rate;     // bytes/s over the time the leg's queue was busy
    bit<32>     held_bytes;     // the user's bytes on the leg, neither delivered nor lost
    bit<32>     delivered_sn;   // highest PDCP SN delivered on this leg
    bit<32>     delivered_bytes;    // in the report period
    bit<32>     lost_count;         // SNs lost in the report period
}

// PacketIn metadata: the port a punted frame came in on.
@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}
#endif // DC_ADAPTIVE

struct parsed_headers_t {
#ifdef DC_TNA
    // TNA: the PDCP shim travels from the ingress to the egress deparser in front of the
    // frame (bridged) for every frame, d_c = 0 when there is none; egress puts it behind
    // Ethernet. So egress counts every frame's bytes as received (include/tna/egress.p4).
    pdcp_t            shim_pdcp;
    inner_ethertype_t shim_ethertype;
#endif // DC_TNA
#ifdef DC_ADAPTIVE
    packet_in_t       packet_in;
    dc_feedback_t     feedback;
#endif // DC_ADAPTIVE
    ethernet_t        ethernet;
    pdcp_t            pdcp;
    inner_ethertype_t inner_ethertype;
    ipv4_t            ipv4;
    ipv6_t            ipv6;
    udp_t             udp;
    tcp_t             tcp;
}

struct local_metadata_t {
    bit<2>       dc_mode;       // DC_MODE_*
    user_idx_t   user_idx;
    session_id_t session;
    batch_size_t batch;         // B
    batch_size_t leg_a_count;   // k: positions 0..k-1 of a batch go to leg A
    bit<9>       leg_a_port;
    bit<9>       leg_b_port;
#ifdef DC_ADAPTIVE
    bit<1>       by_credit;     // split_credit: the leg is chosen by credit
    bit<1>       report_leg;    // 0 = leg A, 1 = leg B of a feedback report's user
#endif // DC_ADAPTIVE
}

#endif // DC_HEADERS_P4
