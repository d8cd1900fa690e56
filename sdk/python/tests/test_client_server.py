"""The client against a real Slipstream server: PythonClientIT (slipstream-cli) starts one and runs this module with
SLIPSTREAM_TEST_SERVER=1, SLIPSTREAM_SERVER and SLIPSTREAM_TOKEN (its admin's). Skipped without a server."""

import os
import sys
import unittest
import uuid
from datetime import timedelta
from pathlib import Path

import support  # noqa: F401  (the SDK from this tree)
from slipstream import Client, InvalidInput, NotFound, Unauthorized, WaitTimeout

EXAMPLE = support.SDK.parent.parent / "examples" / "python-client"
sys.path.insert(0, str(EXAMPLE))
import sweep as example  # noqa: E402  (examples/python-client/sweep.py)

SERVER = os.environ.get("SLIPSTREAM_TEST_SERVER") == "1"


def expected_loss(lr: float, steps: int) -> float:
    """What the example's job computes, computed here: the same floating-point operations in the same order."""
    xs = [i / 10 for i in range(-10, 11)]
    w = 0.0
    for _ in range(steps):
        w -= lr * sum(2 * (w * x - 3 * x) * x for x in xs) / len(xs)
    return sum((w * x - 3 * x) ** 2 for x in xs) / len(xs)


@unittest.skipUnless(SERVER, "needs a server: PythonClientIT runs these")
class ClientAgainstTheServer(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.client = Client()
        applied = cls.client.apply(Path(EXAMPLE, "sweep.yaml"))
        assert [a.kind for a in applied] == ["Workspace", "Quota", "Job"], applied

    def test_a_sweep_of_twenty_runs_with_their_own_overrides_each_gets_its_own_result(self):
        rates = [round(0.15 * (i + 1), 2) for i in range(20)]
        label = "test-" + uuid.uuid4().hex[:8]
        losses = example.sweep(self.client, rates, steps=7, label=label)
        self.assertEqual(losses, {lr: expected_loss(lr, 7) for lr in rates})

        # Its runs, found again by label, a page of 7 at a time.
        found = list(self.client.runs(selector=f"sweep={label}", page_size=7))
        self.assertEqual(len(found), 20)
        self.assertEqual(len({run.id for run in found}), 20)
        self.assertTrue(all(run.succeeded and run.workspace == "sweeps" for run in found))
        self.assertEqual(sorted(float(run.overrides["nodeGroups.main.env.LR"]) for run in found), rates)
        self.assertEqual(len(list(self.client.runs(selector=f"sweep={label},lr in (0.15,0.3)"))), 2)
        self.assertEqual(list(self.client.runs(selector=f"sweep={label}", state="FAILED")), [])

        line = next(line for line in self.client.usage(by="job", workspace="sweeps", since=timedelta(hours=1))["lines"]
                    if line.get("job") == "fit")
        self.assertGreater(line["cpuHours"]["inQuota"], 0)

    def test_a_run_is_watched_its_output_followed_it_is_cancelled_and_waited_for(self):
        command = ["sh", "-c", "for i in 1 2 3; do echo tick $i; sleep 0.2; done; sleep 300"]
        run = self.client.submit("sweeps", "fit", overrides={"nodeGroups.main.command": command})
        self.assertEqual((run.workspace, run.job, run.attempt), ("sweeps", "fit", 1))

        ticks = []
        for line in self.client.logs(run.id, follow=True):
            ticks.append(line)
            if len(ticks) == 3:
                break
        self.assertEqual([tick.split("] ", 1)[1] for tick in ticks], ["tick 1", "tick 2", "tick 3"])
        self.assertTrue(ticks[0].startswith("[main-0|"), ticks)  # each line says its instance

        with self.assertRaises(WaitTimeout) as raised:
            self.client.wait(run.id, timeout=1)
        self.assertEqual(raised.exception.run.state, "RUNNING")
        self.assertEqual(raised.exception.run.real_time_resources, "InQuota")

        self.assertTrue(self.client.cancel(run.id))
        self.assertFalse(self.client.cancel(run.id))  # already under way
        ended = self.client.wait(run.id, timeout=120)
        self.assertEqual(ended.state, "CANCELLED")
        self.assertEqual([i["state"] for i in ended.instances], ["KILLED"])
        self.assertIn("CANCELLED", [event.get("state") for event in self.client.events(run.id)])

        # The watch of a workspace sees a new run change and end.
        short = self.client.submit("sweeps", "fit", overrides={"nodeGroups.main.env.STEPS": "1"})
        last = None
        for event in self.client.watch(workspace="sweeps", timeout=60):
            if event.type == "ready":
                last = self.client.run(short.id)  # it may have ended before the stream began: only changes follow
            elif event.type == "run" and event.id == short.id:
                last = event.run
            if last is not None and last.done:
                break
        self.assertEqual(last.state, "SUCCEEDED")

    def test_bad_input_raises_the_servers_problem_list(self):
        with self.assertRaises(InvalidInput) as raised:
            self.client.submit("sweeps", "fit", labels={"team": {"not": "a string"}}, overrides={"nodeGroups.nope.replicas": 2})
        fields = {problem.field for problem in raised.exception.problems}
        self.assertIn("labels.team", fields)

        with self.assertRaises(InvalidInput) as raised:
            self.client.submit("sweeps", "fit", overrides={"nodeGroups.nope.replicas": 2})
        self.assertEqual(raised.exception.problems[0].field, "overrides.nodeGroups.nope.replicas")

        with self.assertRaises(InvalidInput) as raised:
            self.client.apply({"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "x", "workspace": "sweeps"},
                               "spec": {"nodeGroups": [{"name": "a", "replicas": -1, "command": ["true"], "resources": {"cpu": 1}}]}})
        self.assertIn("spec.nodeGroups[0].replicas", {problem.field for problem in raised.exception.problems})

        with self.assertRaises(InvalidInput) as raised:
            self.client.apply({"apiVersion": "slipstream/v1", "kind": "Job", "metadata": {"name": "x", "workspace": "sweeps"},
                               "spec": {"identity": {"audiences": ["vault", 42], "ttl": "2d"},
                                        "nodeGroups": [{"name": "a", "command": ["true"], "resources": {"cpu": 1, "memory": "1Gi"}}]}})
        problems = {problem.field: problem.message for problem in raised.exception.problems}
        self.assertIn("string", problems.get("spec.identity.audiences[1]", ""), problems)
        self.assertIn("between 5m and 1d", problems.get("spec.identity.ttl", ""), problems)

        with self.assertRaises(InvalidInput) as raised:
            list(self.client.runs(state="SLEEPING"))
        self.assertEqual(raised.exception.problems[0].field, "state")

        with self.assertRaises(NotFound):
            self.client.run("fit-doesnotexist")
        with self.assertRaises(Unauthorized):
            Client(token="not-a-token").run("fit-doesnotexist")

    def test_what_is_applied_again_is_unchanged_and_quotas_show_their_status(self):
        again = self.client.apply(Path(EXAMPLE, "sweep.yaml"), dry_run=True)
        self.assertEqual({a.action for a in again}, {"unchanged"})
        quota = next(q for q in self.client.quotas("sweeps") if q["metadata"]["name"] == "cpus")
        self.assertIn("used", quota["status"])
        self.assertEqual(self.client.whoami()["admin"], True)


if __name__ == "__main__":
    unittest.main()
