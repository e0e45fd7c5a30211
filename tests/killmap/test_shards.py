"""Shards balanced by time (catalog/shards.py): every runner computes the same split.

The split is computed on each CI runner from what they all share, so it must not depend on
the order items arrive in, on the process (hash seeds), or on anything but its inputs.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

from killmap.catalog.shards import ROUND_ROBIN, TIME, split_items

ITEMS = [f"mod.func_{i:03d}.{i * 7919 % 65536:04x}" for i in range(60)]
DURATIONS = {
    item: round(0.05 + (i * 37 % 23) * 0.31 + (8.0 if i % 17 == 0 else 0.0), 4) for i, item in enumerate(ITEMS)
}


def _groups():
    # Pairs stand for an invariant with its control: they go to one shard together.
    return [[item] for item in ITEMS[:50]] + [ITEMS[50:52], ITEMS[52:54], ITEMS[54:57], ITEMS[57:]]


def test_the_split_is_the_same_across_runs_and_whatever_order_the_items_come_in():
    first = split_items(_groups(), 4, DURATIONS)
    assert first.method == TIME
    rng = random.Random(7)
    for _ in range(20):
        shuffled = [list(group) for group in _groups()]
        for group in shuffled:
            rng.shuffle(group)
        rng.shuffle(shuffled)
        again = split_items(shuffled, 4, dict(reversed(list(DURATIONS.items()))))
        assert again.assignment == first.assignment and again.digest == first.digest
    plain = split_items(list(reversed(_groups())), 4)
    assert plain.method == ROUND_ROBIN and plain.digest == split_items(_groups(), 4).digest


def test_the_split_is_the_same_in_another_process_with_another_hash_seed():
    code = (
        "import json, sys; from killmap.catalog.shards import split_items; "
        "groups, durations = json.load(sys.stdin); "
        "print(split_items(groups, 4, durations).digest, split_items(groups, 4).digest)"
    )
    here = f"{split_items(_groups(), 4, DURATIONS).digest} {split_items(_groups(), 4).digest}"
    for seed in ("1", "4242"):
        done = subprocess.run(
            [sys.executable, "-c", code],
            input=json.dumps([list(reversed(_groups())), DURATIONS]),
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )
        assert done.stdout.strip() == here


def test_a_group_stays_on_one_shard_and_every_item_is_on_exactly_one():
    split = split_items(_groups(), 4, DURATIONS)
    members = [split.members(k) for k in (1, 2, 3, 4)]
    assert sorted(item for shard in members for item in shard) == sorted(ITEMS)
    for group in _groups():
        assert sum(bool(set(group) & shard) for shard in members) == 1


def test_the_longest_go_first_each_to_the_shard_with_the_least_work():
    durations = {"a": 10.0, "b": 6.0, "c": 5.0, "d": 4.0, "e": 1.0}
    split = split_items([[k] for k in "edcba"], 2, durations)
    # a -> 1; b -> 2; c -> 2 (6 < 10); d -> 1 (10 < 11); e -> 2 (11 < 14)
    assert split.members(1) == {"a", "d"} and split.members(2) == {"b", "c", "e"}
    assert split.loads == (14.0, 12.0)


def test_an_item_the_report_does_not_know_costs_the_median():
    durations = {"a": 1.0, "b": 2.0, "c": 9.0}
    split = split_items([["a"], ["b"], ["c"], ["new"]], 2, durations)
    # new costs 2.0 (the median): c -> 1, then b or new (2.0, tie by id: b) -> 2, new -> 2, a -> 2
    assert split.members(1) == {"c"} and split.members(2) == {"a", "b", "new"}
    assert split.loads == (9.0, 5.0)


def test_the_time_split_evens_out_what_round_robin_leaves_uneven():
    by_time = split_items(_groups(), 4, DURATIONS)
    mean = sum(DURATIONS.values()) / 4
    assert max(by_time.loads) <= 1.15 * mean
    dealt = [sum(DURATIONS[i] for i in split_items(_groups(), 4).members(k)) for k in (1, 2, 3, 4)]
    assert max(dealt) > max(by_time.loads)


def test_a_sweep_with_durations_runs_its_longest_mutants_first_and_keeps_order_without():
    from killmap.verdict.sweep import longest_first

    class Swept:  # longest_first reads only the id
        def __init__(self, id):
            self.id = id

    mutants = [Swept(item) for item in ITEMS]
    ordered = [m.id for m in longest_first(mutants, DURATIONS)]  # type: ignore[arg-type]
    assert [DURATIONS[i] for i in ordered] == sorted(DURATIONS.values(), reverse=True)
    # Ties keep the enumeration's order, so every run of the same shard takes the same order.
    assert ordered == sorted(ITEMS, key=lambda i: (-DURATIONS[i], ITEMS.index(i)))
    assert longest_first(mutants, None) == mutants  # type: ignore[arg-type]
