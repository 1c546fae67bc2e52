"""A small QUIC download server and client on the aioquic API (aioquic ships none).

Protocol (ALPN "dcexp"): the client opens one bidirectional stream and sends
`GET <nbytes>\\n` (nbytes = -1: until the client closes); the server answers with the bytes of
its file (looped if nbytes exceeds it) and FIN. The client reports every 100 ms, as JSON lines,
the bytes received, its smoothed RTT and (for the record) its own congestion window, and at the
end the SHA-256 of what it received, so the harness can check the download is intact.

    python -m experiments.flows.quic_endpoint server --addr 10.0.0.1 --port 4433 \
        --cert C --key K --file F [--cc reno|cubic|cubic-nN[-nohystart]] [--qlog-dir D]
    python -m experiments.flows.quic_endpoint client --addr 10.0.0.1 --port 4433 \
        --bytes N | --duration-s S [--cc reno|cubic] [--rcvbuf BYTES] --log client.jsonl

Either role takes `--loop uvloop`: the same protocol code on uvloop's event loop (libuv)
instead of asyncio's, which spends less CPU per datagram (experiments/docs/aioquic-cpu.md);
uvloop is a project dependency (pyproject.toml), installed by `make setup`. A flow's key
`loop` (scenario files) chooses it for the testbed's aioquic flows.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import signal
import socket
import sys
import time

from aioquic.asyncio import QuicConnectionProtocol, connect, serve
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import ConnectionTerminated, StreamDataReceived
from aioquic.quic.logger import QuicFileLogger

from dccommon.cliargs import ArgumentParser, int_range
from experiments.flows import BYTES, DURATION, PORT, corbel_cc
from experiments.flows.aioquic_flow import LOOPS

corbel_cc.register()  # our CUBIC-N controllers beside aioquic's reno and cubic

ALPN = ["dcexp"]
REPORT_INTERVAL_S = 0.1
UNSENT_HIGH_WATER = 512 * 1024  # keep this much queued in aioquic, not the whole file
CHUNK = 64 * 1024


class DownloadServerProtocol(QuicConnectionProtocol):
    """Serves one download per stream, feeding aioquic's send buffer in chunks."""

    payload: bytes = b""

    def quic_event_received(self, event) -> None:
        if isinstance(event, StreamDataReceived) and event.data.startswith(b"GET "):
            nbytes = int(event.data.split()[1])
            asyncio.ensure_future(self._serve(event.stream_id, nbytes))

    async def _serve(self, stream_id: int, nbytes: int) -> None:
        written = 0
        forever = nbytes < 0
        payload = self.payload
        while forever or written < nbytes:
            stream = self._quic._streams.get(stream_id)  # aioquic exposes no queue depth
            if stream is None:
                return
            if written - stream.sender.highest_offset < UNSENT_HIGH_WATER:
                pos = written % len(payload)
                size = CHUNK if forever else min(CHUNK, nbytes - written)
                chunk = payload[pos : pos + size]
                self._quic.send_stream_data(stream_id, chunk)
                written += len(chunk)
                self.transmit()
            else:
                await asyncio.sleep(0.002)
        self._quic.send_stream_data(stream_id, b"", end_stream=True)
        self.transmit()


def _configuration(is_client: bool, cc: str) -> QuicConfiguration:
    config = QuicConfiguration(
        alpn_protocols=ALPN,
        is_client=is_client,
        congestion_control_algorithm=cc,
        max_data=16 * 1024 * 1024,
        max_stream_data=16 * 1024 * 1024,
    )
    return config


async def run_server(args) -> None:
    config = _configuration(False, args.cc)
    config.load_cert_chain(args.cert, args.key)
    if args.qlog_dir:
        # aioquic holds a connection's whole trace in memory and writes it when the
        # connection ends: for short downloads (tests, spot checks) only
        config.quic_logger = QuicFileLogger(args.qlog_dir)
    await serve(args.addr, args.port, configuration=config, create_protocol=DownloadServerProtocol)
    print("listening", flush=True)
    await asyncio.Event().wait()


class DownloadClientProtocol(QuicConnectionProtocol):
    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.received = 0
        self.digest = hashlib.sha256()
        self.finished = asyncio.get_event_loop().create_future()

    def quic_event_received(self, event) -> None:
        if isinstance(event, StreamDataReceived):
            self.received += len(event.data)
            self.digest.update(event.data)
            if event.end_stream and not self.finished.done():
                self.finished.set_result(True)
        elif isinstance(event, ConnectionTerminated) and not self.finished.done():
            self.finished.set_result(False)


