import os
import struct
import tempfile
import unittest
import zlib
from pathlib import Path

import support  # noqa: F401  (the SDK from this tree)
from slipstream import Slipstream
from slipstream.checkpoints import MAGIC, Checkpoint, Checkpoints, decode, encode, file_name


class RecordingProgress:
    def __init__(self):
        self.checkpointed_steps = []

    def checkpointed(self, step):
        self.checkpointed_steps.append(step)


class CheckpointsTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self._tmp.name) / "ckpt"
        self.progress = RecordingProgress()
        self.checkpoints = Checkpoints(self.dir, keep=2, progress=self.progress)

    def tearDown(self):
        self._tmp.cleanup()

    def names(self):
        return sorted(os.listdir(self.dir))

    def test_the_newest_complete_checkpoint_is_found_and_only_the_last_few_are_kept(self):
        self.assertIsNone(self.checkpoints.latest())
        for step in (100, 200, 300, 400):
            self.checkpoints.save(step, f"weights at {step}".encode())
        self.assertEqual(self.checkpoints.latest(), Checkpoint(400, b"weights at 400"))
        self.assertEqual(self.names(), [file_name(300), file_name(400)])
        self.assertEqual(self.progress.checkpointed_steps, [100, 200, 300, 400])

    def test_the_file_format_is_the_java_sdks(self):
        self.checkpoints.save(7, b"abc")
        content = (self.dir / "step-0000000000000000007.ckpt").read_bytes()
        body = struct.pack(">iqi", 0x534C5043, 7, 3) + b"abc"
        self.assertEqual(content, body + struct.pack(">q", zlib.crc32(body)))
        self.assertEqual(content[:4], b"SLPC")

    def test_no_temporary_file_is_left_behind(self):
        self.checkpoints.save(1, b"x" * 100_000)
        self.assertEqual(self.names(), [file_name(1)])

    def test_a_save_replaces_a_checkpoint_of_the_same_step(self):
        self.checkpoints.save(5, b"first")
        self.checkpoints.save(5, b"second")
        self.assertEqual(self.checkpoints.latest(), Checkpoint(5, b"second"))
        self.assertEqual(self.names(), [file_name(5)])

    def test_damaged_truncated_foreign_and_half_written_checkpoints_are_skipped(self):
        checkpoints = Checkpoints(self.dir, keep=10)
        checkpoints.save(10, b"\x01\x02\x03")
        checkpoints.save(20, b"\x04\x05\x06")
        newest = self.dir / file_name(20)
        torn = bytearray(newest.read_bytes())
        torn[-10] ^= 0x5A  # a bit flipped on disk
        newest.write_bytes(bytes(torn))
        (self.dir / ("." + file_name(30) + ".tmp")).write_bytes(b"\x09")  # a crash mid-save
        (self.dir / file_name(40)).write_bytes(encode(40, b"cut short")[:-5])  # truncated
        bad_magic = bytearray(encode(50, b"other"))
        bad_magic[0:4] = b"ZZZZ"
        body = bytes(bad_magic[:-8])
        (self.dir / file_name(50)).write_bytes(body + struct.pack(">q", zlib.crc32(body)))  # checksum right, magic wrong
        (self.dir / file_name(60)).write_bytes(b"")
        os.mkdir(self.dir / file_name(70))  # not even a file

        self.assertEqual(checkpoints.latest(), Checkpoint(10, b"\x01\x02\x03"))

    def test_decode_refuses_what_is_not_one_whole_checkpoint(self):
        whole = encode(3, b"data")
        self.assertEqual(decode(whole), Checkpoint(3, b"data"))
        cases = {
            "empty": b"",
            "header only": whole[:16],
            "one byte short": whole[:-1],
            "one byte more": whole + b"\x00",
            "length says more": whole[:12] + struct.pack(">i", 99) + whole[16:],
            "negative length": whole[:12] + struct.pack(">i", -1) + whole[16:],
            "wrong checksum": whole[:-1] + bytes([whole[-1] ^ 1]),
            "wrong magic": struct.pack(">i", MAGIC + 1) + whole[4:],
        }
        for name, content in cases.items():
            with self.subTest(name):
                self.assertIsNone(decode(content))

    def test_a_symlink_planted_at_the_temporary_name_is_not_followed(self):
        self.dir.mkdir()
        victim = Path(self._tmp.name) / "victim"
        victim.write_bytes(b"precious")
        os.symlink(victim, self.dir / ("." + file_name(9) + ".tmp"))

        self.checkpoints.save(9, b"new")

        self.assertEqual(victim.read_bytes(), b"precious")
        self.assertEqual(self.checkpoints.latest(), Checkpoint(9, b"new"))
        self.assertFalse((self.dir / file_name(9)).is_symlink())

    def test_a_dangling_symlink_planted_at_the_temporary_name_creates_nothing_outside(self):
        self.dir.mkdir()
        target = Path(self._tmp.name) / "created-through-the-link"
        os.symlink(target, self.dir / ("." + file_name(9) + ".tmp"))
        self.checkpoints.save(9, b"new")
        self.assertFalse(target.exists())
        self.assertEqual(self.checkpoints.latest(), Checkpoint(9, b"new"))

    def test_wrong_arguments_are_refused(self):
        with self.assertRaisesRegex(ValueError, "negative"):
            self.checkpoints.save(-1, b"")
        with self.assertRaisesRegex(ValueError, "64 bits"):
            self.checkpoints.save(2**63, b"")
        with self.assertRaises(TypeError):
            self.checkpoints.save(1, "text, not bytes")
        for keep in (0, -1):
            with self.subTest(keep=keep), self.assertRaisesRegex(ValueError, "keep"):
                Checkpoints(self.dir, keep=keep)
        self.assertFalse(self.dir.exists())

    def test_any_buffer_is_saved_as_its_bytes(self):
        import array

        numbers = array.array("d", [1.5, -2.0, 3.25])
        for data in (bytearray(b"abc"), memoryview(b"xyz"), memoryview(numbers)):
            with self.subTest(type(data).__name__):
                self.checkpoints.save(1, data)
                self.assertEqual(self.checkpoints.latest(), Checkpoint(1, bytes(memoryview(data).cast("B"))))
        self.assertEqual(len(self.checkpoints.latest().data), 24)

    def test_a_save_that_fails_midway_leaves_no_temporary_file(self):
        from unittest import mock

        self.checkpoints.save(1, b"old")
        with mock.patch("slipstream._files.os.write", side_effect=OSError(28, "No space left on device")):
            with self.assertRaisesRegex(OSError, "No space left"):
                self.checkpoints.save(2, b"new")
        self.assertEqual(self.names(), [file_name(1)])
        self.assertEqual(self.checkpoints.latest(), Checkpoint(1, b"old"))

    def test_the_largest_step_fits(self):
        self.checkpoints.save(2**63 - 1, b"")
        self.assertEqual(self.checkpoints.latest(), Checkpoint(2**63 - 1, b""))

    def test_through_slipstream_checkpoints_go_to_the_checkpoint_dir_or_else_to_checkpoints(self):
        managed = Slipstream.of({"SLIPSTREAM_CHECKPOINT_DIR": str(self.dir)}).checkpoints(keep=1)
        self.assertEqual(managed.directory, self.dir)
        self.assertEqual(managed.keep, 1)
        self.assertEqual(Slipstream.of({}).checkpoints().directory, Path("checkpoints"))
        self.assertEqual(Slipstream.of({}).checkpoints().keep, 3)


if __name__ == "__main__":
    unittest.main()
