"""The fuzz regression store (conformance/fuzz/store.py) on both layouts: a
folder, and a real redis-server (the ``redis_server`` fixture) stopped and
started again; races between real processes; a writer killed mid-write."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conformance.fuzz.store import (
    DirectoryStore,
    RedisStore,
    Store,
    StoreEntry,
    StoreError,
    open_store,
)
from tests.conftest import free_port

FAST = {"attempts": 2, "backoff_s": 0.05, "timeout_s": 1.0}  # an outage costs 0.05 s here


# A reproducer as a campaign stores it: one case the case loader reads (the
# same text for every bug unless ``text`` differs, so that it is read once).
CASE_YAML = """\
cases:
  - id: stored
    description: {text}
    op: Gather
    opset: 13
    dtype: float32
    attributes: {{axis: 0}}
    data: [1.0, 2.0]
    indices: [1]
    expected: oracle
    spec: 004_d4766443270c2fb5.txt
"""


def entry(bug_id: str, shrunk_by: str = "1/2", text: str = "x") -> StoreEntry:
    return StoreEntry(
        bug_id=bug_id,
        bug={"runtime": "onnxruntime", "kind": "value_mismatch", "op": "Gather"},
        case_yaml=CASE_YAML.format(text=text),
        variant="data_initializer",
        shrunk_by=shrunk_by,
        found={"seed": 7, "versions": {"onnxruntime": "1.31.1"}},
    )


@pytest.fixture(params=["directory", "redis"])
def spec(request, tmp_path) -> str:
    """Where a store is: a folder, or a fresh Redis server's URL."""
    if request.param == "directory":
        return str(tmp_path / "store")
    return request.getfixturevalue("redis_server").url


@pytest.fixture
def store(spec, tmp_path):
    with open_store(spec, spool=tmp_path / "spool", **FAST) as opened:
        yield opened


# -- entries -------------------------------------------------------------------------


def test_entries_round_trip_sorted_and_overwritten(store, spec, tmp_path):
    assert store.entries() == []
    assert store.get("b-1") is None
    for bug_id in ["b-c", "b-a", "b-b"]:
        store.put(entry(bug_id))
    assert [e.bug_id for e in store.entries()] == ["b-a", "b-b", "b-c"]
    assert store.get("b-b") == entry("b-b")
    store.put(entry("b-b", shrunk_by="2/2", text="smaller"))
    assert store.get("b-b") == entry("b-b", shrunk_by="2/2", text="smaller")
    assert len(store.entries()) == 3
    with open_store(spec, spool=tmp_path / "spool", **FAST) as again:  # the next campaign
        assert again.entries() == store.entries()


def test_many_entries(store):
    """More entries than one SCAN/MGET chunk (500)."""
    ids = [f"b-{n:04d}" for n in range(1100)]
    for bug_id in reversed(ids):
        store.put(entry(bug_id))
    assert [e.bug_id for e in store.entries()] == ids


@pytest.mark.parametrize("bad", ["", "B-1", "b_1", "b/1", "../b", "b.json", "b 1", "b" * 65, 7])
def test_bug_ids_are_checked(store, bad):
    with pytest.raises(StoreError, match="bad bug id"):
        StoreEntry(bad, {}, "", "v", "1/1", {})
    with pytest.raises(StoreError, match=f"{store.location}: bad bug id"):
        store.get(bad)
    with pytest.raises(StoreError, match="bad bug id"):
        store.claim(bad, "1/1")
    with pytest.raises(StoreError, match="bad bug id"):
        store.holder(bad)


