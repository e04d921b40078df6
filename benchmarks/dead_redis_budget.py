"""How far past its budget a campaign runs when its Redis store dies mid-campaign.

    python benchmarks/dead_redis_budget.py [--budget 10] [--runtime reference] [--seed 3]
                                           [--kill-after 0] [--hang]

Starts a redis-server on a free loopback port (no persistence), runs a
campaign (`conformance.fuzz.campaign.Campaign`, rounds of 16) on a store on
it, and kills the server (`--hang`: stops it with SIGSTOP, a network cut's
look: every connection times out) `--kill-after` seconds into the campaign
(at the first status after that); prints the budget, the campaign's elapsed
time, the bugs found, the store operations that went to the spool and the
warnings' first lines. Issue 32 saw a 10 s campaign run 37 to 41 s (every
store operation retried for about 4 s).
"""

from __future__ import annotations

import argparse
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance.engine.targets import parse
from conformance.fuzz.campaign import Campaign, CampaignOptions
from conformance.fuzz.store import DirectoryStore, open_store


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> int:
    given = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    given.add_argument("--budget", type=float, default=10.0)
    given.add_argument("--runtime", default="reference")
    given.add_argument("--seed", type=int, default=3)
    given.add_argument("--kill-after", type=float, default=0.0)
    given.add_argument("--hang", action="store_true", help="SIGSTOP instead of SIGKILL")
    args = given.parse_args()
    if shutil.which("redis-server") is None:
        print("redis-server is not installed", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix="dead-redis-"))
    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(folder)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    time.sleep(0.3)
    url = f"redis://127.0.0.1:{port}/0"
    store = open_store(url, spool=folder / "out" / "store-spool")
    settings = CampaignOptions(runtimes=[parse(args.runtime)], time_budget=args.budget,
                               seed=args.seed, out_dir=folder / "out", store=store,
                               workers=1, round_size=16)  # fmt: skip
    dead = []

    def on_status(status) -> None:
        if not dead and status.elapsed_s >= args.kill_after:
            server.send_signal(signal.SIGSTOP if args.hang else signal.SIGKILL)
            dead.append(status.elapsed_s)

    campaign = Campaign(settings, command=["benchmark"], on_status=on_status)
    try:
        campaign.execute()
    finally:
        store.close()
        if args.hang:
            server.send_signal(signal.SIGCONT)
        server.kill()
        server.wait()
    spooled = DirectoryStore(folder / "out" / "store-spool").ids() if dead else []
    print(f"budget {args.budget:g} s, server {'stopped' if args.hang else 'killed'} at "
          f"{dead[0] if dead else float('nan'):.1f} s; campaign elapsed {campaign.elapsed():.2f} s "
          f"(over by {campaign.elapsed() - args.budget:+.2f} s); {len(campaign.bugs)} bugs, "
          f"{len(spooled)} entries spooled, {len(store.warnings)} warnings")  # fmt: skip
    for line in store.warnings[:3]:
        print("  " + line[:160])
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