async def run_client(args) -> int:
    config = _configuration(True, args.cc)
    config.verify_mode = False  # self-signed test certificate
    # Opened once before the transfer; lives as long as the client.
    log = open(args.log, "w") if args.log else sys.stdout  # noqa: SIM115, ASYNC230
    stop = asyncio.Event()
    loop = asyncio.get_event_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    t_start = time.monotonic()
    async with connect(
        args.addr, args.port, configuration=config, create_protocol=DownloadClientProtocol
    ) as proto:
        sock = proto._transport.get_extra_info("socket")
        if args.rcvbuf:
            # SO_RCVBUFFORCE (root) goes past net.core.rmem_max, which is not per namespace.
            sock.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), args.rcvbuf)
        rcvbuf = sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF)  # as the kernel set it
        stream_id = proto._quic.get_next_available_stream_id()
        nbytes = args.bytes if args.bytes is not None else -1
        proto._quic.send_stream_data(stream_id, f"GET {nbytes}\n".encode())
        proto.transmit()
        deadline = t_start + args.duration_s if args.duration_s else None

        def report(final: bool = False) -> None:
            rec = proto._quic._loss  # aioquic keeps RTT and cwnd in its recovery object
            line = {
                "ts": time.monotonic(),
                "bytes": proto.received,
                "srtt_ms": rec._rtt_smoothed * 1000,
                "cwnd": rec.congestion_window,
            }
            if final:
                line.update(
                    final=True,
                    sha256=proto.digest.hexdigest(),
                    complete=proto.finished.done() and proto.finished.result(),
                    elapsed_s=time.monotonic() - t_start,
                    rcvbuf=rcvbuf,
                )
            log.write(json.dumps(line) + "\n")
            log.flush()

        while not proto.finished.done() and not stop.is_set():
            if deadline and time.monotonic() >= deadline:
                break
            report()
            try:
                await asyncio.wait_for(asyncio.shield(proto.finished), REPORT_INTERVAL_S)
            except TimeoutError:
                pass
        report(final=True)
        proto.close()
    return 0 if (args.duration_s or proto.finished.done() and proto.finished.result()) else 1


def _runner(loop: str) -> asyncio.Runner:
    """An asyncio runner on the chosen event loop."""
    if loop == "asyncio":
        return asyncio.Runner()
    try:
        import uvloop
    except ImportError:
        sys.exit(
            "quic_endpoint: --loop uvloop: the uvloop package is not installed "
            f"(make setup installs it; allowed loops: {', '.join(LOOPS)})"
        )
    return asyncio.Runner(loop_factory=uvloop.new_event_loop)


def main(argv=None) -> int:
    p = ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="role", required=True)
    for role in ("server", "client"):
        s = sub.add_parser(role)
        s.add_argument("--addr", required=True)
        s.add_argument("--port", type=PORT, required=True)
        s.add_argument("--cc", choices=("reno", "cubic", *corbel_cc.NAMES), default="reno")
        s.add_argument("--loop", choices=LOOPS, default="asyncio", help="event loop")
    srv = sub.choices["server"]
    srv.add_argument("--cert", required=True)
    srv.add_argument("--key", required=True)
    srv.add_argument("--file", required=True, help="payload served (looped if needed)")
    srv.add_argument("--qlog-dir", help="write each connection's qlog here when it ends")
    cli = sub.choices["client"]
    size = cli.add_mutually_exclusive_group(required=True)
    size.add_argument("--bytes", type=BYTES)
    size.add_argument("--duration-s", type=DURATION)
    cli.add_argument(
        "--rcvbuf",
        type=int_range(0, 2**31 - 1, "rcvbuf"),
        default=0,
        help="UDP receive buffer (0: default)",
    )
    cli.add_argument("--log", help="JSON lines progress (default stdout)")
    args = p.parse_args(argv)
    if args.role == "server":
        with open(args.file, "rb") as f:
            DownloadServerProtocol.payload = f.read()
        with _runner(args.loop) as runner:
            runner.run(run_server(args))
        return 0
    with _runner(args.loop) as runner:
        return runner.run(run_client(args))


if __name__ == "__main__":
    sys.exit(main())
