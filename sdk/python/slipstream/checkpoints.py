"""Checkpoints in a directory that outlives attempts (SLIPSTREAM_CHECKPOINT_DIR), in the Java SDK's format.

A checkpoint is never half-visible: it is written to a temporary file, flushed to disk, and renamed to
``step-<step, 19 digits>.ckpt``; a checksum guards against a torn disk. The newest ``keep`` are kept. Each save is
reported as progress, so that the platform knows from where a restart resumes.

The file, big-endian: int MAGIC ("SLPC"), long step, int length, the data, then the CRC-32 of all that as a long.
The Java SDK (io.slipstream.sdk.Checkpoints) reads what this writes and the other way round.
"""

import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Union

from ._files import write_atomically

MAGIC = 0x534C5043  # "SLPC"
_HEADER = struct.Struct(">iqi")
_TRAILER = struct.Struct(">q")
_MAX_STEP = 2**63 - 1
_MAX_LENGTH = 2**31 - 1  # Java's int length


@dataclass(frozen=True)
class Checkpoint:
    """A complete checkpoint: the step it was taken after, and what the workload saved."""

    step: int
    data: bytes


def file_name(step: int) -> str:
    return f"step-{step:019d}.ckpt"


def _parts(step: int, data: memoryview) -> list:
    header = _HEADER.pack(MAGIC, step, data.nbytes)
    return [header, data, _TRAILER.pack(zlib.crc32(data, zlib.crc32(header)) & 0xFFFFFFFF)]


def encode(step: int, data: bytes) -> bytes:
    """The file's content for ``data`` saved as the checkpoint of ``step``."""
    return b"".join(_parts(step, memoryview(data).cast("B")))


def decode(content: bytes) -> Optional[Checkpoint]:
    """The checkpoint in ``content``, or None if it is not one whole (torn, truncated, another format)."""
    if len(content) < _HEADER.size + _TRAILER.size:
        return None
    magic, step, length = _HEADER.unpack_from(content, 0)
    if magic != MAGIC or length < 0 or len(content) != _HEADER.size + length + _TRAILER.size:
        return None
    (crc,) = _TRAILER.unpack_from(content, len(content) - _TRAILER.size)
    if crc != zlib.crc32(memoryview(content)[: len(content) - _TRAILER.size]) & 0xFFFFFFFF:
        return None
    return Checkpoint(step, bytes(content[_HEADER.size : _HEADER.size + length]))


class Checkpoints:
    """The checkpoints of a run; get one from ``Slipstream.checkpoints(keep)``."""

    def __init__(self, directory: Union[str, os.PathLike], keep: int = 3, progress=None):
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise ValueError("keep must be at least 1")
        self._dir = Path(directory)
        self._keep = keep
        self._progress = progress

    @property
    def directory(self) -> Path:
        return self._dir

    @property
    def keep(self) -> int:
        return self._keep

    def save(self, step: int, data: bytes) -> None:
        """Saves ``data`` as the checkpoint of ``step``, atomically, then drops all but the newest ``keep``."""
        if isinstance(step, bool) or not isinstance(step, int):
            raise TypeError("step must be an int")
        if step < 0:
            raise ValueError("step must not be negative")
        if step > _MAX_STEP:
            raise ValueError("step must fit in 64 bits")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError("data must be bytes")
        data = memoryview(data).cast("B")  # bytes however the buffer counts its items; no copy
        if data.nbytes > _MAX_LENGTH:
            raise ValueError("a checkpoint holds at most 2 GiB - 1 bytes (the format's length is a 32-bit int)")
        self._dir.mkdir(parents=True, exist_ok=True)
        write_atomically(self._dir / file_name(step), _parts(step, data))
        files = self._list()
        for old in files[: max(0, len(files) - self._keep)]:
            try:
                old.unlink()
            except FileNotFoundError:
                pass
        if self._progress is not None:
            self._progress.checkpointed(step)

    def latest(self) -> Optional[Checkpoint]:
        """The newest checkpoint that reads back whole; older ones are tried if the newest is damaged."""
        if not self._dir.is_dir():
            return None
        for path in reversed(self._list()):
            try:
                content = path.read_bytes()
            except OSError:
                continue
            checkpoint = decode(content)
            if checkpoint is not None:
                return checkpoint
        return None

    def _list(self) -> List[Path]:
        names = [n for n in os.listdir(self._dir) if n.startswith("step-") and n.endswith(".ckpt")]
        return [self._dir / n for n in sorted(names)]  # zero-padded steps: name order is step order
