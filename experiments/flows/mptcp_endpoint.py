"""A small Multipath TCP download server and client on the kernel's MPTCP (IPPROTO_MPTCP).

Debian's iperf3 3.12 has no --mptcp, and `mptcpize` (LD_PRELOAD) would hide the subflows from
us, so the two ends are ours: plain sockets of protocol IPPROTO_MPTCP, the kernel's default
scheduler and path manager (the client's `ip mptcp endpoint ... subflow` opens the second
subflow; experiments/run/testbed.py sets that up).

Protocol: the client connects and sends `GET <nbytes>\\n` (nbytes = -1: until the client
closes); the server sends its file (looped if nbytes exceeds it) and closes. The congestion
control is the sender's (TCP_CONGESTION on the MPTCP socket applies to every subflow).

The server logs every 100 ms, as JSON lines, each subflow's sender-side TCP_INFO (bytes
acked, smoothed RTT, cwnd) with its addresses (SOL_MPTCP MPTCP_TCPINFO and
MPTCP_SUBFLOW_ADDRS, Linux >= 5.19); the client logs the bytes received and, at the end, the
SHA-256 of what it received.

    python -m experiments.flows.mptcp_endpoint server --addr 10.0.0.1 --port 4433 \
        --file F [--cc reno|cubic|bbr] --log server.jsonl
    python -m experiments.flows.mptcp_endpoint client --addr 10.0.0.1 --port 4433 \
        --bytes N | --duration-s S --log client.jsonl
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import struct
import sys
import threading
import time

from dccommon.cliargs import ArgumentParser
from experiments.flows import BYTES, DURATION, PORT

IPPROTO_MPTCP = getattr(socket, "IPPROTO_MPTCP", 262)
SOL_MPTCP = 284  # include/linux/socket.h
MPTCP_TCPINFO = 2  # include/uapi/linux/mptcp.h
MPTCP_SUBFLOW_ADDRS = 3
SUBFLOW_DATA = struct.Struct("IIII")  # size_subflow_data, num_subflows, size_kernel, size_user
TCP_INFO_SIZE = 232  # struct tcp_info up to tcpi_snd_wnd (Linux 5.19)
SOCKADDR_STORAGE = 128  # one side of struct mptcp_subflow_addrs
MAX_SUBFLOWS = 8
REPORT_INTERVAL_S = 0.1
CHUNK = 256 * 1024


# ---------------------------------------------------------------- per-subflow TCP_INFO
def _subflow_array(sock: socket.socket, optname: int, elem: int) -> list[bytes]:
    """One SOL_MPTCP array option: the header names the element size we read."""
    head = SUBFLOW_DATA.pack(SUBFLOW_DATA.size, 0, 0, elem)
    buf = bytearray(head + bytes(elem * MAX_SUBFLOWS))
    raw = _getsockopt_inout(sock.fileno(), SOL_MPTCP, optname, buf)
    _, count, _, size_user = SUBFLOW_DATA.unpack_from(raw)
    start = SUBFLOW_DATA.size
    return [raw[start + i * size_user : start + (i + 1) * size_user] for i in range(count)]


def _getsockopt_inout(fd: int, level: int, optname: int, buf: bytearray) -> bytes:
    """getsockopt(2) with a buffer the kernel reads first (MPTCP's array options need it;
    Python's socket.getsockopt passes none)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    cbuf = (ctypes.c_char * len(buf)).from_buffer(buf)
    optlen = ctypes.c_uint32(len(buf))
    if libc.getsockopt(fd, level, optname, cbuf, ctypes.byref(optlen)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return bytes(buf[: optlen.value])


def _ipv4(sockaddr: bytes) -> str | None:
    family, _port = struct.unpack_from("=HH", sockaddr)
    return socket.inet_ntoa(sockaddr[4:8]) if family == socket.AF_INET else None


def subflows(sock: socket.socket) -> list[dict]:
    """Each subflow's local/remote address and sender-side counters, in the kernel's order."""
    infos = _subflow_array(sock, MPTCP_TCPINFO, TCP_INFO_SIZE)
    addrs = _subflow_array(sock, MPTCP_SUBFLOW_ADDRS, 2 * SOCKADDR_STORAGE)
    out = []
    for info, addr in zip(infos, addrs, strict=False):
        # struct tcp_info offsets: rtt 68 (us), snd_cwnd 80 (segments), snd_mss 16,
        # total_retrans 100, bytes_acked 120, bytes_sent 200
        (snd_mss,) = struct.unpack_from("I", info, 16)
        rtt_us, _rttvar, _ssthresh, cwnd = struct.unpack_from("IIII", info, 68)
        (retrans,) = struct.unpack_from("I", info, 100)
        (acked,) = struct.unpack_from("Q", info, 120)
        (sent,) = struct.unpack_from("Q", info, 200) if len(info) >= 208 else (0,)
        out.append(
            {
                "local": _ipv4(addr[:SOCKADDR_STORAGE]),
                "remote": _ipv4(addr[SOCKADDR_STORAGE:]),
                "bytes_acked": acked,
                "bytes_sent": sent,
                "rtt_ms": rtt_us / 1000,
                "cwnd_bytes": cwnd * snd_mss,
                "retrans": retrans,
            }
        )
    return out


# ---------------------------------------------------------------- server
def serve(args) -> int:
    payload = open(args.file, "rb").read()  # noqa: SIM115 - read once, small (a few MiB)
    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsock.bind((args.addr, args.port))
    lsock.listen(1)
    conn, _peer = lsock.accept()  # the listener stays open: Linux answers MP_JOIN SYNs on it
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, args.cc.encode())
    request = b""
    while not request.endswith(b"\n") and len(request) < 64:
        part = conn.recv(64)
        if not part:
            return 1
        request += part
    nbytes = int(request.split()[1])
    log = open(args.log, "w") if args.log else None  # noqa: SIM115 - open while serving
    done = threading.Event()

    def report() -> None:
        while not done.wait(REPORT_INTERVAL_S):
            try:
                rec = {"ts": time.monotonic(), "subflows": subflows(conn)}
            except OSError:
                return  # closed under us at the end
            if log:
                log.write(json.dumps(rec) + "\n")
                log.flush()

    threading.Thread(target=report, daemon=True).start()
    view, sent = memoryview(payload), 0
    try:
        while nbytes < 0 or sent < nbytes:
            pos = sent % len(payload)
            size = CHUNK if nbytes < 0 else min(CHUNK, nbytes - sent)
            sent += conn.send(view[pos : min(pos + size, len(payload))])
        conn.shutdown(socket.SHUT_WR)
        conn.recv(1)  # wait for the client's close, so the last TCP_INFO sees every ACK
    except (BrokenPipeError, ConnectionResetError):
        pass  # a duration-mode client closes first
    done.set()
    if log:
        try:
            log.write(json.dumps({"ts": time.monotonic(), "subflows": subflows(conn)}) + "\n")
        except OSError:
            pass
        log.close()
    conn.close()
    lsock.close()
    return 0


# ---------------------------------------------------------------- client
def fetch(args) -> int:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    sock.connect((args.addr, args.port))
    want = args.bytes if args.bytes is not None else -1
    sock.sendall(f"GET {want}\n".encode())
    sock.settimeout(REPORT_INTERVAL_S)
    digest, got = hashlib.sha256(), 0
    start = time.monotonic()
    next_report = start + REPORT_INTERVAL_S
    buf = bytearray(CHUNK)
    complete = False
    with open(args.log, "w") as log:
        while True:
            now = time.monotonic()
            if args.duration_s is not None and now - start >= args.duration_s:
                complete = True
                break
            try:
                n = sock.recv_into(buf)
            except TimeoutError:
                n = -1
            if n == 0:
                complete = want >= 0 and got == want
                break
            if n > 0:
                digest.update(memoryview(buf)[:n])
                got += n
            if now >= next_report:
                log.write(json.dumps({"ts": now, "bytes": got}) + "\n")
                log.flush()
                next_report += REPORT_INTERVAL_S
        end = time.monotonic()
        final = {"ts": end, "bytes": got, "final": True, "complete": complete}
        final |= {"elapsed_s": end - start, "sha256": digest.hexdigest()}
        log.write(json.dumps(final) + "\n")
    sock.close()
    return 0 if complete else 1


def main(argv: list[str] | None = None) -> int:
    ap = ArgumentParser(prog="mptcp_endpoint", description=__doc__.split("\n")[0])
    ap.add_argument("role", choices=("server", "client"))
    ap.add_argument("--addr", required=True)
    ap.add_argument("--port", type=PORT, required=True)
    ap.add_argument("--file", help="server: the file to serve")
    ap.add_argument("--cc", default="cubic", choices=("reno", "cubic", "bbr"))
    ap.add_argument("--log", help="JSON-lines log")
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--bytes", type=BYTES)
    size.add_argument("--duration-s", type=DURATION)
    args = ap.parse_args(argv)
    if args.role == "server":
        if not args.file:
            ap.error("server needs --file")
        return serve(args)
    if args.bytes is None and args.duration_s is None:
        ap.error("client needs --bytes or --duration-s")
    if not args.log:
        ap.error("client needs --log")
    return fetch(args)


if __name__ == "__main__":
    sys.exit(main())
