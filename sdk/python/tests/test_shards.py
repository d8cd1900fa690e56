import unittest

import support  # noqa: F401  (the SDK from this tree)
from slipstream.shards import shard_range, shard_seed


class ShardRangeTest(unittest.TestCase):
    def test_the_ranks_take_every_shard_once_in_order_in_contiguous_runs_of_even_size(self):
        for shards in range(1, 13):
            for world in range(1, shards + 1):
                with self.subTest(shards=shards, world=world):
                    ranges = [shard_range(rank, world, shards) for rank in range(world)]
                    self.assertEqual([s for r in ranges for s in r], list(range(shards)))
                    self.assertTrue(all(r.step == 1 and len(r) >= 1 for r in ranges))
                    self.assertLessEqual(max(map(len, ranges)) - min(map(len, ranges)), 1)

    def test_eight_shards_over_three_ranks(self):
        self.assertEqual([list(shard_range(rank, 3, 8)) for rank in range(3)], [[0, 1], [2, 3, 4], [5, 6, 7]])

    def test_a_world_larger_than_the_shards_is_refused_by_name(self):
        with self.assertRaisesRegex(ValueError, "5 ranks but 4 shards: every rank needs a shard"):
            shard_range(0, 5, 4)
        with self.assertRaisesRegex(ValueError, "rank 2 is not in a world of 2"):
            shard_range(2, 2, 8)
        with self.assertRaisesRegex(ValueError, "shards must be at least 1"):
            shard_range(0, 1, 0)


class ShardSeedTest(unittest.TestCase):
    def test_a_seed_depends_on_the_seed_the_step_and_the_shard_only(self):
        self.assertEqual(shard_seed(42, 7, 3), shard_seed(42, 7, 3))
        seeds = {shard_seed(seed, step, shard) for seed in (0, 1) for step in range(50) for shard in range(8)}
        self.assertEqual(len(seeds), 2 * 50 * 8)
        self.assertNotEqual(shard_seed(1, 23, 4), shard_seed(12, 3, 4), "no collision of the parts' digits")
        self.assertTrue(all(0 <= s < 2 ** 63 for s in seeds))


if __name__ == "__main__":
    unittest.main()
