"""The client's own behaviour, against a scripted HTTP server: where it takes the server and token from, how every
kind of answer becomes a result or a typed error, the store-outage retry, the event stream's framing. The client
against the real server: test_client_server.py (PythonClientIT runs it)."""

import http.server
import json
import os
import tempfile
import threading
import unittest
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path
from unittest import mock

import support  # noqa: F401  (the SDK from this tree)
from slipstream import (Client, Conflict, Forbidden, InvalidInput, NotFound, Problem, ServerError, SlipstreamError,
                        SlipstreamWarning, TooManyRequests, Unauthorized, Unavailable, Unreachable)
from slipstream._http import Transport
from slipstream.client import _instant, _time


class Scripted(http.server.BaseHTTPRequestHandler):
    """Answers each request with the next of ``answers``: (status, headers, body bytes); records what came."""

    answers = []
    seen = []

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        Scripted.seen.append((self.command, self.path, dict(self.headers), self.rfile.read(length)))
        status, headers, body = Scripted.answers.pop(0)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


def answer(status, body=None, headers=None):
    data = body if isinstance(body, bytes) else (b"" if body is None else json.dumps(body).encode())
    return status, {"Content-Type": "application/json", **(headers or {})}, data


def scripted_server():
    """A started scripted server with nothing scripted yet; its address."""
    Scripted.answers, Scripted.seen = [], []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}"


def stop(server):
    server.shutdown()
    server.server_close()


