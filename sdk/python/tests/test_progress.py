import http.server
import io
import json
import os
import queue
import tempfile
import threading
import unittest
from contextlib import redirect_stderr
from datetime import datetime, timezone
from pathlib import Path

import support  # noqa: F401  (the SDK from this tree)
from support import MovingClock
from slipstream import Slipstream
from slipstream._files import iso_instant
from slipstream.progress import Progress, ProgressApi


class ProgressFileTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.file = Path(self._tmp.name) / "progress.json"
        self.clock = MovingClock()

    def tearDown(self):
        self._tmp.cleanup()

    def read(self):
        text = self.file.read_text()
        self.assertTrue(text.endswith("}\n"))
        return json.loads(text)

    def test_reports_are_written_at_most_once_a_second(self):
        progress = Progress(self.file, clock=self.clock)
        progress.report(1, {"loss": 2.5, "nan": float("nan"), "inf": float("inf"), "none": None})
        self.assertEqual(self.read(), {"step": 1, "time": "2026-11-29T10:00:00Z", "metrics": {"loss": 2.5}})

        self.clock.advance(0.999)
        progress.report(2, {"loss": 2.0})
        self.assertEqual(self.read()["step"], 1)

        self.clock.advance(0.001)
        progress.report(3, {"loss": 1.5, "accuracy": 1})
        self.assertEqual(self.read(), {"step": 3, "time": "2026-11-29T10:00:01Z",
                                       "metrics": {"loss": 1.5, "accuracy": 1.0}})
        self.assertEqual(os.listdir(self._tmp.name), ["progress.json"])  # no temporary file left

    def test_a_checkpoint_is_written_at_once_and_stays_in_later_reports(self):
        progress = Progress(self.file, clock=self.clock)
        progress.report(7, {"loss": 0.5})
        progress.checkpointed(8)  # within the same second: still written
        self.assertEqual(self.read(), {"step": 8, "time": "2026-11-29T10:00:00Z", "checkpointStep": 8,
                                       "checkpointTime": "2026-11-29T10:00:00Z", "metrics": {}})
        self.clock.advance(2)
        progress.report(9)
        self.assertEqual(self.read(), {"step": 9, "time": "2026-11-29T10:00:02Z", "checkpointStep": 8,
                                       "checkpointTime": "2026-11-29T10:00:00Z", "metrics": {}})

    def test_a_checkpoint_older_than_the_step_does_not_move_the_step_back(self):
        progress = Progress(self.file, clock=self.clock)
        progress.report(50)
        progress.checkpointed(40)
        self.assertEqual((self.read()["step"], self.read()["checkpointStep"]), (50, 40))

    def test_a_save_through_slipstream_is_reported(self):
        slipstream = Slipstream({"SLIPSTREAM_PROGRESS_FILE": str(self.file),
                                 "SLIPSTREAM_CHECKPOINT_DIR": str(Path(self._tmp.name) / "ckpt")}, self.clock)
        slipstream.checkpoints(1).save(12, b"")
        self.assertEqual(self.read()["checkpointStep"], 12)

    def test_a_checkpoint_reported_from_a_signal_handler_in_the_middle_of_a_report_does_not_deadlock(self):
        progress = None

        def clock_interrupted_by_on_stop():  # as if SIGTERM came while report() held the lock
            if not interrupted:
                interrupted.append(True)
                progress.checkpointed(5)
            return self.clock()

        interrupted = []
        progress = Progress(self.file, clock=clock_interrupted_by_on_stop)
        thread = threading.Thread(target=progress.report, args=(4,), daemon=True)
        thread.start()
        thread.join(timeout=30)
        self.assertFalse(thread.is_alive(), "report() deadlocked on its own lock")
        self.assertEqual(interrupted, [True])

    def test_a_metric_that_is_no_number_is_named(self):
        with self.assertRaisesRegex(TypeError, "'lr'"):
            Progress(self.file, clock=self.clock).report(1, {"lr": "fast"})

    def test_outside_slipstream_reports_go_nowhere(self):
        slipstream = Slipstream.of({})
        slipstream.progress.report(1, {"loss": 1.0})
        slipstream.progress.checkpointed(1)
        self.assertIsNone(slipstream.progress.file)


