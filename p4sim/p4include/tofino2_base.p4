/* T2NA constants, intrinsic metadata and externs: p4sim's subset of the published
 * tofino2_base.p4 (same names and signatures; what is left out is not supported). Where it
 * differs from Tofino 1: no PARSER_ERROR_DST_CONT but PARSER_ERROR_CSUM_MBE, the mirror and
 * packet-generator fields of the deparser metadata, 32-bit enq_tstamp/deq_timedelta, the
 * ghost thread's metadata, counters and meters with true_egress_accounting, and register
 * actions with up to four return values. */
#ifndef _TOFINO2_P4_BASE_
#define _TOFINO2_P4_BASE_

#include <core.p4>

// ig_prsr_md.parser_err bits.
const bit<16> PARSER_ERROR_OK           = 16w0x0000;
const bit<16> PARSER_ERROR_NO_MATCH     = 16w0x0001;
const bit<16> PARSER_ERROR_PARTIAL_HDR  = 16w0x0002;
const bit<16> PARSER_ERROR_CTR_RANGE    = 16w0x0004;
const bit<16> PARSER_ERROR_TIMEOUT_USER = 16w0x0008;
const bit<16> PARSER_ERROR_TIMEOUT_HW   = 16w0x0010;
const bit<16> PARSER_ERROR_SRC_EXT      = 16w0x0020;
const bit<16> PARSER_ERROR_PHV_OWNER    = 16w0x0080;
const bit<16> PARSER_ERROR_MULTIWRITE   = 16w0x0100;
const bit<16> PARSER_ERROR_ARAM_MBE     = 16w0x0400;
const bit<16> PARSER_ERROR_FCS          = 16w0x0800;
const bit<16> PARSER_ERROR_CSUM_MBE     = 16w0x1000;

enum MeterType_t { PACKETS, BYTES }
enum bit<8> MeterColor_t { GREEN = 8w0, YELLOW = 8w1, RED = 8w3 }
enum CounterType_t { PACKETS, BYTES, PACKETS_AND_BYTES }
enum HashAlgorithm_t { IDENTITY, RANDOM, XOR8, XOR16, XOR32, CRC8, CRC16, CRC32, CRC64, CUSTOM }

error { CounterRange, Timeout, PhvOwner, MultiWrite, IbufOverflow, IbufUnderflow }

// ---- Intrinsic metadata (the layouts the parsers extract and the blocks read/write) ----

@__intrinsic_metadata
header ingress_intrinsic_metadata_t {
    bit<1> resubmit_flag;
    @padding bit<1> _pad1;
    bit<2> packet_version;
    @padding bit<(4 - PORT_ID_WIDTH % 8)> _pad2;
    PortId_t ingress_port;
    bit<48> ingress_mac_tstamp;
}

@__intrinsic_metadata
struct ingress_intrinsic_metadata_for_tm_t {
    PortId_t ucast_egress_port;
    bit<1> bypass_egress;
    bit<1> deflect_on_drop;
    bit<3> ingress_cos;
    QueueId_t qid;
    bit<3> icos_for_copy_to_cpu;
    bit<1> copy_to_cpu;
    bit<2> packet_color;
    bit<1> disable_ucast_cutthru;
    bit<1> enable_mcast_cutthru;
    MulticastGroupId_t mcast_grp_a;
    MulticastGroupId_t mcast_grp_b;
    bit<13> level1_mcast_hash;
    bit<13> level2_mcast_hash;
    L1ExclusionId_t level1_exclusion_id;
    L2ExclusionId_t level2_exclusion_id;
    bit<16> rid;
}

@__intrinsic_metadata
struct ingress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;
    bit<32> global_ver;
    bit<16> parser_err;
}

@__intrinsic_metadata
struct ingress_intrinsic_metadata_for_deparser_t {
    bit<3> drop_ctl;
    DigestType_t digest_type;
    ResubmitType_t resubmit_type;
    MirrorType_t mirror_type;
    bit<1> mirror_io_select;
    bit<13> mirror_hash;
    bit<3> mirror_ingress_cos;
    bit<1> mirror_deflect_on_drop;
    bit<1> mirror_multicast_ctrl;
    PortId_t mirror_egress_port;
    QueueId_t mirror_qid;
    bit<8> mirror_coalesce_length;
    bit<32> adv_flow_ctl;
    bit<14> mtu_trunc_len;
    bit<1> mtu_trunc_err_f;
    bit<1> pktgen;
    bit<14> pktgen_address;
    bit<10> pktgen_length;
}

// The ghost thread's view of a queue (GhostT, an optional seventh block of the Pipeline).
@__intrinsic_metadata @__ghost_metadata
header ghost_intrinsic_metadata_t {
    bit<1> ping_pong;
    bit<18> qlength;
    bit<11> qid;
    bit<2> pipe_id;
}