class ClientAgainstAScriptedServer(unittest.TestCase):
    def setUp(self):
        self.server, self.url = scripted_server()
        self.client = Client(self.url, token="t0ken")

    def tearDown(self):
        stop(self.server)

    def test_a_rejected_submission_raises_the_problem_list_never_a_bare_http_error(self):
        Scripted.answers = [answer(400, {"status": 400, "code": "INVALID_INPUT", "message": "the run is invalid",
                                         "problems": [{"field": "labels.team", "message": "must be a string"},
                                                      {"field": "overrides.x", "message": "is not a path"}]})]
        with self.assertRaises(InvalidInput) as raised:
            self.client.submit("a", "j", labels={"team": 3})
        error = raised.exception
        self.assertEqual((error.status, error.code), (400, "INVALID_INPUT"))
        self.assertEqual(error.problems, [Problem("labels.team", "must be a string"), Problem("overrides.x", "is not a path")])
        self.assertEqual(error.problem("overrides.x").message, "is not a path")
        self.assertIn("labels.team: must be a string", str(error))
        method, path, headers, body = Scripted.seen[0]
        self.assertEqual((method, path), ("POST", "/api/v1/runs"))
        self.assertEqual(headers["Authorization"], "Bearer t0ken")
        self.assertTrue(headers["Idempotency-Key"])
        self.assertEqual(json.loads(body), {"workspace": "a", "job": "j", "labels": {"team": 3}})

    def test_each_status_is_its_own_error_and_an_answer_that_is_not_the_apis_is_one_too(self):
        cases = [(401, Unauthorized), (403, Forbidden), (404, NotFound), (409, Conflict), (422, Conflict), (429, TooManyRequests),
                 (500, ServerError), (503, Unavailable)]
        for status, kind in cases:
            Scripted.answers = [answer(status, {"status": status, "code": "X", "message": "no"})]
            with self.assertRaises(kind):
                self.client.run("r-1")
        Scripted.answers = [answer(502, b"<html>bad gateway</html>", {"Content-Type": "text/html"})]
        with self.assertRaises(ServerError) as raised:
            self.client.run("r-1")
        self.assertEqual((raised.exception.code, raised.exception.message), ("HTTP_502", "<html>bad gateway</html>"))
        Scripted.answers = [answer(200, b"not json", {"Content-Type": "text/plain"})]
        with self.assertRaises(SlipstreamError) as raised:
            self.client.run("r-1")
        self.assertEqual(raised.exception.code, "NOT_THE_API")

    def test_answers_of_the_wrong_shape_are_not_the_api_never_a_python_error(self):
        nested = b"[" * 200_000 + b"]" * 200_000
        calls = [(lambda: self.client.run("r-1"), answer(200, [])),
                 (lambda: self.client.run("r-1"), answer(200, {})),
                 (lambda: self.client.run("r-1"), answer(200, {"id": "r-1", "attempt": "x"})),
                 (lambda: self.client.run("r-1"), answer(200, {"id": "r-1", "createdAt": "yesterday"})),
                 (lambda: self.client.run("r-1"), answer(200, nested)),
                 (lambda: self.client.cancel("r-1"), answer(200, b"")),
                 (lambda: self.client.apply({"kind": "Job"}), answer(200, {"items": [1]})),
                 (lambda: list(self.client.runs()), answer(200, {"items": "no"})),
                 (lambda: self.client.quotas(), answer(200, {"items": None}))]
        for call, given in calls:
            Scripted.answers = [given]
            with self.assertRaises(SlipstreamError, msg=given[2][:60]) as raised:
                call()
            self.assertEqual(raised.exception.code, "NOT_THE_API")
        Scripted.answers = [answer(404, nested)]
        with self.assertRaises(NotFound):
            self.client.run("r-1")
        Scripted.answers = [answer(400, {"status": 400, "code": "INVALID_INPUT", "message": "bad", "problems": 5})]
        with self.assertRaises(InvalidInput) as raised:
            self.client.run("r-1")
        self.assertEqual(raised.exception.problems, [])

    def test_wait_looks_again_after_a_pause_when_its_stream_ends_early_or_is_refused(self):
        running, done = {"id": "r-1", "state": "RUNNING"}, {"id": "r-1", "state": "SUCCEEDED"}
        ended = (200, {"Content-Type": "text/event-stream"}, b"event: end\ndata: {\"reason\": \"replaced\"}\n\n")
        refused = answer(429, {"status": 429, "code": "TOO_MANY_STREAMS", "message": "the server serves 64 streams"})
        Scripted.answers = [answer(200, running), ended, answer(200, running), refused, answer(200, done)]
        with mock.patch("slipstream.client.time.sleep") as sleep:
            self.assertEqual(self.client.wait("r-1", timeout=60).state, "SUCCEEDED")
        self.assertEqual([c.args[0] for c in sleep.call_args_list], [1.0, 2.0])
        self.assertEqual([path.split("?")[0] for _, path, _, _ in Scripted.seen],
                         ["/api/v1/runs/r-1", "/api/v1/watch", "/api/v1/runs/r-1", "/api/v1/watch", "/api/v1/runs/r-1"])

    def test_wait_sees_the_run_end_on_its_stream(self):
        stream = (b"event: ready\ndata: {\"runs\": 1}\n\n: heartbeat\n\nevent: run\nid: other\ndata: {\"id\": \"other\", \"state\": \"FAILED\"}\n\n"
                  b"event: run\nid: r-1\ndata: {\"id\": \"r-1\", \"state\": \"CANCELLED\"}\n\n")
        running = answer(200, {"id": "r-1", "state": "RUNNING"})
        Scripted.answers = [running, (200, {"Content-Type": "text/event-stream"}, stream), running,
                            answer(200, {"id": "r-1", "state": "CANCELLED", "instances": [{"state": "KILLED"}]})]
        ended = self.client.wait("r-1")
        self.assertEqual((ended.state, ended.instances), ("CANCELLED", [{"state": "KILLED"}]))
        self.assertIn("run=r-1", Scripted.seen[1][1])

    def test_a_run_id_stays_one_path_segment(self):
        for bad in ["", ".", ".."]:
            with self.assertRaises(ValueError, msg=bad):
                self.client.cancel(bad)
        self.assertEqual(Scripted.seen, [])
        Scripted.answers = [answer(404, {"status": 404, "code": "NOT_FOUND", "message": "run ../tokens not found"})]
        with self.assertRaises(NotFound):
            self.client.run("../tokens")
        self.assertEqual(Scripted.seen[0][1], "/api/v1/runs/..%2Ftokens")

    def test_runs_follow_the_pages_and_stop_at_the_limit(self):
        run = {"id": "r-{}", "workspace": "a", "job": "j", "state": "QUEUED", "createdAt": "2026-12-06T10:00:00.123456789Z"}
        page = lambda ids, nxt: answer(200, {"items": [dict(run, id=f"r-{i}") for i in ids], "next": nxt})  # noqa: E731
        Scripted.answers = [page([1, 2], "c1"), page([3, 4], "c2"), page([5], None)]
        ids = [r.id for r in self.client.runs(workspace="a", state=["QUEUED", "RUNNING"], selector="sweep=s1", page_size=2)]
        self.assertEqual(ids, ["r-1", "r-2", "r-3", "r-4", "r-5"])
        self.assertIn("state=QUEUED%2CRUNNING", Scripted.seen[0][1])
        self.assertIn("labelSelector=sweep%3Ds1", Scripted.seen[0][1])
        self.assertIn("before=c1", Scripted.seen[1][1])

        Scripted.answers, Scripted.seen = [page([1, 2], "c1"), page([3], "c2")], []
        self.assertEqual(len(list(self.client.runs(limit=3, page_size=2))), 3)
        self.assertIn("limit=1", Scripted.seen[1][1])

    def test_the_servers_warnings_are_issued_and_kept_with_the_run(self):
        Scripted.answers = [answer(201, {"id": "r-1", "state": "QUEUED"},
                                   {"Warning": '299 slipstream "this run cannot start even with the whole cluster \\"idle\\""'})]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run = self.client.submit("a", "j")
        self.assertEqual(run.warnings, ['this run cannot start even with the whole cluster "idle"'])
        self.assertEqual([type(w.message) for w in caught], [SlipstreamWarning])

    def test_events_are_framed_as_the_server_sends_them(self):
        stream = (b"event: ready\ndata: {\"runs\": 1}\n\n: heartbeat\n\n"
                  b"event: run\nid: r-1\ndata: {\"id\": \"r-1\", \"state\": \"RUNNING\"}\n\n"
                  b"event: gone\nid: r-1\ndata: {\"id\": \"r-1\"}\n\n"
                  b"event: end\ndata: {\"reason\": \"timeout\"}\n\nevent: run\ndata: {\"id\": \"after-end\"}\n\n")
        Scripted.answers = [(200, {"Content-Type": "text/event-stream"}, stream)]
        events = list(self.client.watch(workspace="a", timeout=5))
        self.assertEqual([(e.type, e.id) for e in events], [("ready", None), ("run", "r-1"), ("gone", "r-1"), ("end", None)])
        self.assertEqual(events[1].run.state, "RUNNING")
        self.assertEqual(events[3].data, {"reason": "timeout"})

    def test_a_redirect_is_not_followed_so_the_token_goes_nowhere_else(self):
        elsewhere = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        threading.Thread(target=elsewhere.serve_forever, args=(0.05,), daemon=True).start()
        try:
            Scripted.answers = [answer(302, b"", {"Location": f"http://127.0.0.1:{elsewhere.server_port}/steal"}),
                                answer(200, {"id": "r-1"})]
            with self.assertRaises(SlipstreamError) as raised:
                self.client.run("r-1")
            self.assertEqual(raised.exception.code, "HTTP_302")
            self.assertEqual(len(Scripted.seen), 1)  # the other server was never asked
        finally:
            elsewhere.shutdown()
            elsewhere.server_close()

    def test_logs_come_line_by_line(self):
        Scripted.answers = [(200, {"Content-Type": "text/plain"}, b"[w-0] one\n[w-0] two\n")]
        self.assertEqual(list(self.client.logs("r-1", "w-0", prefix=False)), ["[w-0] one", "[w-0] two"])
        self.assertIn("instance=w-0", Scripted.seen[0][1])
        self.assertIn("prefix=false", Scripted.seen[0][1])