class InstantTest(unittest.TestCase):
    def test_times_are_written_as_javas_instant_writes_them(self):
        cases = {
            datetime(2026, 11, 29, 10, 0, 0, tzinfo=timezone.utc): "2026-11-29T10:00:00Z",
            datetime(2026, 11, 29, 10, 0, 0, 120000, tzinfo=timezone.utc): "2026-11-29T10:00:00.120Z",
            datetime(2026, 11, 29, 10, 0, 0, 123456, tzinfo=timezone.utc): "2026-11-29T10:00:00.123456Z",
            datetime.fromisoformat("2026-11-29T12:00:00+02:00"): "2026-11-29T10:00:00Z",
        }
        for moment, text in cases.items():
            with self.subTest(text):
                self.assertEqual(iso_instant(moment), text)
        with self.assertRaisesRegex(ValueError, "naive"):
            iso_instant(datetime(2026, 1, 1))


class Recorder(http.server.BaseHTTPRequestHandler):
    received: "queue.Queue"
    status = 204

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.put((self.command, self.path, self.headers["Authorization"], self.headers["Content-Type"], body))
        self.send_response(self.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class ProgressApiTest(unittest.TestCase):
    def serve(self, status=204):
        received = queue.Queue()
        handler = type("Handler", (Recorder,), {"received": received, "status": status})
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(thread.join)
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        return f"http://127.0.0.1:{server.server_address[1]}/", received

    def test_without_a_file_reports_go_to_the_api_with_the_runs_token(self):
        url, received = self.serve()
        slipstream = Slipstream({"SLIPSTREAM_RUN_ID": "train-x1", "SLIPSTREAM_RANK": "2", "SLIPSTREAM_SERVER": url,
                                 "SLIPSTREAM_RUN_TOKEN": "ss_secret"}, MovingClock())
        slipstream.progress.checkpointed(40)
        method, path, authorization, content_type, body = received.get(timeout=10)
        self.assertEqual((method, path), ("POST", "/api/v1/runs/train-x1/instances/2/progress"))
        self.assertEqual(authorization, "Bearer ss_secret")
        self.assertEqual(content_type, "application/json")
        self.assertEqual(json.loads(body), {"step": 40, "time": "2026-11-29T10:00:00Z", "checkpointStep": 40,
                                            "checkpointTime": "2026-11-29T10:00:00Z", "metrics": {}})

    def test_a_refusal_is_warned_once_and_never_raised(self):
        url, received = self.serve(status=403)
        clock = MovingClock()
        progress = Progress(None, ProgressApi(url, "r", 0, "t"), clock)
        errors = io.StringIO()
        with redirect_stderr(errors):
            progress.report(1)
            clock.advance(1)
            progress.report(2)
        self.assertEqual(received.qsize(), 2)
        self.assertEqual(errors.getvalue().count("slipstream sdk:"), 1)
        self.assertIn("(403)", errors.getvalue())

    def test_a_server_that_cannot_be_reached_does_not_fail_the_workload(self):
        progress = Progress(None, ProgressApi("http://127.0.0.1:1", "r", 0, "t"), MovingClock())
        errors = io.StringIO()
        with redirect_stderr(errors):
            progress.checkpointed(1)
            progress.checkpointed(2)
        self.assertEqual(errors.getvalue().count("cannot reach the server"), 1)

    def test_the_api_needs_server_token_and_run(self):
        for missing in ("SLIPSTREAM_SERVER", "SLIPSTREAM_RUN_TOKEN", "SLIPSTREAM_RUN_ID"):
            env = {"SLIPSTREAM_RUN_ID": "r", "SLIPSTREAM_SERVER": "http://127.0.0.1:1", "SLIPSTREAM_RUN_TOKEN": "t"}
            del env[missing]
            errors = io.StringIO()
            with self.subTest(missing), redirect_stderr(errors):
                Slipstream.of(env).progress.checkpointed(1)  # nowhere to send: no request, so no warning
                self.assertEqual(errors.getvalue(), "")

    def test_a_progress_file_is_preferred_to_the_api(self):
        url, received = self.serve()
        with tempfile.TemporaryDirectory() as tmp:
            file = Path(tmp) / "progress.json"
            Slipstream({"SLIPSTREAM_RUN_ID": "r", "SLIPSTREAM_SERVER": url, "SLIPSTREAM_RUN_TOKEN": "t",
                        "SLIPSTREAM_PROGRESS_FILE": str(file)}, MovingClock()).progress.checkpointed(3)
            self.assertEqual(json.loads(file.read_text())["checkpointStep"], 3)
        self.assertTrue(received.empty())


if __name__ == "__main__":
    unittest.main()
