"""The regression store attacked (issue 32, items 1 and 6 to 10): a real
redis-server that asks for a password (given in each spelling the Redis
client reads), a store holding hostile entries any machine of a fleet could
write, a server killed mid-campaign, replay given no store, URLs that do not
parse.

Each defect once seen: the password verbatim in header.json, report.html, the
.lock, findings.json and error messages; one hostile entry ending every replay
and campaign in an internal error; NaN copied into replay.json; a 10 s
campaign taking 40 s once Redis died; `fuzz replay --store off` a TypeError;
`redis://host:port/abc` silently database 0.

The commands run in-process (``conformance.cli.main``) on onnx.reference, the
cheapest runtime to start; the servers and runs are shared by module-scoped
fixtures.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

from conformance import cli, strict_json
from conformance.engine import credentials, files, records
from conformance.fuzz.campaign import FUZZ_TIMEOUTS, Campaign, CampaignOptions
from conformance.fuzz.store import DirectoryStore, RedisStore, StoreEntry, StoreError, open_store
from conformance.report import terminal
from tests.conftest import RedisServer, free_port

SECRET = "Pw-5ecret-7f3a"  # nothing any output may hold
USER = "fleetuser"
# A campaign's budget that bounds nothing in a test: --max-examples ends it
# (however loaded the machine, it runs its examples long before).
NEVER_REACHED = 3600
# The spellings of a password the Redis client reads (the module docstring of
# conformance/engine/credentials.py), each with what users are shown instead.
SPELLINGS = {
    "empty-user": ("redis://:{pw}@127.0.0.1:{port}/{db}", "redis://:***@127.0.0.1:{port}/{db}"),
    "user": ("redis://{user}:{pw}@127.0.0.1:{port}/{db}", "redis://***:***@127.0.0.1:{port}/{db}"),
    "query": (
        "redis://127.0.0.1:{port}/{db}?password={pw}",
        "redis://127.0.0.1:{port}/{db}?password=***",
    ),
    "query-user": (
        "redis://127.0.0.1:{port}/{db}?username={user}&password={pw}",
        "redis://127.0.0.1:{port}/{db}?username=***&password=***",
    ),
}
CASE_YAML = """\
cases:
  - id: stored
    description: a reproducer as a campaign stores it
    op: Gather
    opset: 13
    dtype: float32
    attributes: {axis: 0}
    data: [1.0, 2.0]
    indices: [1]
    expected: oracle
    spec: 004_d4766443270c2fb5.txt
