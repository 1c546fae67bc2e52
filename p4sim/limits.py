"""p4sim's documented limits (p4sim/docs/limits.md), in one place.

Every size a program or a P4Runtime client chooses is checked against these before anything
is allocated, so that bad or hostile input ends in a clear error instead of a MemoryError, a
RecursionError or a stalled switch. Extern storage is allocated on first use, so a large
declared size costs nothing until its cells are used.
"""

from __future__ import annotations

# -- P4 programs (front end) ---------------------------------------------------------------
MAX_WIDTH = 4096  # bits of bit<W>, int<W>, varbit<W> and of a width-prefixed literal
MAX_EXTERN_SIZE = 2**32 - 1  # cells of a counter, meter or register (a bit<32> in v1model)
MAX_TABLE_SIZE = 2**32  # a table's `size` (entries are stored as they are inserted)
MAX_STACK_SIZE = 1024  # elements of a header stack (every packet carries all of them)
MAX_NESTING = 200  # nested expressions, statements and types (p4sim's parser is recursive)
MAX_SOURCE_BYTES = 16 * 1024 * 1024  # one file, and the preprocessed program

# -- P4Runtime server -----------------------------------------------------------------------
MAX_READ_ENTITIES = 100_000  # entities one ReadRequest may answer (else RESOURCE_EXHAUSTED)
MAX_MESSAGE_CHARS = 200  # a value quoted in an error message or log line
# gRPC clients take trailers up to 8 KiB by default (grpc.max_metadata_size, counted as key +
# value + 32 bytes per entry) and refuse larger ones, up to 16 KiB only some of the time.
GRPC_TRAILER_LIMIT = 8 * 1024
MAX_ERROR_DETAILS_BYTES = 6 * 1024  # the Write error details, with room for the rest of the trailer
# DigestLists (p4runtime/digest_lists.py): records in one list, whatever max_list_size says,
# and records of one digest held back waiting for a DigestListAck (beyond: dropped, counted)
MAX_DIGEST_LIST = 4096
MAX_HELD_RECORDS = 65_536
