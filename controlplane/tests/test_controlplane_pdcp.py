"""PDCP data PDUs on a leg: the header bits of TS 38.323 for 18- and 12-bit SNs."""

import pytest

from controlplane.pdcp import data_header, dc_frame, sn_of

INNER = bytes.fromhex("02000000000a" "020000000001" "0800") + b"inner packet"


def test_18_bit_header_carries_dc_bit_and_sn():
    assert data_header(0x2ABCD) == bytes([0x82, 0xAB, 0xCD])
    assert data_header(43, data=False) == bytes([0x00, 0x00, 43])


def test_12_bit_header_carries_dc_bit_and_sn():
    assert data_header(0xABC, sn_bits=12) == bytes([0x8A, 0xBC])


def test_sn_is_taken_modulo_its_length():
    assert data_header((1 << 18) + 7) == data_header(7)
    assert data_header(4096 + 7, sn_bits=12) == data_header(7, sn_bits=12)


@pytest.mark.parametrize("sn_bits, sn", [(18, 0x3FFFF), (18, 0x10203), (12, 0xFFF), (12, 0x123)])
def test_dc_frame_inserts_header_after_the_macs_and_sn_of_reads_it_back(sn_bits, sn):
    frame = dc_frame(INNER, sn, sn_bits)
    assert frame[:12] == INNER[:12]
    assert frame[12:14] == b"\x88\xb5"
    assert frame[14 + 1 + sn_bits // 8 :] == INNER[12:]
    assert sn_of(frame, sn_bits) == sn


def test_sn_of_refuses_a_frame_that_is_not_pdcp():
    with pytest.raises(ValueError, match="not a DC frame: ethertype 0800"):
        sn_of(INNER)


def test_other_sn_lengths_are_refused_naming_the_allowed_ones():
    with pytest.raises(ValueError, match="sn_bits 15: allowed are 12 and 18"):
        data_header(1, sn_bits=15)
