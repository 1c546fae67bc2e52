// Checksum controls. The splitter never changes an L3 or L4 header (the original packet
// travels unchanged behind the PDCP shim), so there is nothing to verify or update.
#ifndef DC_CHECKSUMS_P4
#define DC_CHECKSUMS_P4

#include "headers.p4"

control DcVerifyChecksum(inout parsed_headers_t hdr, inout local_metadata_t meta) {
    apply { }
}

control DcComputeChecksum(inout parsed_headers_t hdr, inout local_metadata_t meta) {
    apply { }
}

#endif // DC_CHECKSUMS_P4
