"""Live reconfiguration: the SN never repeats or skips, the batch restarts only when its
position no longer fits.

Run: make ptf PTF_TESTS=reconfig
"""

import subprocess
import sys
import threading
import time
from pathlib import Path

from splitter_test import LEG_A, LEG_B, SERVER, SplitterTest

from controlplane.pdcp import dc_frame, sn_of


class BatchShrinkRestartsBatchTest(SplitterTest):
    """B 10->4 with position 4: the next packet starts a new batch; the SN continues."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=10, ratio="7:3")
        seq = 0
        for _ in range(4):
            pkt = self.udp_packet("10.0.0.2", seq=seq)
            self.send(SERVER, pkt)
            self.expect(LEG_A, dc_frame(pkt, sn=seq))
            seq += 1
        self.sw.set_user("10.0.0.2", batch=4, ratio="3:1")
        for pos in (0, 1, 2, 3, 0, 1):
            pkt = self.udp_packet("10.0.0.2", seq=seq)
            self.send(SERVER, pkt)
            self.expect(LEG_A if pos < 3 else LEG_B, dc_frame(pkt, sn=seq))
            seq += 1
        self.verify_no_other_packets()


class BatchGrowContinuesBatchTest(SplitterTest):
    """B 4->10 with position 3: the batch continues at position 3 under the new k."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=4, ratio="1:1")
        seq = 0
        for pos in range(3):
            pkt = self.udp_packet("10.0.0.2", seq=seq)
            self.send(SERVER, pkt)
            self.expect(LEG_A if pos < 2 else LEG_B, dc_frame(pkt, sn=seq))
            seq += 1
        self.sw.set_user("10.0.0.2", batch=10, ratio="5:5")
        for pos in (3, 4, 5, 6, 7, 8, 9, 0):
            pkt = self.udp_packet("10.0.0.2", seq=seq)
            self.send(SERVER, pkt)
            self.expect(LEG_A if pos < 5 else LEG_B, dc_frame(pkt, sn=seq))
            seq += 1
        self.verify_no_other_packets()


class DupToggleKeepsSnTest(SplitterTest):
    """split -> dup -> split: SNs run on without a gap; the batch resumes where it was."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=4, ratio="2:2", name="ue1")
        seq = 0

        def send_expect(*ports):
            nonlocal seq
            pkt = self.udp_packet("10.0.0.2", seq=seq)
            self.send(SERVER, pkt)
            for port in ports:
                self.expect(port, dc_frame(pkt, sn=seq))
            seq += 1

        send_expect(LEG_A)  # position 0
        self.sw.set_user("ue1", dup=True)
        send_expect(LEG_A, LEG_B)
        send_expect(LEG_A, LEG_B)
        self.sw.set_user("ue1", dup=False)
        send_expect(LEG_A)  # position 1: duplication did not advance the batch
        send_expect(LEG_B)
        send_expect(LEG_B)
        send_expect(LEG_A)
        self.verify_no_other_packets()


class ModeChangeScAndBackTest(SplitterTest):
    """dc-split -> sc -> dc-split: SC packets are unnumbered, the SN resumes after them."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=1, ratio="1:0")
        pkt = self.udp_packet("10.0.0.2", seq=0)
        self.send(SERVER, pkt)
        self.expect(LEG_A, dc_frame(pkt, sn=0))
        self.sw.set_user("10.0.0.2", mode="sc", port=LEG_B)
        pkt = self.udp_packet("10.0.0.2", seq=1)
        self.send(SERVER, pkt)
        self.expect(LEG_B, pkt)
        self.sw.set_user("10.0.0.2", mode="dc-split", batch=1, ratio="1:0")
        pkt = self.udp_packet("10.0.0.2", seq=2)
        self.send(SERVER, pkt)
        self.expect(LEG_A, dc_frame(pkt, sn=1))
        self.verify_no_other_packets()