"""
GOOD = StoreEntry(
    bug_id="b-good",
    bug={"runtime": "reference", "kind": "value_mismatch", "op": "Gather", "cause": "x"},
    case_yaml=CASE_YAML,
    variant="static",
    shrunk_by="1/1@run",
    found={"seed": 1, "versions": {"reference": "1.0"}},
)


def _good(**changes) -> dict:
    return {**GOOD.to_json(), **changes}


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


def _hostile() -> dict[str, bytes]:
    """Entry id -> what a hostile or broken machine put under its key, and why it is refused."""
    bug = GOOD.bug
    nested = "[" * 100_000 + "]" * 100_000
    return {
        "b-variant": json.dumps(_good(bug_id="b-variant", variant="bogus")).encode(),
        "b-runtime": json.dumps(_good(bug_id="b-runtime", bug={**bug, "runtime": ["a"]})).encode(),
        "b-kind": json.dumps(_good(bug_id="b-kind", bug={**bug, "kind": {"k": 1}})).encode(),
        "b-nested": nested.encode(),
        "b-nested-field": json.dumps(
            _good(bug_id="b-nested-field", found={"deep": _deep(120)})
        ).encode(),
        "b-binary": b"\xff\xfe\x00\x81 not text",
        "b-missing": json.dumps(
            {k: v for k, v in _good(bug_id="b-missing").items() if k != "case_yaml"}
        ).encode(),
        "b-types": json.dumps(_good(bug_id="b-types", shrunk_by=7)).encode(),
        "b-format": json.dumps(_good(bug_id="b-format", format=True)).encode(),
        "b-nan": json.dumps(_good(bug_id="b-nan", found={"seed": float("nan")})).encode(),
        "b-infinity": json.dumps(
            _good(bug_id="b-infinity", bug={**bug, "x": float("inf")})
        ).encode(),
        "b-case": json.dumps(_good(bug_id="b-case", case_yaml="cases: [1, 2")).encode(),
        "b-two": json.dumps(
            _good(
                bug_id="b-two",
                case_yaml=CASE_YAML + CASE_YAML[7:].replace("id: stored", "id: second"),
            )
        ).encode(),
        "b-yaml": json.dumps(
            _good(bug_id="b-yaml", case_yaml="a: !!python/object:os.system {}")
        ).encode(),
    }


HOSTILE_REASONS = {
    "b-variant": "variant: 'bogus' is not one of \"static\", ",
    "b-runtime": "bug.runtime: ['a'] is not text (docs/schemas/store-entry.schema.json)",
    "b-kind": "bug.kind: {'k': 1} is not text",
    "b-nested": "nested deeper than 98 levels",
    "b-nested-field": "nested deeper than 98 levels",
    "b-binary": "not UTF-8 text",
    "b-missing": "case_yaml: None is not there",
    "b-types": "shrunk_by: 7 is not text",
    "b-format": "entry format True, this version reads 1",
    "b-nan": "NaN is not a JSON number",
    "b-infinity": "Infinity is not a JSON number",
    "b-case": "case_yaml line 1: YAML: ",
    "b-two": "case_yaml holds 2 cases, not one",
    "b-yaml": "case_yaml",
}


def _fill_redis(url: str) -> None:
    """The good entry, every hostile one, a list under an entry's key and a
    key whose bug id is binary bytes."""
    import redis

    client = redis.Redis.from_url(url)
    client.set("conformance:fuzz:entry:b-good", json.dumps(GOOD.to_json()))
    for bug_id, value in _hostile().items():
        client.set(f"conformance:fuzz:entry:{bug_id}", value)
    client.rpush("conformance:fuzz:entry:b-list", "a", "b")
    client.set(b"conformance:fuzz:entry:\xff\xfe", json.dumps(GOOD.to_json()))
    client.set("someone-else:key", "untouched")
    client.close()


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    """A redis-server asking for SECRET (the default user's password, and an
    ACL user USER's), its databases 0 and 1 filled alike."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    server = RedisServer(
        tmp_path_factory.mktemp("guarded-redis"),
        ("--requirepass", SECRET, "--user", USER, "on", f">{SECRET}", "~*", "&*", "+@all"),
    )
    server.start()
    try:
        for db in (0, 1):
            _fill_redis(f"redis://:{SECRET}@127.0.0.1:{server.port}/{db}")
        yield server
    finally:
        server.stop()


def _urls(server: RedisServer, spelling: str, db: int = 0) -> tuple[str, str]:
    given, shown = SPELLINGS[spelling]
    values = {"pw": SECRET, "user": USER, "port": server.port, "db": db}
    return given.format(**values), shown.format(**values)


def _main(argv: list[str]) -> tuple[int, str]:
    """``conformance ARGV`` in this process: (exit code, stdout and stderr);
    sys.argv is the command line, as the console script would see it."""
    out = io.StringIO()
    saved = sys.argv
    sys.argv = ["conformance", *argv]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            code = cli.main(argv)
    finally:
        sys.argv = saved
    return code, out.getvalue()


def _strict_json(path: Path) -> dict:
    """The file as JSON, refusing NaN and Infinity (which json reads by default)."""

    def refuse(name: str):
        raise AssertionError(f"{path}: {name} is not JSON")

    return json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse)


# The replays spell the credentials in the URL's authority and in its query;
# the campaign spells them as user:password@ (each run costs seconds: the
# spellings each output is held to are these three, and every spelling is held
# to the error messages and to credentials' unit tests).
REPLAYED = ["empty-user", "query-user"]