def test_longest_bug_id(store):
    bug_id = "b-" + "0123456789abcdef" * 3 + "0123456789abcd"  # 64 characters
    store.put(entry(bug_id))
    assert store.get(bug_id) == entry(bug_id)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ([], "a JSON object"),
        ({"bug_id": "b-1"}, "entry format None"),
        ({**entry("b-1").to_json(), "format": 2}, "entry format 2"),
        ({**entry("b-1").to_json(), "bug": "text"}, "bug: 'text' is not an object"),
        (
            {k: v for k, v in entry("b-1").to_json().items() if k != "variant"},
            "variant: None is not",
        ),
        ({**entry("b-1").to_json(), "bug_id": "B"}, r"bug_id: 'B' is not text of the form"),
        ({**entry("b-1").to_json(), "shrunk_by": "1/2\u2028"}, "shrunk_by .*: 1 to 200 printable"),
        # a pattern's $ lets Python's re take a final line break: the store does not
        ({**entry("b-1").to_json(), "bug": {**entry("b-1").bug, "runtime": "ort\n"}}, "schema"),
    ],
)
def test_malformed_entries_are_named(content, says):
    with pytest.raises(StoreError, match=f"^somewhere: .*{says}"):
        StoreEntry.from_json(content, "somewhere")
    assert StoreEntry.from_json(entry("b-1").to_json(), "here") == entry("b-1")


# -- claims --------------------------------------------------------------------------


def test_claims(store):
    assert store.holder("b-1") is None
    assert store.claim("b-1", "1/2")
    assert not store.claim("b-1", "2/2")
    assert store.claim("b-1", "1/2")  # the same owner again
    assert store.holder("b-1") == "1/2"
    store.put(entry("b-1", shrunk_by="1/2"))
    assert not store.claim("b-1", "1/2")  # kept already: nothing to shrink
    assert not store.claim("b-1", "2/2")
    store.put(entry("b-2", shrunk_by="2/2"))  # an entry without a claim
    assert not store.claim("b-2", "1/2")
    assert store.holder("b-2") == "2/2"
    with pytest.raises(StoreError, match="bad claim owner ''"):
        store.claim("b-3", "")


def test_an_expired_claim_is_taken_over(store):
    assert store.claim("b-1", "1/2", ttl_s=0.2)
    assert not store.claim("b-1", "2/2", ttl_s=0.2)
    time.sleep(0.3)  # shard 1/2 was killed
    assert store.holder("b-1") is None
    assert store.claim("b-1", "2/2")
    assert not store.claim("b-1", "1/2")
    assert store.holder("b-1") == "2/2"
    store.put(entry("b-1", shrunk_by="2/2"))
    assert store.holder("b-1") == "2/2"


def test_an_expired_claim_with_an_entry_is_not_taken(store):
    assert store.claim("b-1", "1/2", ttl_s=0.1)
    store.put(entry("b-1"))
    time.sleep(0.2)
    assert not store.claim("b-1", "2/2")
    assert store.holder("b-1") == "1/2"  # the entry's shrunk_by


_CLAIMER = """
import sys
from conformance.fuzz.store import open_store
spec, owner = sys.argv[1], sys.argv[2]
with open_store(spec, attempts=2, backoff_s=0.05, timeout_s=1.0) as store:
    print("ready", flush=True)
    for line in sys.stdin:  # a round: the ids, given to every shard at the same moment
        print(" ".join(["won"] + [i for i in line.split() if store.claim(i, owner)]), flush=True)
"""