class StoreOutage(unittest.TestCase):
    def setUp(self):
        self.server, self.url = scripted_server()
        self.now = 0.0
        self.slept = []

    def tearDown(self):
        stop(self.server)

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds

    def transport(self):
        return Transport(self.url, None, 5, sleep=self.sleep, clock=lambda: self.now)

    def test_a_request_is_sent_again_after_the_servers_retry_after_while_the_store_is_away(self):
        away = answer(503, {"status": 503, "code": "STORE_UNAVAILABLE", "message": "the store cannot be reached"},
                      {"Retry-After": "3"})
        Scripted.answers = [away, away, answer(200, {"items": []})]
        self.assertEqual(self.transport().request("GET", "/api/v1/runs").body, {"items": []})
        self.assertEqual(self.slept, [3.0, 3.0])

    def test_it_gives_up_after_two_minutes(self):
        away = answer(503, {"status": 503, "code": "STORE_UNAVAILABLE", "message": "the store cannot be reached"},
                      {"Retry-After": "10"})
        Scripted.answers = [away] * 20
        with self.assertRaises(Unavailable) as raised:
            self.transport().request("GET", "/api/v1/runs")
        self.assertIn("still unavailable after 120 s", str(raised.exception))
        self.assertEqual(sum(self.slept), 120.0)

    def test_another_503_is_not_waited_for(self):
        Scripted.answers = [answer(503, {"status": 503, "code": "NOT_LEADER", "message": "not the leader"})]
        with self.assertRaises(Unavailable):
            self.transport().request("GET", "/api/v1/runs")
        self.assertEqual(self.slept, [])