@pytest.fixture(scope="module", params=REPLAYED)
def replayed(request, guarded, tmp_path_factory):
    """`conformance fuzz replay` of database 0, the password in one spelling."""
    url, shown = _urls(guarded, request.param)
    out = tmp_path_factory.mktemp(f"replay-{request.param}") / "out"
    code, text = _main(["fuzz", "replay", "--runtime", "reference", "--store", url,
                        "--out", str(out)])  # fmt: skip
    assert code in (0, 1), text
    return {"out": out, "text": text, "shown": shown, "url": url}


@pytest.fixture(scope="module")
def campaign(guarded, tmp_path_factory):
    """A campaign of 16 examples on database 1 (its bugs go there), the
    password in the spelling with user and password in the URL. Bounded by
    examples, with a budget it never reaches: an 8 s budget ran out before
    any example on a loaded machine (exit 2, and 11 tests erred: issue 44,
    item 17); 16 examples run however loaded the machine."""
    url, shown = _urls(guarded, "user", db=1)
    out = tmp_path_factory.mktemp("campaign") / "out"
    code, text = _main(["fuzz", "--runtime", "reference", "--max-examples", "16",
                        "--time-budget", str(NEVER_REACHED), "--seed", "1", "--store", url,
                        "--out", str(out), "--no-progress"])  # fmt: skip
    assert code in (0, 1), text
    return {"out": out, "text": text, "shown": shown, "url": url}


# -- 1: credentials --------------------------------------------------------------------

OUTPUTS = ["terminal", "header.json", "report.html", ".lock", "replay.json"]


def _output(run: dict, name: str) -> str:
    return run["text"] if name == "terminal" else (run["out"] / name).read_text("utf-8")


@pytest.mark.parametrize("output", OUTPUTS)
def test_a_replay_shows_and_records_no_credential(replayed, output):
    text = _output(replayed, output)
    assert SECRET not in text and USER not in text
    # The store is named, masked: where the command line is (every output but
    # replay.json), and where the store's location is (the terminal, replay.json).
    assert replayed["shown"] in text.replace("&amp;", "&")


@pytest.mark.parametrize("output", ["terminal", "header.json", "report.html", ".lock",
                                    "findings.json"])  # fmt: skip
def test_a_campaign_shows_and_records_no_credential(campaign, output):
    text = _output(campaign, output)
    assert SECRET not in text and USER not in text
    assert campaign["shown"] in text


def test_a_report_of_an_older_folder_masks_its_recorded_command(campaign, tmp_path):
    """A folder written before the command was recorded masked: the report
    masks it when it shows it."""
    folder = tmp_path / "old"
    shutil.copytree(campaign["out"], folder)
    header = json.loads((folder / "header.json").read_text())
    header["command"] = ["conformance", "fuzz", "--store", campaign["url"]]
    (folder / "header.json").write_text(json.dumps(header))
    code, text = _main(["report", str(folder), "-o", str(tmp_path / "report.html")])
    assert code == 0, text
    html = (tmp_path / "report.html").read_text()
    assert SECRET not in html and USER not in html and campaign["shown"] in html


def test_the_recorded_locations_are_masked_exactly(replayed, campaign):
    assert _strict_json(replayed["out"] / "replay.json")["store"] == replayed["shown"]
    header = _strict_json(replayed["out"] / "header.json")
    assert header["replay"]["store"] == replayed["shown"]
    command = header["command"]
    assert command[command.index("--store") + 1] == replayed["shown"]
    assert _strict_json(campaign["out"] / "findings.json")["store"]["location"] == campaign["shown"]


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
@pytest.mark.parametrize(
    ("broken", "says"),
    [
        (lambda url: url.replace("/{db}", "/abc", 1), "the database 'abc' is not a number"),
        (lambda url: url.replace(":{port}", ":port"), "Port could not be cast"),
        (lambda url: url.replace("127.0.0.1:{port}", "[::1"), "Invalid IPv6 URL"),
        (lambda url: url + ("&" if "?" in url else "?") + "decode_responses=1", "unknown option"),
        (lambda url: url + "#frag", "a fragment"),
    ],
)
def test_a_url_that_does_not_parse_is_refused_masked(spelling, broken, says):
    """Items 1 and 10: refused (exit 2) before any connection, the
    credentials masked in the message, whatever part is broken."""
    url = broken(SPELLINGS[spelling][0]).format(pw=SECRET, user=USER, port=free_port(), db=0)
    with pytest.raises(StoreError, match=re.escape(says)) as caught:
        open_store(url)
    assert SECRET not in str(caught.value) and USER not in str(caught.value)
    assert str(caught.value).startswith(credentials.mask_url(url) + ": not a Redis URL: ")