def test_shards_racing_for_the_same_bugs_claim_each_once(spec):
    """8 processes claim the same 20 bugs at once (in 5 rounds, for more
    chances to meet): 10 never claimed, 10 whose claim expired (their shard
    was killed). Each bug goes to exactly one shard."""
    rounds = [[f"b-{r}-{n:02d}" for n in range(20)] for r in range(5)]
    with open_store(spec, **FAST) as store:
        for ids in rounds:
            assert all(store.claim(bug_id, "killed", ttl_s=0.05) for bug_id in ids[10:])
    shards = {
        f"{n}/8": subprocess.Popen(
            [sys.executable, "-c", _CLAIMER, spec, f"{n}/8"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(1, 9)
    }
    won: dict[str, list[str]] = {owner: [] for owner in shards}
    try:
        for shard in shards.values():
            assert shard.stdout.readline() == "ready\n"
        time.sleep(0.06)  # the killed shard's claims (50 ms) have surely expired
        for number, ids in enumerate(rounds):
            order = list(shards.values())[number:] + list(shards.values())[:number]
            for shard in order:  # who hears first changes from round to round
                shard.stdin.write(" ".join(ids) + "\n")
                shard.stdin.flush()
            for owner, shard in shards.items():
                answer = shard.stdout.readline().split()
                assert answer[:1] == ["won"]
                won[owner] += answer[1:]
        for shard in shards.values():
            shard.stdin.close()
            assert shard.wait(timeout=60) == 0
    finally:
        for shard in shards.values():
            shard.kill()
            shard.wait()
    claimed = sorted(bug_id for ids_won in won.values() for bug_id in ids_won)
    assert claimed == sorted(bug_id for ids in rounds for bug_id in ids)  # each once
    with open_store(spec, **FAST) as store:
        for owner, ids_won in won.items():
            assert all(store.holder(bug_id) == owner for bug_id in ids_won)


def test_a_late_taker_does_not_remove_a_fresh_claim(tmp_path):
    """The race a bare rename-away loses: shard A judges a claim stale, shard
    B takes it over and claims the bug, then A comes to remove what it judged
    stale: B's claim stays, and A does not get the bug."""
    store = DirectoryStore(tmp_path / "store")
    assert store.claim("b-1", "killed", ttl_s=0.05)
    time.sleep(0.06)
    path = tmp_path / "store" / "claims" / "b-1"
    owner, live, inode = store._claim_of(path, 900.0)  # A's look
    assert (owner, live) == ("killed", False)
    assert store.claim("b-1", "B")
    store._take_over(path, inode, 900.0)  # A, late
    assert store.holder("b-1") == "B"
    assert not store.claim("b-1", "A")
    assert store.holder("b-1") == "B"


# -- a folder ------------------------------------------------------------------------

_WRITER = """
import sys
from conformance.fuzz.store import DirectoryStore, StoreEntry
store = DirectoryStore(sys.argv[1])
bug = {"runtime": "onnxruntime", "kind": "value_mismatch", "op": "Gather"}
n = 0
while True:
    n += 1
    size = 1 + (n * 7919) % 400_000  # up to 400 kB: a write takes a while
    store.put(StoreEntry(f"b-{n % 5}", {**bug, "n": n, "size": size}, sys.argv[2], "static", "1/1",
                    {"padding": "y" * size}))
    print(n, flush=True)
"""


def test_a_writer_killed_mid_write_leaves_no_torn_entry(tmp_path):
    """A shard killed (SIGKILL) while it writes entries, read all along by
    another: every entry there parses and is whole, whenever it is read."""
    folder = tmp_path / "store"
    reader = DirectoryStore(folder)
    for delay in [0.05, 0.13, 0.21, 0.37]:
        writer = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(folder), CASE_YAML.format(text="x")],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout is not None and writer.stdout.readline()  # it writes
        stop = time.monotonic() + delay
        while time.monotonic() < stop:
            for found in reader.entries():  # never skipped: never half a file
                assert len(found.found["padding"]) == found.bug["size"]
            assert reader.skipped == []
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
        found = reader.entries()
        assert [e.bug_id for e in found] == [f"b-{n}" for n in range(5)]
        assert all(len(e.found["padding"]) == e.bug["size"] for e in found)
        assert reader.skipped == []


def test_a_torn_entry_file_is_named_and_skipped(tmp_path):
    """A bad entry is skipped with one line naming its file and what is
    wrong (a campaign and a replay go on with the others); never an error."""
    store = DirectoryStore(tmp_path / "store")
    store.put(entry("b-1"))
    store.put(entry("b-3"))
    path = tmp_path / "store" / "entries" / "b-1.json"
    whole = path.read_bytes()
    shown = re.escape(str(path))

    def skipped_with(pattern: str) -> None:
        store.skipped.clear()
        assert store.get("b-1") is None
        assert [e.bug_id for e in store.entries()] == ["b-3"]  # the other one is read
        assert len(store.skipped) == 1, store.skipped  # one line, however often it is read
        assert re.fullmatch(f"skipped {shown}: {pattern}", store.skipped[0]), store.skipped[0]
        assert store.skipped[0] in store.warnings

    path.write_bytes(whole[: len(whole) // 2])  # copied half
    skipped_with("not a whole store entry .*")
    path.write_bytes(b"\xff\xfe garbage")
    skipped_with(r"not UTF-8 text \(invalid start byte at byte 0\)")
    path.write_text(json.dumps(entry("b-2").to_json()))  # a file renamed by hand
    skipped_with("holds the entry of b-2, not of b-1")
    path.write_text(json.dumps({**entry("b-1").to_json(), "found": None}))
    skipped_with(r"found: None is not an object \(docs/schemas/store-entry.schema.json\)")


def test_a_folder_that_is_not_a_store_is_left_alone(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine\n")
    with pytest.raises(StoreError, match=f"^{re.escape(str(theirs))}: not a fuzz store"):
        open_store(theirs)
    assert sorted(p.name for p in theirs.iterdir()) == ["notes.txt"]  # nothing written
    (theirs / "store.json").write_text('{"kind": "something else"}')
    with pytest.raises(StoreError, match=r"store\.json: not a fuzz store"):
        open_store(theirs)
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match="not a fuzz store: not a folder"):
        open_store(tmp_path / "file")
    newer = tmp_path / "newer"
    DirectoryStore(newer)
    (newer / "store.json").write_text('{"kind": "conformance fuzz store", "format": 9}')
    with pytest.raises(StoreError, match="store format 9, this version reads 1"):
        open_store(newer)


def test_a_new_or_empty_folder_becomes_a_store(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder in [empty, tmp_path / "a" / "b"]:
        store = open_store(folder)
        assert isinstance(store, DirectoryStore) and store.location == str(folder)
        assert json.loads((folder / "store.json").read_text())["kind"] == "conformance fuzz store"
        store.put(entry("b-1"))
        assert open_store(str(folder)).get("b-1") == entry("b-1")  # a store: opened again


# -- Redis ---------------------------------------------------------------------------


def test_a_redis_restart_loses_nothing(redis_server, tmp_path):
    """The server goes away: put keeps the entry in the spool, claim lets the
    shard shrink, entries fail naming the server (get answers None with a
    warning); back, the spool is pushed."""
    spool = tmp_path / "spool"
    store = open_store(redis_server.url, spool=spool, **FAST)
    assert isinstance(store, RedisStore)
    store.put(entry("b-1"))
    redis_server.stop()

    store.put(entry("b-2", text="found while the server was away"))
    assert len(store.warnings) == 1
    assert re.fullmatch(
        rf"cannot reach {re.escape(redis_server.url)}: Connection refused "
        rf"\(2 attempts over 0\.\d s\); the entry of b-2 is kept in "
        rf"{re.escape(str(spool))} until the server is back",
        store.warnings[0],
    ), store.warnings[0]
    assert DirectoryStore(spool).entries() == [entry("b-2", text="found while the server was away")]
    assert store.claim("b-3", "1/2")  # better shrunk twice than lost
    assert "1/2 shrinks b-3 without a claim" in store.warnings[1]
    assert store.holder("b-1") is None
    assert "the holder of b-1 is unknown" in store.warnings[2]
    with pytest.raises(StoreError, match=f"^cannot reach {redis_server.url}: Connection refused"):
        store.entries()  # a replay cannot go on without the store
    assert store.get("b-1") is None  # a campaign goes on: the bug is not known to be stored
    assert "the entry of b-1 is unknown" in store.warnings[3]

    redis_server.start()  # without persistence: b-1 is gone with the old server
    assert store.get("b-2") == entry("b-2", text="found while the server was away")
    assert DirectoryStore(spool).entries() == []
    assert store.entries() == [entry("b-2", text="found while the server was away")]
    assert len(store.warnings) == 4
    store.close()


def test_a_spool_left_behind_is_pushed_by_the_next_store(redis_server, tmp_path):
    spool = DirectoryStore(tmp_path / "spool")  # a campaign killed with the server away
    spool.put(entry("b-9"))
    with open_store(redis_server.url, spool=tmp_path / "spool", **FAST) as store:
        assert store.entries() == [entry("b-9")]
    assert spool.entries() == []


def test_without_a_spool_a_lost_put_is_an_error(redis_server):
    store = RedisStore(redis_server.url, **FAST)
    redis_server.stop()
    with pytest.raises(StoreError, match=r"Connection refused .*; the entry of b-1 is not kept"):
        store.put(entry("b-1"))


def test_a_spool_that_is_not_a_store_is_an_error(redis_server, tmp_path):
    (tmp_path / "notes.txt").write_text("somebody's folder\n")
    store = RedisStore(redis_server.url, tmp_path, **FAST)
    redis_server.stop()
    with pytest.raises(StoreError, match=r"could not be spooled either: .*not a fuzz store"):
        store.put(entry("b-1"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


@pytest.mark.xdist_group("timing")  # its time is asserted: tests/tiers.py
def test_no_server_is_named(tmp_path):
    url = f"redis://127.0.0.1:{free_port()}/0"
    started = time.monotonic()
    with pytest.raises(StoreError, match=f"^cannot reach {url}: Connection refused") as caught:
        open_store(url, spool=tmp_path / "spool", **FAST)
    assert caught.value.exit_code == 2
    assert time.monotonic() - started < 5
    assert not (tmp_path / "spool").exists()


@pytest.mark.xdist_group("timing")  # its time is asserted: tests/tiers.py
def test_retries_are_bounded_by_default():
    """5 attempts, backoff doubling from 0.25 s: about 4 s, then the error.
    The waits alone are 3.75 s; what the attempts add is bounded by their
    socket timeout (2 s each), not by the machine's load (4.1 s in all, and
    more, on a loaded machine), so those are the bounds held."""
    url = f"redis://:secret@127.0.0.1:{free_port()}/0"
    started = time.monotonic()
    with pytest.raises(StoreError, match=r"redis://:\*\*\*@127.*\(5 attempts over ") as raised:
        open_store(url)
    took = time.monotonic() - started
    said = re.search(r"\(5 attempts over (\d+\.\d) s\)", str(raised.value))
    assert said is not None, raised.value
    assert 3.7 <= float(said.group(1)) <= min(took + 0.05, 3.75 + 5 * 2.0), (raised.value, took)


@pytest.mark.xdist_group("timing")  # its time is asserted: tests/tiers.py
def test_a_refused_login_is_not_retried_and_hides_the_password(redis_server):
    url = redis_server.url.replace("redis://", "redis://someone:hunter2@")
    started = time.monotonic()
    with pytest.raises(StoreError, match=r"^redis://\*\*\*:\*\*\*@127.*: refused: ") as caught:
        open_store(url, attempts=5, backoff_s=1.0)
    assert "hunter2" not in str(caught.value) and "someone" not in str(caught.value)
    assert time.monotonic() - started < 1  # no retry: 1 s backoff not slept


def test_a_garbled_value_names_its_key_and_is_skipped(redis_server):
    import redis

    with open_store(redis_server.url, **FAST) as store:
        store.put(entry("b-3"))
        redis.Redis.from_url(redis_server.url).set("conformance:fuzz:entry:b-1", b"{half")
        assert store.get("b-1") is None
        assert re.fullmatch(
            f"skipped {redis_server.url} conformance:fuzz:entry:b-1: not a whole store entry .*",
            store.skipped[0],
        ), store.skipped
        assert [e.bug_id for e in store.entries()] == ["b-3"]
        assert len(store.skipped) == 1
        store.put(entry("b-1"))  # and one set by hand under the key of another bug
        redis.Redis.from_url(redis_server.url).set(
            "conformance:fuzz:entry:b-2", json.dumps(entry("b-1").to_json())
        )
        assert store.get("b-2") is None
        assert store.skipped[-1].endswith("entry:b-2: holds the entry of b-1, not of b-2")
        assert [e.bug_id for e in store.entries()] == ["b-1", "b-3"]


def test_without_the_redis_package_the_extra_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "redis", None)  # what `import redis` does when absent
    with pytest.raises(StoreError, match=r"pip install 'onnx-gather-conformance\[redis\]'"):
        open_store("redis://127.0.0.1:6379/0")


def test_open_store_tells_the_layouts_apart(tmp_path, redis_server):
    assert isinstance(open_store(tmp_path / "s"), DirectoryStore)
    assert isinstance(open_store(str(tmp_path / "redis:")), DirectoryStore)
    with open_store(redis_server.url) as store:
        assert isinstance(store, RedisStore) and isinstance(store, Store)
        assert store.location == redis_server.url
