"""What every instance of a run learns about the run: the JSON file at SLIPSTREAM_METADATA_FILE (docs/distributed.md).

Written completely before the instance starts. Format version 1: fields are only ever added within a version, so
fields this SDK does not know are skipped; another version is refused.
"""

import json
import os
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

FORMAT_VERSION = 1


class MetadataError(ValueError):
    """The metadata is not metadata of the format this SDK reads."""


@dataclass(frozen=True)
class Address:
    addr: Optional[str]
    port: int


@dataclass(frozen=True)
class Instance:
    """One instance: who it is in the run, and where to reach it; ``topology``: where its node is in the cluster's
    topology, level to domain, broadest first (``{"block": "b1", "rack": "r2"}``; empty without one)."""

    name: Optional[str]
    node_group: Optional[str]
    rank: int
    group_rank: int
    node: Optional[str]
    hostname: Optional[str]
    fqdn: Optional[str]
    ip: Optional[str]
    ports: Tuple[int, ...]
    started: bool
    topology: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Storage:
    """Shared storage: ``path`` on this machine, ``mount_path`` on clusters."""

    name: Optional[str]
    scope: Optional[str]
    path: Optional[str]
    mount_path: Optional[str]


@dataclass(frozen=True)
class ClusterMetadata:
    """``master`` is rank 0's address and first port (MASTER_ADDR, MASTER_PORT); ``instances`` are by global rank,
    those of groups not started yet (InOrder startup) with ``started=False``; ``storage`` is the run's shared storage."""

    version: int
    run_id: Optional[str]
    workspace: Optional[str]
    job: Optional[str]
    attempt: int
    world_size: int
    startup_order: Optional[str]
    master: Address
    instances: Tuple[Instance, ...]
    storage: Tuple[Storage, ...]
    # Not in the file: this instance's rank, when read through Slipstream.metadata() (peers() then needs no rank).
    own_rank: Optional[int] = field(default=None, compare=False)

    def with_own_rank(self, rank: int) -> "ClusterMetadata":
        return replace(self, own_rank=rank)

    def instance(self, rank: int) -> Instance:
        """The instance of global ``rank``. Raises KeyError if the run has none."""
        for candidate in self.instances:
            if candidate.rank == rank:
                return candidate
        raise KeyError(f"the run has no instance of rank {rank}")

    def peers(self, rank: Optional[int] = None) -> List[Instance]:
        """Every instance but the one of ``rank`` (default: this instance's, if read through Slipstream.metadata())."""
        if rank is None:
            rank = self.own_rank
        if rank is None:
            raise ValueError("whose peers? pass a rank (this metadata was not read through Slipstream.metadata())")
        return [candidate for candidate in self.instances if candidate.rank != rank]

    @staticmethod
    def parse(text: Union[str, bytes]) -> "ClusterMetadata":
        """Reads metadata from its JSON. Raises MetadataError if it is not metadata of this format."""
        try:
            root = json.loads(text, parse_constant=_refuse_constant)
        except ValueError as e:
            raise MetadataError(f"the metadata is not JSON: {e}") from None
        return _metadata(root)

    @staticmethod
    def read(path: Union[str, os.PathLike]) -> "ClusterMetadata":
        """Reads a metadata file. Raises OSError if it cannot be read, MetadataError (naming the file) if it is not
        metadata of this format."""
        with open(path, "rb") as f:
            content = f.read()
        try:
            return ClusterMetadata.parse(content)
        except MetadataError as e:
            raise MetadataError(f"{os.fspath(path)}: {e}") from None


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _metadata(value: Any) -> ClusterMetadata:
    root = _object(value, "the metadata")
    version = _integer(root, "version", 0)
    if version != FORMAT_VERSION:
        raise MetadataError(f"metadata format version {version} is not {FORMAT_VERSION}, the one this SDK reads")
    master = _object(root.get("master"), "master")
    instances = []
    for item in _list(root.get("instances"), "instances"):
        entry = _object(item, "an instance")
        ports = tuple(_int(port, "ports") for port in _list(entry.get("ports"), "ports"))
        instances.append(Instance(
            name=_text(entry, "name"), node_group=_text(entry, "nodeGroup"), rank=_integer(entry, "rank", 0),
            group_rank=_integer(entry, "groupRank", 0), node=_text(entry, "node"), hostname=_text(entry, "hostname"),
            fqdn=_text(entry, "fqdn"), ip=_text(entry, "ip"), ports=ports, started=entry.get("started") is not False,
            topology=_places(entry.get("topology"))))
    storage = []
    for item in _list(root.get("storage"), "storage"):
        entry = _object(item, "a storage")
        storage.append(Storage(name=_text(entry, "name"), scope=_text(entry, "scope"), path=_text(entry, "path"),
                               mount_path=_text(entry, "mountPath")))
    return ClusterMetadata(
        version=version, run_id=_text(root, "runId"), workspace=_text(root, "workspace"), job=_text(root, "job"),
        attempt=_integer(root, "attempt", 1), world_size=_integer(root, "worldSize", len(instances)),
        startup_order=_text(root, "startupOrder"), master=Address(_text(master, "addr"), _integer(master, "port", 0)),
        instances=tuple(instances), storage=tuple(storage))


def _object(value: Any, what: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MetadataError(f"{what} is not a JSON object")
    return value


def _list(value: Any, what: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise MetadataError(f"{what} is not a JSON array")
    return value


def _places(value: Any) -> Dict[str, str]:
    """An instance's place in the topology: level to domain; absent reads as none."""
    if value is None:
        return {}
    entries = _object(value, "topology")
    return {str(level): domain for level, domain in entries.items() if isinstance(domain, str)}


def _text(entry: Mapping[str, Any], field: str) -> Optional[str]:
    value = entry.get(field)
    if value is not None and not isinstance(value, str):
        raise MetadataError(f"{field} is not a string")
    return value


def _integer(entry: Mapping[str, Any], field: str, otherwise: int) -> int:
    value = entry.get(field)
    return otherwise if value is None else _int(value, field)


def _int(value: Any, field: str) -> int:
    # As Java's intValueExact: 3.0 is 3, 3.5 and true are not numbers of this field.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MetadataError(f"{field} is not a number")
    if isinstance(value, float):
        if not value.is_integer():
            raise MetadataError(f"{field} is not a whole number")
        value = int(value)
    if not -(2**31) <= value < 2**31:
        raise MetadataError(f"{field} is out of range")
    return value
