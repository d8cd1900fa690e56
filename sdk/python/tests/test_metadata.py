import tempfile
import unittest
from pathlib import Path

import support  # noqa: F401  (the SDK from this tree)
from slipstream import Slipstream
from slipstream.metadata import Address, ClusterMetadata, Instance, MetadataError, Storage

SAMPLE = Path(__file__).parent / "fixtures" / "metadata.json"


class MetadataTest(unittest.TestCase):
    def test_the_sample_of_docs_distributed_md_is_read_whole(self):
        metadata = ClusterMetadata.read(SAMPLE)
        self.assertEqual(metadata.version, 1)
        self.assertEqual(metadata.run_id, "distributed-training-b0vxzd2d")
        self.assertEqual(metadata.workspace, "demo")
        self.assertEqual(metadata.job, "distributed-training")
        self.assertEqual(metadata.attempt, 1)
        self.assertEqual(metadata.world_size, 2)
        self.assertEqual(metadata.startup_order, "InOrder")
        self.assertEqual(metadata.master, Address("127.0.0.1", 40125))
        self.assertEqual(metadata.instances, (
            Instance("coordinator-0", "coordinator", 0, 0, "node-1", "localhost", "localhost", "127.0.0.1",
                     (40125, 40126), True),
            Instance("worker-0", "worker", 1, 0, "node-1", "localhost", "localhost", "127.0.0.1", (41877,), False),
        ))
        self.assertEqual(metadata.storage, (Storage("output", "job",
                                                    "/srv/slipstream/storage/demo/jobs/distributed-training/output",
                                                    "/mnt/output"),))

    def test_through_slipstream_peers_are_the_other_instances(self):
        slipstream = Slipstream.of({"SLIPSTREAM_METADATA_FILE": str(SAMPLE), "SLIPSTREAM_RANK": "1"})
        metadata = slipstream.metadata()
        self.assertEqual([peer.name for peer in metadata.peers()], ["coordinator-0"])
        self.assertEqual([peer.name for peer in metadata.peers(0)], ["worker-0"])
        self.assertEqual(metadata.instance(1).ports, (41877,))
        with self.assertRaisesRegex(KeyError, "rank 5"):
            metadata.instance(5)
        with self.assertRaisesRegex(ValueError, "pass a rank"):
            ClusterMetadata.read(SAMPLE).peers()

    def test_outside_slipstream_there_is_no_metadata(self):
        with self.assertRaisesRegex(RuntimeError, "SLIPSTREAM_METADATA_FILE is not set"):
            Slipstream.of({}).metadata()

    def test_absent_fields_take_the_java_sdks_defaults(self):
        metadata = ClusterMetadata.parse('{"version": 1, "instances": [{"name": "a"}, {"name": "b", "started": null}]}')
        self.assertEqual(metadata.attempt, 1)
        self.assertEqual(metadata.world_size, 2)
        self.assertEqual(metadata.master, Address(None, 0))
        self.assertEqual(metadata.storage, ())
        self.assertEqual([i.started for i in metadata.instances], [True, True])
        self.assertEqual(metadata.instances[0].ports, ())

    def test_each_instance_says_where_it_is_in_the_topology(self):
        metadata = ClusterMetadata.parse('{"version": 1, "instances": [{"name": "a", "topology": {"block": "b1", "rack": "r2"}},'
                                         ' {"name": "b"}]}')
        self.assertEqual(dict(metadata.instances[0].topology), {"block": "b1", "rack": "r2"})
        self.assertEqual(list(metadata.instances[0].topology), ["block", "rack"], "broadest first, as written")
        self.assertEqual(dict(metadata.instances[1].topology), {})
        with self.assertRaisesRegex(MetadataError, "topology is not a JSON object"):
            ClusterMetadata.parse('{"version": 1, "instances": [{"name": "a", "topology": ["rack"]}]}')

    def test_another_version_is_refused_with_a_clear_error(self):
        for text, message in [('{"version": 2}', "metadata format version 2 is not 1"),
                              ('{"runId": "r"}', "metadata format version 0 is not 1")]:
            with self.subTest(text), self.assertRaisesRegex(MetadataError, message):
                ClusterMetadata.parse(text)

    def test_a_file_that_is_not_metadata_is_refused_naming_the_file_and_the_field(self):
        cases = {
            "[]": "the metadata is not a JSON object",
            "{not json": "not JSON",
            '{"version": 1, "runId": 5}': "runId is not a string",
            '{"version": 1, "attempt": "2"}': "attempt is not a number",
            '{"version": 1, "attempt": 1.5}': "attempt is not a whole number",
            '{"version": 1, "instances": {}}': "instances is not a JSON array",
            '{"version": 1, "instances": [{"ports": [true]}]}': "ports is not a number",
            '{"version": 1, "master": {"port": NaN}}': "not JSON",
            '{"version": 1, "worldSize": 4294967296}': "worldSize is out of range",
        }
        with tempfile.TemporaryDirectory() as tmp:
            for text, message in cases.items():
                with self.subTest(text):
                    path = Path(tmp) / "metadata.json"
                    path.write_text(text)
                    with self.assertRaises(MetadataError) as raised:
                        ClusterMetadata.read(path)
                    self.assertIn(message, str(raised.exception))
                    self.assertIn(str(path), str(raised.exception))


if __name__ == "__main__":
    unittest.main()
