"""Writes a file so that readers see either the old content or the new, never a part: temp file, fsync, rename."""

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence, Union

Buffer = Union[bytes, bytearray, memoryview]


def write_atomically(target: Path, content: Union[Buffer, Sequence[Buffer]]) -> None:
    """``content``: bytes, or parts written one after the other (a large checkpoint is never copied to join them)."""
    target = Path(target)
    parts = [content] if isinstance(content, (bytes, bytearray, memoryview)) else list(content)
    temporary = target.with_name("." + target.name + ".tmp")
    # The directory may be shared with the workload's other code (or another tenant's, on shared storage): a symbolic
    # link planted at the temporary name must not make us write through it. Remove whatever is there (unlink removes a
    # link, never its target), then create the file exclusively, refusing to follow a link that reappears meanwhile.
    try:
        os.unlink(temporary)
    except FileNotFoundError:
        pass
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(temporary, flags, 0o666)
    try:
        try:
            for part in parts:
                view = memoryview(part).cast("B")
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
    except BaseException:
        _remove(temporary)  # a full disk leaves no partial file behind to fill it further
        raise
    os.replace(temporary, target)  # rename(2) replaces a link at the target itself, never what it points to
    sync_directory(target.absolute().parent)


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def sync_directory(directory: Path) -> None:
    """Makes the rename itself durable: without it a crash of the machine may forget it."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return  # some file systems cannot open a directory: the rename is atomic all the same
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def iso_instant(moment: datetime) -> str:
    """As Java's Instant.toString(): UTC, 'Z', the fraction in groups of three digits and only if there is one."""
    if moment.tzinfo is None:
        raise ValueError("a naive datetime has no instant: give it a time zone")
    utc = moment.astimezone(timezone.utc)
    text = utc.strftime("%Y-%m-%dT%H:%M:%S")
    micros = utc.microsecond
    if micros:
        text += f".{micros // 1000:03d}" if micros % 1000 == 0 else f".{micros:06d}"
    return text + "Z"


def parse_instant(text: str) -> datetime:
    """An ISO-8601 instant with 'Z' or an offset, as the platform writes (Python 3.9's fromisoformat knows no 'Z')."""
    value = text.strip()
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    if "." in value:  # fromisoformat before 3.11 takes 3 or 6 digits only; the platform may write up to 9
        head, _, rest = value.partition(".")
        digits = len(rest) - len(rest.lstrip("0123456789"))
        fraction, offset = rest[:digits], rest[digits:]
        if not fraction:
            raise ValueError(f"not an instant: {text}")
        value = head + "." + (fraction + "000000")[:6] + offset
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        raise ValueError(f"not an instant (no offset): {text}")
    return moment.astimezone(timezone.utc)
