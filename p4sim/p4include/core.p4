/* core.p4 for p4sim: the P4_16 core library (P4_16 specification, appendix "core.p4").
 * Written for p4sim with the standard names and signatures, so programs written for p4c
 * compile unchanged. */

#ifndef _CORE_P4_
#define _CORE_P4_

/// Standard error codes. New error codes can be declared by programs.
error {
    NoError,           /// No error.
    PacketTooShort,    /// Not enough bits in packet for 'extract'.
    NoMatch,           /// 'select' expression has no matches.
    StackOutOfBounds,  /// Reference to invalid element of a header stack.
    HeaderTooShort,    /// Extracting too many bits into a varbit field.
    ParserTimeout,     /// Parser execution time limit exceeded.
    ParserInvalidArgument  /// Parser operation was called with a value not supported.
}

extern packet_in {
    /// Read a header from the packet into a fixed-size header and advance the cursor.
    void extract<T>(out T hdr);
    /// Read bits into a header containing a varbit field.
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /// Read bits from the packet without advancing the cursor.
    T lookahead<T>();
    /// Advance the cursor by the specified number of bits.
    void advance(in bit<32> sizeInBits);
    /// Length of the packet in bytes.
    bit<32> length();
}

extern packet_out {
    /// Write a header (if valid) into the output packet, advancing the cursor.
    void emit<T>(in T hdr);
}

/// Check a predicate in a parser; on false, set the parser error and reject.
extern void verify(in bool check, in error toSignal);

/// Built-in action that does nothing.
@noWarn("unused")
action NoAction() {}

/// Standard match kinds for table key fields.
match_kind {
    exact,
    ternary,
    lpm
}

#endif  /* _CORE_P4_ */