@__intrinsic_metadata
header egress_intrinsic_metadata_t {
    @padding bit<(8 - PORT_ID_WIDTH % 8)> _pad0;
    PortId_t egress_port;
    @padding bit<5> _pad1;
    bit<19> enq_qdepth;
    @padding bit<6> _pad2;
    bit<2> enq_congest_stat;
    bit<32> enq_tstamp;
    @padding bit<5> _pad3;
    bit<19> deq_qdepth;
    @padding bit<6> _pad4;
    bit<2> deq_congest_stat;
    bit<8> app_pool_congest_stat;
    bit<32> deq_timedelta;
    bit<16> egress_rid;
    @padding bit<7> _pad5;
    bit<1> egress_rid_first;
    @padding bit<(8 - QUEUE_ID_WIDTH % 8)> _pad6;
    QueueId_t egress_qid;
    @padding bit<5> _pad7;
    bit<3> egress_cos;
    @padding bit<7> _pad8;
    bit<1> deflection_flag;
    bit<16> pkt_length;
    @padding bit<8> _pad9;
}

@__intrinsic_metadata
struct egress_intrinsic_metadata_from_parser_t {
    bit<48> global_tstamp;
    bit<32> global_ver;
    bit<16> parser_err;
}

@__intrinsic_metadata
struct egress_intrinsic_metadata_for_deparser_t {
    bit<3> drop_ctl;
    MirrorType_t mirror_type;
    bit<1> coalesce_flush;
    bit<7> coalesce_length;
    bit<1> mirror_io_select;
    bit<13> mirror_hash;
    bit<3> mirror_ingress_cos;
    bit<1> mirror_deflect_on_drop;
    bit<1> mirror_multicast_ctrl;
    PortId_t mirror_egress_port;
    QueueId_t mirror_qid;
    bit<8> mirror_coalesce_length;
    bit<32> adv_flow_ctl;
    bit<14> mtu_trunc_len;
    bit<1> mtu_trunc_err_f;
}

@__intrinsic_metadata
struct egress_intrinsic_metadata_for_output_port_t {
    bit<1> capture_tstamp_on_tx;
    bit<1> update_delay_on_tx;
}

// ---- Externs ----

extern Checksum {
    Checksum();
    void add<T>(in T data);
    void subtract<T>(in T data);
    bool verify();
    bit<16> get();
    bit<16> update<T>(in T data, @optional in bool zeros_as_ones);
}

extern CRCPolynomial<T> {
    CRCPolynomial(T coeff, bool reversed, bool msb, bool extended, T init, T xor);
}

extern Hash<W> {
    Hash(HashAlgorithm_t algo);
    Hash(HashAlgorithm_t algo, CRCPolynomial<_> poly);
    W get<D>(in D data);
}

extern Random<W> {
    Random();
    W get();
}

extern T max<T>(in T t1, in T t2);
extern T min<T>(in T t1, in T t2);

extern Counter<W, I> {
    Counter(bit<32> size, CounterType_t type, @optional bool true_egress_accounting);
    void count(in I index, @optional in bit<32> adjust_byte_count);
}

extern DirectCounter<W> {
    DirectCounter(CounterType_t type, @optional bool true_egress_accounting);
    void count(@optional in bit<32> adjust_byte_count);
}

extern Meter<I> {
    Meter(bit<32> size, MeterType_t type, @optional bool true_egress_accounting);
    Meter(bit<32> size, MeterType_t type, bit<8> red, bit<8> yellow, bit<8> green,
          @optional bool true_egress_accounting);
    bit<8> execute(in I index, in MeterColor_t color, @optional in bit<32> adjust_byte_count);
    bit<8> execute(in I index, @optional in bit<32> adjust_byte_count);
}

extern Register<T, I> {
    Register(bit<32> size);
    Register(bit<32> size, T initial_value);
    T read(in I index);
    T write(in I index, in T value);
}

extern DirectRegister<T> {
    DirectRegister();
    DirectRegister(T initial_value);
    T read();
    T write(in T value);
}

// apply() runs atomically per packet on one register cell: value in, value (written back)
// out, and up to four return values (rv1 is what execute returns, rv2..rv4 its out arguments).
extern RegisterAction<T, H, U> {
    RegisterAction(Register<_, _> reg);
    U execute(@optional in H index, @optional out U rv2, @optional out U rv3,
              @optional out U rv4);
    @synchronous(execute)
    abstract void apply(inout T value, @optional out U rv1, @optional out U rv2,
                        @optional out U rv3, @optional out U rv4);
}

extern DirectRegisterAction<T, U> {
    DirectRegisterAction(DirectRegister<T> reg);
    U execute(@optional out U rv2, @optional out U rv3, @optional out U rv4);
    @synchronous(execute)
    abstract void apply(inout T value, @optional out U rv, @optional out U rv2,
                        @optional out U rv3, @optional out U rv4);
}

extern Mirror {
    Mirror(MirrorType_t mirror_type);
    void emit(in MirrorId_t session_id);
    void emit<T>(in MirrorId_t session_id, in T hdr);
}

#endif