class DcctlLiveScenarioTest(SplitterTest):
    """Traffic flowing while `dcctl user set ue1` changes ratio 9:1, dup on, dup off, 1:1:
    every packet arrives once per leg it was sent to, SN i carries packet i."""

    PACKETS = 400

    def dcctl(self, *argv):
        """A real dcctl process; it becomes primary with a higher election id than ours."""
        addr = self.params.get("grpc_addr", "127.0.0.1:9559")
        self.election_ids += 1
        proc = subprocess.run(
            [
                str(Path(sys.executable).parent / "dcctl"),
                "--grpc-addr",
                addr,
                "--election-id",
                str(self.election_ids),
                *argv,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        self.assertEqual(proc.returncode, 0, f"dcctl {' '.join(argv)}: {proc.stderr}")

    def runTest(self):
        self.add_user("10.0.0.2", batch=10, ratio="1:1", name="ue1")
        base = self.user_counter("10.0.0.2")[0]
        packets = [self.udp_packet("10.0.0.2", seq=i) for i in range(self.PACKETS)]
        changes = (["--ratio", "9:1"], ["--dup", "on"], ["--dup", "off"], ["--ratio", "1:1"])
        phase = self.PACKETS // (len(changes) + 1)
        done = [threading.Event() for _ in changes]
        errors = []

        def sender():
            # Phase k (k >= 1) starts once change k-1 has completed, so every configuration
            # carries traffic however long a dcctl process takes to start on a loaded machine.
            try:
                for i, pkt in enumerate(packets):
                    k = i // phase
                    starts_phase = i % phase == 0 and 1 <= k <= len(changes)
                    if starts_phase and not done[k - 1].wait(timeout=120):
                        raise TimeoutError(f"change {k - 1} never completed")
                    self.send(SERVER, pkt)
                    time.sleep(0.004)
            except Exception as exc:  # noqa: BLE001 - reported by the main thread
                errors.append(exc)

        self.election_ids = self.client.election_id
        thread = threading.Thread(target=sender)
        thread.start()
        try:
            for step, argv in enumerate(changes):
                # Each change runs while traffic flows: halfway through its phase.
                self.wait_user_packets("10.0.0.2", base + step * phase + phase // 2)
                self.dcctl("user", "set", "ue1", *argv)
                done[step].set()
        finally:
            for event in done:  # a failed step must not leave the sender waiting
                event.set()
            thread.join()
        self.assertEqual(errors, [])
        self.client.arbitrate(self.election_ids + 1)  # primary again, for the undo
        self.wait_user_packets("10.0.0.2", base + self.PACKETS)

        # Every packet leaves on at least one leg, and each leg sends in order: once every SN
        # has arrived, so has every frame queued on a leg before the last one seen there
        # (duplicates included). Waiting for that, rather than for a quiet second, does not
        # depend on how fast a loaded machine delivers the frames.
        seen = {LEG_A: [], LEG_B: []}
        missing = set(range(self.PACKETS))
        deadline = time.monotonic() + 120
        while missing and time.monotonic() < deadline:
            for port in (LEG_A, LEG_B):
                result = self.dataplane.poll(port_number=port, timeout=0.05)
                if not isinstance(result, self.dataplane.PollFailure):
                    seen[port].append(bytes(result.packet))
                    missing.discard(sn_of(seen[port][-1]))
        for port in (LEG_A, LEG_B):  # whatever else has already arrived
            while not isinstance(
                result := self.dataplane.poll(port_number=port, timeout=0),
                self.dataplane.PollFailure,
            ):
                seen[port].append(bytes(result.packet))
        self.verify_no_other_packets()
        on_leg = {port: {} for port in seen}
        for port, frames in seen.items():
            for frame in frames:
                sn = sn_of(frame)
                self.assertNotIn(sn, on_leg[port], f"SN {sn} twice on port {port}")
                self.assertEqual(
                    frame, dc_frame(packets[sn], sn=sn), f"SN {sn} does not carry packet {sn}"
                )
                on_leg[port][sn] = frame
        all_sns = set(on_leg[LEG_A]) | set(on_leg[LEG_B])
        self.assertEqual(all_sns, set(range(self.PACKETS)), "lost or renumbered packets")
        both = set(on_leg[LEG_A]) & set(on_leg[LEG_B])
        self.assertTrue(both, "duplication was on for a while: some SNs must be on both legs")
        self.assertTrue(set(on_leg[LEG_A]) - both and set(on_leg[LEG_B]) - both)
        # Order per leg is the SN order (a switch does not reorder within a port).
        for port, frames in seen.items():
            self.assertEqual([sn_of(f) for f in frames], sorted(on_leg[port]))


class ReaddedUserStartsAtZeroTest(SplitterTest):
    """A user deleted and added again (same register index, new session) restarts at SN 0
    and batch position 0, without any register write."""

    def runTest(self):
        self.add_user("10.0.0.2", batch=4, ratio="1:3")
        for i in range(3):
            pkt = self.udp_packet("10.0.0.2", seq=i)
            self.send(SERVER, pkt)
            self.expect(LEG_A if i == 0 else LEG_B, dc_frame(pkt, sn=i))
        self.sw.del_user("10.0.0.2")
        self.add_user("10.0.0.2", batch=4, ratio="1:3")
        for i in range(2):
            pkt = self.udp_packet("10.0.0.2", seq=10 + i)
            self.send(SERVER, pkt)
            self.expect(LEG_A if i == 0 else LEG_B, dc_frame(pkt, sn=i))
        self.verify_no_other_packets()
