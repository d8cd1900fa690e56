import os
import signal
import subprocess
import sys
import tempfile
import unittest
from datetime import datetime, timezone
from pathlib import Path

import support  # noqa: F401  (the SDK from this tree)
from support import SDK, MovingClock
from slipstream import Slipstream
from slipstream.preemption import Notice, Preemption, parse_notice


class NoticeTest(unittest.TestCase):
    def test_the_notice_is_parsed_and_anything_unreadable_is_still_a_stop_request(self):
        deadline = datetime(2026, 11, 29, 10, 0, 30, tzinfo=timezone.utc)
        cases = {
            '{"reason":"Reclaimed by team-a","deadline":"2026-11-29T10:00:30Z"}\n': Notice("Reclaimed by team-a", deadline),
            '{"reason":"r","deadline":"2026-11-29T10:00:30.000000001Z"}': Notice("r", deadline),
            '{"reason":"r","deadline":"2026-11-29T10:00:30.5Z"}': Notice("r", deadline.replace(microsecond=500000)),
            '{"reason":"r","deadline":"2026-11-29T12:00:30+02:00"}': Notice("r", deadline),
            '{"reason":"r","deadline":"2026-11-29T10:00:30"}': Notice("r", None),  # no offset: no instant
            '{"reason":"r","deadline":"soon"}': Notice("r", None),
            '{"reason":"r","deadline":1764410430}': Notice("r", None),
            '{"deadline":"2026-11-29T10:00:30Z"}': Notice("stop requested", deadline),
            '{"reason":42}': Notice("42", None),
            "{not json": Notice("stop requested", None),
            "[1, 2]": Notice("stop requested", None),
            "": Notice("stop requested", None),
        }
        for text, notice in cases.items():
            with self.subTest(text):
                self.assertEqual(parse_notice(text), notice)

    def test_the_reason_tells_a_change_of_world_and_a_shrink_from_a_stop(self):
        cases = {  # reason: (world_changing, shrunk)
            "WorldChange: the run shrinks from 4 to 2 instances (world 2)": (True, False),
            "WorldChange:": (True, False),
            "Shrunk: the run shrinks from 4 to 2 instances (world 2)": (False, True),
            "Preempted: reclaimed by team-a": (False, False),
            "Cancelled by alice": (False, False),
            "worldchange: lower case is another reason": (False, False),
            "Reclaimed; WorldChange: not at the start": (False, False),
            "stop requested": (False, False),
        }
        for reason, (world_changing, shrunk) in cases.items():
            with self.subTest(reason):
                notice = parse_notice(f'{{"reason":"{reason}","deadline":"2026-11-29T10:00:30Z"}}')
                self.assertEqual((notice.world_changing, notice.shrunk), (world_changing, shrunk))

    def test_the_notice_file_is_read_and_the_acknowledgement_written(self):
        with tempfile.TemporaryDirectory() as tmp:
            notice, ack = Path(tmp) / "preemption_notice.json", Path(tmp) / "preemption_ack"
            preemption = Slipstream({"SLIPSTREAM_PREEMPTION_NOTICE_FILE": str(notice),
                                     "SLIPSTREAM_PREEMPTION_ACK_FILE": str(ack)}, MovingClock()).preemption
            self.assertIsNone(preemption.notice())
            self.assertFalse(preemption.requested)

            notice.write_text('{"reason":"Reclaimed by team-a","deadline":"2026-11-29T10:00:30Z"}\n')
            self.assertEqual(preemption.notice().reason, "Reclaimed by team-a")
            self.assertTrue(preemption.requested)
            self.assertFalse(preemption.stop_requested.is_set())  # only SIGTERM sets the event

            preemption.acknowledge()
            self.assertEqual(ack.read_text(), "2026-11-29T10:00:00Z\n")

    def test_outside_slipstream_there_is_no_notice_and_nothing_to_acknowledge(self):
        preemption = Slipstream.of({}).preemption
        self.assertIsNone(preemption.notice())
        preemption.acknowledge()

    def test_an_acknowledgement_that_cannot_be_written_is_no_failure(self):
        Preemption(None, "/nonexistent-directory/ack").acknowledge()

    def test_one_slipstream_has_one_preemption(self):
        slipstream = Slipstream.of({})
        self.assertIs(slipstream.preemption, slipstream.preemption)


# A training loop of the recommended style: it checks the event each step, saves, acknowledges and exits 0.
LOOP = r"""
import sys, time
from slipstream import Slipstream
slipstream = Slipstream.from_environment()
preemption = slipstream.preemption
checkpoints = slipstream.checkpoints(keep=2)
preemption.watch()
print("ready", flush=True)
step = 0
while step < 100000:
    step += 1
    time.sleep(0.001)  # a training step
    if preemption.stop_requested.is_set():
        checkpoints.save(step, b"state")
        print("notice:", preemption.notice().reason, flush=True)
        preemption.acknowledge()
        sys.exit(0)
sys.exit(3)
"""

# The callback style: the handler calls back, and acknowledges even though the callback exits.
CALLBACK = r"""
import sys, time
from slipstream import Slipstream
slipstream = Slipstream.from_environment()
def save_and_exit(notice):
    print("callback:", notice.reason, notice.deadline, flush=True)
    sys.exit(0)
slipstream.preemption.on_stop(save_and_exit)
print("ready", flush=True)
time.sleep(60)
sys.exit(3)
"""


class SigtermTest(unittest.TestCase):
    def stop(self, code, notice_text=None):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        directory = Path(tmp.name)
        notice, ack = directory / "notice.json", directory / "ack"
        env = dict(os.environ, PYTHONPATH=str(SDK), SLIPSTREAM_PREEMPTION_NOTICE_FILE=str(notice),
                   SLIPSTREAM_PREEMPTION_ACK_FILE=str(ack), SLIPSTREAM_CHECKPOINT_DIR=str(directory / "ckpt"))
        process = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: process.poll() is None and process.kill())
        self.assertEqual(process.stdout.readline(), "ready\n")
        if notice_text is not None:
            notice.write_text(notice_text)  # as the platform does: the notice first, then SIGTERM
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
        return process.returncode, out, err, ack, directory / "ckpt"

    def test_sigterm_sets_the_event_and_the_loop_saves_acknowledges_and_exits(self):
        code, out, err, ack, ckpt = self.stop(LOOP, '{"reason":"Preempted","deadline":"2026-11-29T10:00:30Z"}')
        self.assertEqual(code, 0, err)
        self.assertIn("notice: Preempted", out)
        self.assertTrue(ack.exists())
        self.assertEqual(len(os.listdir(ckpt)), 1)

    def test_on_stop_calls_back_with_the_notice_then_acknowledges(self):
        code, out, err, ack, _ = self.stop(CALLBACK)
        self.assertEqual(code, 0, err)
        self.assertIn("callback: terminated None", out)  # a plain SIGTERM: no notice file
        self.assertTrue(ack.exists())

    def test_handlers_are_installed_from_the_main_thread_only(self):
        import threading

        errors = []
        preemption = Preemption()
        thread = threading.Thread(target=lambda: errors.append(self._install(preemption)))
        thread.start()
        thread.join()
        self.assertIsInstance(errors[0], ValueError)

    @staticmethod
    def _install(preemption):
        try:
            preemption.watch()
        except ValueError as e:
            return e
        return None


if __name__ == "__main__":
    unittest.main()
