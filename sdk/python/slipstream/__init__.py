"""What a workload running under Slipstream can ask of the platform, from the variables every instance gets.

docs/fault-tolerance.md describes the contract; this package follows it as the Java SDK (slipstream-sdk) does, with
the standard library only::

    from slipstream import Slipstream

    slipstream = Slipstream.from_environment()
    checkpoints = slipstream.checkpoints(keep=3)
    latest = checkpoints.latest()
    start = latest.step if latest else 0
    slipstream.preemption.watch()                     # SIGTERM sets slipstream.preemption.stop_requested
    slipstream.progress.report(step, {"loss": loss})  # at most one write a second

Importing it never imports PyTorch; ``slipstream.torch`` does, when used.

``Client`` is the other side: submitting, watching and cancelling runs from a script or a notebook (docs/python.md)::

    from slipstream import Client

    client = Client()
    run = client.wait(client.submit("team-a", "train", overrides={"nodeGroups.worker.env.LR": "0.01"}).id)
"""

import json
import os
from pathlib import Path
from typing import Mapping, Optional

from ._env import Environment
from .checkpoints import Checkpoint, Checkpoints
from .client import Applied, Client, Run, SlipstreamWarning, WatchEvent
from .errors import (Conflict, Forbidden, InvalidInput, NotFound, Problem, ServerError, SlipstreamError, TooManyRequests,
                     Unauthorized, Unavailable, Unreachable, WaitTimeout)
from .metadata import Address, ClusterMetadata, Instance, MetadataError, Storage
from .preemption import Notice, Preemption
from .progress import Clock, Progress, ProgressApi, utc_now

__all__ = ["Slipstream", "Checkpoint", "Checkpoints", "ClusterMetadata", "Instance", "Address", "Storage",
           "MetadataError", "Notice", "Preemption", "Progress",
           "Client", "Run", "Applied", "WatchEvent", "SlipstreamWarning", "Problem", "SlipstreamError", "InvalidInput",
           "Unauthorized", "Forbidden", "NotFound", "Conflict", "TooManyRequests", "ServerError", "Unavailable",
           "Unreachable", "WaitTimeout"]
__version__ = "0.1.0"


class Slipstream:
    def __init__(self, variables: Mapping[str, str], clock: Clock = utc_now):
        self._env = Environment(variables)
        progress_file = self._env.path("SLIPSTREAM_PROGRESS_FILE")
        self._progress = Progress(progress_file, None if progress_file is not None else _api(self._env), clock)
        self._preemption = Preemption(self._env.path("SLIPSTREAM_PREEMPTION_NOTICE_FILE"),
                                      self._env.path("SLIPSTREAM_PREEMPTION_ACK_FILE"), clock)

    @classmethod
    def from_environment(cls) -> "Slipstream":
        return cls(os.environ)

    @classmethod
    def of(cls, variables: Mapping[str, str]) -> "Slipstream":
        """For tests and for programs that pass the environment around."""
        return cls(variables)

    @property
    def managed(self) -> bool:
        """Whether this process runs as an instance of a Slipstream run."""
        return self._env.get("SLIPSTREAM_RUN_ID") is not None

    @property
    def run_id(self) -> Optional[str]:
        return self._env.get("SLIPSTREAM_RUN_ID")

    @property
    def rank(self) -> int:
        return self._env.integer("SLIPSTREAM_RANK", 0)

    @property
    def world_size(self) -> int:
        return self._env.integer("SLIPSTREAM_WORLD_SIZE", 1)

    @property
    def attempt(self) -> int:
        return self._env.integer("SLIPSTREAM_ATTEMPT", 1)

    @property
    def world_version(self) -> int:
        """Which world of this attempt the instance is in: 1 for the first, one more at each change of an elastic run's
        size (rigid runs: always 1). RANK and WORLD_SIZE are this world's."""
        return self._env.integer("SLIPSTREAM_WORLD_VERSION", 1)

    @property
    def local_rank(self) -> int:
        return self._env.integer("LOCAL_RANK", 0)

    def metadata(self) -> ClusterMetadata:
        """Every instance of the run, read from SLIPSTREAM_METADATA_FILE; ``peers()`` of it are this one's."""
        path = self._env.path("SLIPSTREAM_METADATA_FILE")
        if path is None:
            raise RuntimeError("SLIPSTREAM_METADATA_FILE is not set: not running under Slipstream")
        return ClusterMetadata.read(path).with_own_rank(self.rank)

    def checkpoints(self, keep: int = 3) -> Checkpoints:
        """Checkpoints in SLIPSTREAM_CHECKPOINT_DIR (which outlives attempts and preemptions), keeping the newest
        ``keep``; outside Slipstream, in ./checkpoints."""
        directory = self._env.path("SLIPSTREAM_CHECKPOINT_DIR")
        return Checkpoints(directory if directory is not None else "checkpoints", keep, self._progress)

    @property
    def progress(self) -> Progress:
        return self._progress

    @property
    def preemption(self) -> Preemption:
        return self._preemption

    def identity_token(self, audience: Optional[str] = None) -> str:
        """The run's identity token for ``audience`` (one of its job's ``spec.identity.audiences``; ``None``: the
        first), read fresh: the platform replaces it before it expires, so read it again each time it is sent rather
        than keeping it. Tools that take a file (``AWS_WEB_IDENTITY_TOKEN_FILE``) can be given
        ``SLIPSTREAM_IDENTITY_TOKEN_FILE`` instead."""
        if audience is None:
            path = self._env.path("SLIPSTREAM_IDENTITY_TOKEN_FILE")
            if path is None:
                raise RuntimeError("SLIPSTREAM_IDENTITY_TOKEN_FILE is not set: the job's spec.identity asks for no tokens")
        else:
            files = json.loads(self._env.get("SLIPSTREAM_IDENTITY_TOKENS") or "{}")
            found = files.get(audience) if isinstance(files, dict) else None
            if not isinstance(found, str):
                known = sorted(files) if isinstance(files, dict) else []
                raise KeyError(f"no identity token for audience {audience!r}: the job's spec.identity.audiences are {known}")
            path = Path(found)
        return path.read_text(encoding="ascii").strip()


def _api(env: Environment) -> Optional[ProgressApi]:
    server, token, run = env.get("SLIPSTREAM_SERVER"), env.get("SLIPSTREAM_RUN_TOKEN"), env.get("SLIPSTREAM_RUN_ID")
    if not server or not token or not run:
        return None
    return ProgressApi(server, run, env.integer("SLIPSTREAM_RANK", 0), token)