def test_a_malformed_url_exits_2_masked_on_both_commands(tmp_path):
    url = f"redis://{USER}:{SECRET}@127.0.0.1:{free_port()}/abc"
    for argv in (["fuzz", "replay", "--store", url, "--runtime", "reference"],
                 ["fuzz", "--store", url, "--runtime", "reference", "--time-budget", "1",
                  "--seed", "1", "--out", str(tmp_path / "out")]):  # fmt: skip
        code, text = _main(argv)
        assert code == 2, text
        assert "not a Redis URL: the database 'abc' is not a number" in text
        assert SECRET not in text and USER not in text
        assert "internal error" not in text
    assert not (tmp_path / "out").exists()


def test_the_lock_of_a_running_command_is_masked(tmp_path, monkeypatch):
    """The .lock names the command while it runs (another run is refused
    naming it): its credentials masked."""
    monkeypatch.setattr(sys, "argv", ["conformance", "fuzz", f"--store=redis://:{SECRET}@h/0",
                                      "--store", f"redis://h/0?p%61ssword={SECRET}"])  # fmt: skip
    lock = files.FolderLock(tmp_path).acquire()
    try:
        with pytest.raises(files.FolderBusy) as busy:
            files.FolderLock(tmp_path).acquire()
    finally:
        lock.release()
    for text in ((tmp_path / files.LOCK).read_text(), str(busy.value)):
        assert SECRET not in text
        assert "--store=redis://:***@h/0 --store redis://h/0?p%61ssword=***" in text


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (["fuzz", "--stoer", f"redis://{USER}:{SECRET}@h/0"], "redis://***:***@h/0"),
        (["fuzz", "replay", "--store", "h", f"redis://h/0?password={SECRET}"],
         "unrecognized arguments: redis://h/0?password=***"),
    ],
)  # fmt: skip
def test_a_usage_error_repeating_the_url_masks_it(argv, shown):
    """argparse repeats what it could not read (a misspelt --store's value)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), pytest.raises(SystemExit) as leaving:
        cli.main(argv)
    assert leaving.value.code == 2
    assert shown in err.getvalue()
    assert SECRET not in err.getvalue() and USER not in err.getvalue()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://:PW@h:1/0", "redis://:***@h:1/0"),
        ("redis://user:PW@h/0", "redis://***:***@h/0"),
        ("redis://PW@h/0", "redis://***@h/0"),
        ("redis://h/0?password=PW", "redis://h/0?password=***"),
        ("redis://h/0?db=1&username=U&password=PW", "redis://h/0?db=1&username=***&password=***"),
        ("redis://h/0?p%61ssword=PW", "redis://h/0?p%61ssword=***"),  # as the client decodes it
        ("rediss://h/0?ssl_password=PW;x=1", "rediss://h/0?ssl_password=***;x=1"),
        ("REDIS://:PW@h/0", "REDIS://:***@h/0"),
        ("unix://:PW@/run/redis.sock?db=0", "unix://:***@/run/redis.sock?db=0"),
        ("redis://:P/W@h/0", "redis://:***@h/0"),  # a password holding / ends no authority here
        ("redis://:P@W@h/0", "redis://:***@h/0"),
        ("redis://:PW@h:notaport/0", "redis://:***@h:notaport/0"),  # does not parse: masked still
        ("redis://h/0?password=P@W", "redis://***"),  # errs on the side of hiding
        ("/a/folder", "/a/folder"),
    ],
)
def test_the_mask(url, shown):
    assert credentials.mask_url(url) == shown
    assert credentials.mask_arg(f"--store={url}") == f"--store={shown}"
    assert credentials.mask_text(f"error: {url}: reason") == f"error: {shown}: reason"


def test_internal_errors_and_error_lines_mask_urls():
    error = StoreError(f"somewhere: redis://{USER}:{SECRET}@h:1/0 and more")
    assert terminal.error_lines(error) == ["somewhere: redis://***:***@h:1/0 and more"]


# -- 6 and 7: hostile entries -----------------------------------------------------------


def test_a_replay_skips_each_hostile_entry_with_a_line_and_runs_the_others(replayed):
    content = _strict_json(replayed["out"] / "replay.json")  # 7: no NaN reached it
    assert [bug["id"] for bug in content["bugs"]] == ["b-good"]
    assert content["bugs"][0]["status"] in ("fixed", "still there", "changed")
    skipped = content["skipped"]
    prefix = f"skipped {replayed['shown']} conformance:fuzz:entry:"
    for bug_id, reason in HOSTILE_REASONS.items():
        lines = [line for line in skipped if line.startswith(f"{prefix}{bug_id}: ")]
        assert len(lines) == 1 and reason in lines[0], (bug_id, skipped)
        assert f"store: {lines[0]}" in replayed["text"]  # on the terminal, a line each
    assert f"{prefix}b-list: holds a Redis list, not an entry's string" in skipped
    assert f"{prefix}\\xff\\xfe: not an entry's key: bad bug id '\\\\xff\\\\xfe'" in skipped
    assert len(skipped) == len(HOSTILE_REASONS) + 2
    assert "internal error" not in replayed["text"]


def test_a_campaign_skips_hostile_entries_and_fuzzes(campaign):
    findings = _strict_json(campaign["out"] / "findings.json")  # 7: no NaN reached it
    assert [item["id"] for item in findings["replay"]] == ["b-good"]
    warnings = findings["store"]["warnings"]
    for bug_id in HOSTILE_REASONS:
        assert any(f"conformance:fuzz:entry:{bug_id}: " in line for line in warnings), bug_id
    assert findings["examples"] == 16
    assert "internal error" not in campaign["text"]
    skipped_lines = [line for line in campaign["text"].splitlines() if line.startswith("store: ")]
    assert any("entry:b-variant: variant: 'bogus'" in line for line in skipped_lines)


def test_foreign_keys_are_untouched(guarded, replayed, campaign):
    import redis

    client = redis.Redis.from_url(f"redis://:{SECRET}@127.0.0.1:{guarded.port}/1")
    assert client.get("someone-else:key") == b"untouched"
    assert client.lrange("conformance:fuzz:entry:b-list", 0, -1) == [b"a", b"b"]  # not repaired
    client.close()


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("b-1.json", None, "not a regular file"),  # a FIFO: reading it would wait forever
        ("b-2.json", "/dev/zero", "cannot read the entry: Too many levels of symbolic links"),
        ("b-3.json", b"[" * 100_000, "nested deeper than 98 levels"),
        ("b-4.json", json.dumps(_good(bug_id="b-4", found={"n": 1e999})).encode(), "Infinity"),
        ("b-5.json", json.dumps(_good(bug_id="b-5", bug=[])).encode(), "bug: [] is not an object"),
        ("b-6.json", b'{"format": 1, "bug_id": "b-6", "n": ' + b"9" * 5000 + b"}", "digits"),
    ],
)
def test_a_folder_store_skips_hostile_files(tmp_path, name, content, says):
    import os

    store = DirectoryStore(tmp_path / "store")
    store.put(GOOD)
    path = tmp_path / "store" / "entries" / name
    if content is None:
        os.mkfifo(path)
    elif isinstance(content, str):
        path.symlink_to(content)
    else:
        path.write_bytes(content)
    assert store.entries() == [GOOD]
    assert len(store.skipped) == 1 and store.skipped[0].startswith(f"skipped {path}: ")
    assert says in store.skipped[0], store.skipped[0]
    assert store.get(name.removesuffix(".json")) is None
    assert store.holder(name.removesuffix(".json")) is None


def test_no_output_file_holds_a_non_json_number(tmp_path):
    """Item 7 where the files are written: write_json refuses NaN and
    Infinity, naming the file and the field, and writes nothing."""
    path = tmp_path / "replay.json"
    with pytest.raises(files.NotJson, match=r"replay.json: not written: bugs\[1\]\.found\.at "):
        files.write_json(path, {"bugs": [{}, {"found": {"at": float("nan")}}]})
    assert not path.exists()
    with pytest.raises(ValueError):  # the store's own writes refuse them too
        open_store(tmp_path / "s").put(
            StoreEntry(**{**GOOD.__dict__, "found": {"x": float("inf")}})
        )


def test_a_claim_key_set_by_hand_is_not_an_error(redis_server):
    import redis

    client = redis.Redis.from_url(redis_server.url)
    client.rpush("conformance:fuzz:claim:b-1", "x")
    with open_store(redis_server.url) as store:
        assert store.claim("b-1", "1/1") is True
        assert "conformance:fuzz:claim:b-1: not a claim" in store.warnings[0]
        client.rpush("conformance:fuzz:entry:b-2", "x")
        assert store.get("b-2") is None
        assert "entry:b-2: not an entry's string: WRONGTYPE" in store.skipped[0]
    client.close()


# -- 8: a dead server does not stretch the budget ----------------------------------------


class _TimedStore(RedisStore):
    """A real Redis store that adds up the time the campaign spends in its
    operations (each one the store's own, timed around it)."""

    spent_s = 0.0

    def _timed(self, operation, *args, **kwargs):
        started = time.monotonic()
        try:
            return operation(*args, **kwargs)
        finally:
            self.spent_s += time.monotonic() - started

    def put(self, entry):
        return self._timed(super().put, entry)

    def get(self, bug_id):
        return self._timed(super().get, bug_id)

    def claim(self, bug_id, owner, ttl_s=900.0):
        return self._timed(super().claim, bug_id, owner, ttl_s)

    def holder(self, bug_id):
        return self._timed(super().holder, bug_id)


@pytest.mark.xdist_group("timing")  # its time is asserted: tests/tiers.py
def test_a_redis_killed_mid_campaign_costs_no_more_than_a_timeout(redis_server, tmp_path):
    """The server is killed as the first round starts: the first store
    operation finds it away (refused: at once), every later one goes to the
    spool at once; nothing is lost, and the store's operations together cost
    less than one --timeout (each operation retried for 4 s made a 10 s
    campaign 40 s). Bounded by examples, not by a budget (issue 44, item 17:
    a 3 s budget ran no example on a loaded machine, and nothing was tested):
    one round of 16, in which seed 3 finds bugs."""
    store = _TimedStore(redis_server.url, tmp_path / "out" / "store-spool")  # 5 attempts
    settings = CampaignOptions(runtimes=[_target("reference")], time_budget=NEVER_REACHED,
                               seed=3, out_dir=tmp_path / "out", store=store, workers=1,
                               round_size=16, max_examples=16)  # fmt: skip

    def kill(status) -> None:
        if redis_server.process is not None:
            redis_server.stop()

    campaign = Campaign(settings, command=["conformance", "fuzz"], on_status=kill)
    try:
        campaign.execute()
    finally:
        store.close()
    assert campaign.bugs, "no bug found: no store operation was made after the kill"
    assert store.spent_s < FUZZ_TIMEOUTS.default, store.spent_s
    warnings = store.warnings
    assert re.match(rf"cannot reach {re.escape(redis_server.url)}: Connection refused "
                    r"\(2 attempts over 0\.\d s\)", warnings[0]), warnings  # fmt: skip
    assert all("not tried again" in line for line in warnings[1:]), warnings
    spooled = {entry.bug_id for entry in DirectoryStore(tmp_path / "out" / "store-spool").entries()}
    assert spooled == {bug.id for bug in campaign.bugs.values() if bug.claimed}


def _target(name: str):
    from conformance.engine.targets import parse

    return parse(name)


@pytest.mark.xdist_group("timing")  # its time is asserted: tests/tiers.py
def test_a_server_back_is_found_in_the_background_and_gets_the_spool(redis_server, tmp_path):
    store = RedisStore(redis_server.url, tmp_path / "spool", backoff_s=0.05)
    redis_server.stop()
    started = time.monotonic()
    store.put(GOOD)  # refused: found away at once
    assert store.claim("b-other", "1/1") is True  # and then not tried at all
    assert time.monotonic() - started < 0.5
    redis_server.start()
    deadline = time.monotonic() + 5
    while store._away_since is not None and time.monotonic() < deadline:
        time.sleep(0.02)  # the watcher's ping answers
    assert store._away_since is None
    store.close()  # pushes the spool, now that the server answers
    assert DirectoryStore(tmp_path / "spool").entries() == []
    with open_store(redis_server.url) as again:
        assert again.entries() == [GOOD]


def test_a_hung_server_costs_one_socket_timeout_once(redis_server, tmp_path):
    """A server that takes connections but answers nothing (stopped with
    SIGSTOP: a network cut looks so): the first operation waits one socket
    timeout and is not retried (another would wait as long), the next ones
    do not wait; the server resumed, the background ping finds it."""
    import signal

    store = RedisStore(redis_server.url, tmp_path / "spool", backoff_s=0.05, timeout_s=0.5)
    redis_server.process.send_signal(signal.SIGSTOP)
    try:
        started = time.monotonic()
        store.put(GOOD)
        first = time.monotonic() - started
        assert store.claim("b-other", "1/1") is True
        assert store.holder("b-other") is None
        others = time.monotonic() - started - first
    finally:
        redis_server.process.send_signal(signal.SIGCONT)
    assert 0.4 < first < 1.0, first  # one timeout of 0.5 s, no second attempt
    assert others < 0.1, others
    assert "Timeout reading from socket (1 attempt over 0." in store.warnings[0], store.warnings
    deadline = time.monotonic() + 10
    while store._away_since is not None and time.monotonic() < deadline:
        time.sleep(0.02)
    store.close()
    with open_store(redis_server.url) as again:
        assert again.entries() == [GOOD]


# -- 9: replay never creates a store ----------------------------------------------------


@pytest.mark.parametrize("spec", ["off", "typo/path", "", "file"])
def test_replay_needs_an_existing_store(tmp_path, monkeypatch, spec):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("not a store\n")
    code, text = _main(["fuzz", "replay", "--runtime", "reference", "--store", spec,
                        "--out", "out"])  # fmt: skip
    assert code == 2, text
    assert "internal error" not in text
    said = {"off": "names no store", "": "names no store", "typo/path": "no fuzz store here",
            "file": "not a fuzz store: not a folder"}[spec]  # fmt: skip
    assert said in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # nothing created


def test_replay_of_a_folder_that_is_not_a_store_creates_nothing(tmp_path):
    (tmp_path / "folder").mkdir()
    with pytest.raises(StoreError, match=r"no store\.json in this folder"):
        open_store(tmp_path / "folder", create=False)
    assert list((tmp_path / "folder").iterdir()) == []


# -- issue 44, item 7: a reproducer the oracle contradicts --------------------------------

CONTRADICTED = {  # what a hand-edited or hostile reproducer says to expect, the oracle not
    "expected": (
        "expected: oracle",
        "expected: [1.0]",
        "expected output differs from the oracle's",
    ),
    "expect_error": (
        "expected: oracle",
        "expect_error: index-out-of-range",
        "expects error index-out-of-range but the oracle gives an output of shape [1]",
    ),
}


@pytest.mark.parametrize("field", sorted(CONTRADICTED))
def test_a_reproducer_the_oracle_contradicts_ends_the_replay_with_exit_2(tmp_path, field):
    """Replayed as "fixed", exit 0, before: a case file that disagrees with
    the oracle is exit 2 for `run` and `cases validate`; a store's reproducer
    is one, written to DIR/replay/<bug id>.yaml and named there."""
    was, now, says = CONTRADICTED[field]
    store = DirectoryStore(tmp_path / "store")
    store.put(StoreEntry(**{**GOOD.__dict__, "case_yaml": CASE_YAML.replace(was, now)}))
    out = tmp_path / "out"
    code, text = _main(["fuzz", "replay", "--runtime", "reference", "--store",
                        str(tmp_path / "store"), "--out", str(out)])  # fmt: skip
    assert code == 2, text
    written = out / "replay" / "b-good.yaml"
    assert f"warning: {written}:2: stored.op13.float32.int64: {says}" in text
    assert "1 case problem(s): a case file's expectation disagrees with the oracle" in text
    problems = _strict_json(out / "summary.json")["case_problems"]
    assert [(p["source"], p["case_id"]) for p in problems] == [
        (f"{written}:2", "stored.op13.float32.int64")
    ]
    assert "internal error" not in text


def test_a_reproducer_the_oracle_contradicts_ends_a_campaign_with_exit_2(tmp_path):
    """The campaign replays its store first, through the same path: the
    reproducer's problem is the campaign's, named, and it exits 2."""
    was, now, says = CONTRADICTED["expected"]
    DirectoryStore(tmp_path / "store").put(
        StoreEntry(**{**GOOD.__dict__, "case_yaml": CASE_YAML.replace(was, now)})
    )
    out = tmp_path / "out"
    code, text = _main(["fuzz", "--runtime", "reference", "--max-examples", "4",
                        "--time-budget", str(NEVER_REACHED), "--seed", "1",
                        "--store", str(tmp_path / "store"), "--out", str(out),
                        "--no-progress"])  # fmt: skip
    assert code == 2, text
    written = out / "replay" / "b-good.yaml"
    assert f"warning: {written}:2: stored.op13.float32.int64: {says}" in text
    assert "1 case problem(s): a case file's expectation disagrees with the oracle" in text
    assert _strict_json(out / "findings.json")["examples"] == 4  # it fuzzed all the same


# -- issue 44, item 10: what the store accepts is written and read back -----------------


def _deepest_accepted(folder: Path) -> tuple[StoreEntry, int]:
    """The deepest entry a folder store accepts, and how many levels of
    lists its ``found`` holds: found by asking the store, not by knowing its
    limit."""
    store = DirectoryStore(folder)
    for levels in range(strict_json.MAX_DEPTH, 0, -1):
        deep = StoreEntry(**{**GOOD.__dict__, "found": {"deep": _deep(levels)}})
        store.put(deep)
        if store.entries() == [deep]:
            return deep, levels
    raise AssertionError("the store accepts no entry with a list in found")


def test_the_deepest_entry_the_store_accepts_is_written_and_read_back(tmp_path):
    """An entry 100 levels deep was accepted, copied two levels deeper into
    findings.json (replay[].found), which the tool's readers then refused:
    the campaign and `conformance gate` ended with exit 2 and no verdict."""
    deepest, levels = _deepest_accepted(tmp_path / "store")
    campaign_out, replay_out = tmp_path / "campaign", tmp_path / "replay"
    code, text = _main(["fuzz", "--runtime", "reference", "--max-examples", "4",
                        "--time-budget", str(NEVER_REACHED), "--seed", "1",
                        "--store", str(tmp_path / "store"), "--out", str(campaign_out),
                        "--no-progress"])  # fmt: skip
    assert code in (0, 1), text
    findings = records.read_folder(campaign_out).findings  # the tool's own reader
    assert findings is not None
    assert [item["found"] for item in findings["replay"]] == [deepest.found]
    code, text = _main(["gate", str(campaign_out)])
    assert code in (0, 1), text
    code, text = _main(["fuzz", "replay", "--runtime", "reference", "--store",
                        str(tmp_path / "store"), "--out", str(replay_out)])  # fmt: skip
    assert code in (0, 1), text
    replayed = strict_json.parse((replay_out / "replay.json").read_bytes())
    assert [bug["found"] for bug in replayed["bugs"] if bug["id"] == "b-good"] == [deepest.found]
    # One level deeper is refused when read, with a line naming the file and
    # the depth the deepest reached (the entry, its found, levels + 1 lists).
    store = DirectoryStore(tmp_path / "deeper")
    store.put(StoreEntry(**{**GOOD.__dict__, "found": {"deep": _deep(levels + 1)}}))
    assert store.entries() == []
    path = tmp_path / "deeper" / "entries" / "b-good.json"
    assert store.skipped == [
        f"skipped {path}: not a whole store entry (nested deeper than {levels + 3} levels)"
    ]