class WhereTheClientLooks(unittest.TestCase):
    def test_server_and_token_come_from_the_arguments_the_environment_or_the_data_dir(self):
        with tempfile.TemporaryDirectory() as directory:
            Path(directory, "admin.token").write_text("from-file\n")
            with mock.patch.dict(os.environ, {"SLIPSTREAM_SERVER": "http://example.test:9", "SLIPSTREAM_DATA_DIR": directory},
                                 clear=False):
                os.environ.pop("SLIPSTREAM_TOKEN", None)
                client = Client()
                self.assertEqual(client.server, "http://example.test:9")
                self.assertEqual(client._http._token, "from-file")
                with mock.patch.dict(os.environ, {"SLIPSTREAM_TOKEN": " from-env "}):
                    self.assertEqual(Client()._http._token, "from-env")
                    self.assertEqual(Client("http://other:1/", token="given")._http._token, "given")
                    self.assertEqual(Client("http://other:1/").server, "http://other:1")

    def test_a_server_that_is_not_a_url_is_refused_at_once(self):
        for bad in ["127.0.0.1:8080", "ftp://x", "http://x/path", "http://", "http://alice:hunter2@host"]:
            with self.assertRaises(ValueError, msg=bad):
                Client(bad, token="t")

    def test_a_token_with_a_line_break_is_refused_without_being_shown(self):
        with self.assertRaises(ValueError) as raised:
            Client("http://127.0.0.1:1", token="secret-part\nX-Evil: 1")
        self.assertNotIn("secret-part", str(raised.exception))

    def test_no_proxy_from_the_environment_gets_the_requests(self):
        Scripted.answers, Scripted.seen = [answer(200, {"id": "r-1", "state": "QUEUED"})], []
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        for each in (server, proxy):
            threading.Thread(target=each.serve_forever, args=(0.05,), daemon=True).start()
        try:
            address = f"http://127.0.0.1:{proxy.server_port}"
            with mock.patch.dict(os.environ, {"http_proxy": address, "HTTP_PROXY": address, "no_proxy": "", "NO_PROXY": ""}):
                self.assertEqual(Client(f"http://127.0.0.1:{server.server_port}", token="t").run("r-1").id, "r-1")
            self.assertEqual(Scripted.seen[0][1], "/api/v1/runs/r-1")  # a proxy would have been asked for the full URL
        finally:
            for each in (server, proxy):
                each.shutdown()
                each.server_close()

    def test_nothing_listening_is_unreachable_not_a_socket_error(self):
        with self.assertRaises(Unreachable) as raised:
            Client("http://127.0.0.1:1", token="t").run("r-1")
        self.assertIn("nothing listens there", str(raised.exception))


class Values(unittest.TestCase):
    def test_instants_with_nanoseconds_are_read(self):
        self.assertEqual(_instant("2026-12-06T10:00:00.123456789Z"), datetime(2026, 12, 6, 10, 0, 0, 123456, timezone.utc))
        self.assertEqual(_instant("2026-12-06T10:00:00Z"), datetime(2026, 12, 6, 10, 0, 0, tzinfo=timezone.utc))
        self.assertEqual(_instant("2026-12-06T10:00:00.5Z"), datetime(2026, 12, 6, 10, 0, 0, 500000, timezone.utc))
        self.assertIsNone(_instant(None))

    def test_times_are_written_as_the_api_reads_them(self):
        self.assertEqual(_time(timedelta(hours=2)), "7200s")
        self.assertEqual(_time(datetime(2026, 12, 6, 11, 0, tzinfo=timezone(timedelta(hours=1)))), "2026-12-06T10:00:00.000000Z")
        self.assertEqual(_time("2h"), "2h")
        with self.assertRaises(TypeError):
            _time(42)


if __name__ == "__main__":
    unittest.main()
