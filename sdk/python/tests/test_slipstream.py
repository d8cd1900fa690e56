import json
import tempfile
import unittest
from pathlib import Path

import support  # noqa: F401  (the SDK from this tree)
from support import run_python
from slipstream import Slipstream


class SlipstreamTest(unittest.TestCase):
    def test_the_environment_is_read_with_the_java_sdks_defaults(self):
        outside = Slipstream.of({})
        self.assertEqual((outside.managed, outside.rank, outside.world_size, outside.attempt, outside.local_rank),
                         (False, 0, 1, 1, 0))
        inside = Slipstream.of({"SLIPSTREAM_RUN_ID": "r", "SLIPSTREAM_RANK": " 3 ", "SLIPSTREAM_WORLD_SIZE": "4",
                                "SLIPSTREAM_ATTEMPT": "2", "LOCAL_RANK": "1"})
        self.assertEqual((inside.managed, inside.rank, inside.world_size, inside.attempt, inside.local_rank),
                         (True, 3, 4, 2, 1))

    def test_the_world_version_is_1_unless_an_elastic_run_changed_size(self):
        self.assertEqual(Slipstream.of({}).world_version, 1)
        self.assertEqual(Slipstream.of({"SLIPSTREAM_WORLD_VERSION": "3"}).world_version, 3)
        with self.assertRaisesRegex(ValueError, "SLIPSTREAM_WORLD_VERSION is not a number: two"):
            Slipstream.of({"SLIPSTREAM_WORLD_VERSION": "two"}).world_version

    def test_a_variable_that_is_not_a_number_is_named(self):
        with self.assertRaisesRegex(ValueError, "SLIPSTREAM_RANK is not a number: x"):
            Slipstream.of({"SLIPSTREAM_RANK": "x"}).rank

    def test_from_environment_reads_the_processs_variables(self):
        result = run_python("from slipstream import Slipstream; s = Slipstream.from_environment(); print(s.rank, s.managed)",
                            env={"SLIPSTREAM_RANK": "5", "SLIPSTREAM_RUN_ID": "r"})
        self.assertEqual(result.stdout.strip(), "5 True", result.stderr)

    def test_importing_the_sdk_never_imports_pytorch(self):
        result = run_python("import sys, slipstream, slipstream.torch, slipstream.metadata, slipstream.progress, "
                            "slipstream.preemption, slipstream.checkpoints; print('torch' in sys.modules)")
        self.assertEqual(result.stdout.strip(), "False", result.stderr)

    def test_identity_tokens_are_read_fresh_by_audience(self):
        with tempfile.TemporaryDirectory() as directory:
            vault, minio = Path(directory, "token-0.jwt"), Path(directory, "token-1.jwt")
            vault.write_text("first-vault")
            minio.write_text("first-minio\n")
            sdk = Slipstream.of({"SLIPSTREAM_IDENTITY_TOKEN_FILE": str(vault),
                                 "SLIPSTREAM_IDENTITY_TOKENS": json.dumps({"vault": str(vault), "https://minio.example.com/": str(minio)})})
            self.assertEqual(sdk.identity_token(), "first-vault")
            self.assertEqual(sdk.identity_token("https://minio.example.com/"), "first-minio")
            vault.write_text("second-vault")
            self.assertEqual(sdk.identity_token("vault"), "second-vault", "read again, never kept")
            with self.assertRaisesRegex(KeyError, "no identity token for audience 'sts.amazonaws.com'.*'vault'"):
                sdk.identity_token("sts.amazonaws.com")
        with self.assertRaisesRegex(RuntimeError, "spec.identity asks for no tokens"):
            Slipstream.of({}).identity_token()
        with self.assertRaisesRegex(KeyError, "no identity token for audience 'vault'"):
            Slipstream.of({}).identity_token("vault")


if __name__ == "__main__":
    unittest.main()
