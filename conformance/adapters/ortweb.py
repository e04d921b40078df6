"""onnxruntime-web, the runtime of ONNX models in web pages (under
transformers.js and most in-browser demos): its WebAssembly backend run by
Node, its WebGPU backend run by headless Chromium (docs/browser.md).

Profiles of one runtime: ``onnxruntime-web:wasm`` (the default) and
``onnxruntime-web:webgpu``. The JavaScript side is onnxruntime-web itself,
from npm at the version ``ortweb_js/package-lock.json`` pins, installed by
``npm ci`` into a cache folder (``python -m
conformance.adapters.ortweb_js.install``), never imitated here. Each worker starts one
``node ortweb_js/runner.mjs`` for its life and feeds it every case, one JSON
line per request (tensors as base64 of their little-endian bytes); for
``webgpu`` that process starts one Chromium and serves it a page on
127.0.0.1 only, in which onnxruntime-web runs (runner.mjs says how).

Traps handled here:
- The runner or its browser dying (killed, crashed, out of memory) ends the
  runner: this worker then dies the same way (the runner's signal, or its
  exit status), so that the pool records the case that was running as a
  crash and goes on with a fresh worker; what the runner wrote to stderr is
  in the worker's, whose tail the crash record keeps.
- A node the WebGPU backend has no kernel for would run on onnxruntime-web's
  CPU (WebAssembly) kernels and be judged under WebGPU's name: the session is
  made with ``session.disable_cpu_ep_fallback``, so such a model is refused
  at load, and the refusal is not the backend's verdict: harness-unsupported,
  as for ONNX Runtime's other execution providers (``ort.py``). Gather of
  opsets 1-10 has no WebGPU kernel in 1.30.0. Constant folding would compute
  a Gather of two initializers on the CPU at load: a webgpu session is made
  with no graph optimization, so that every output is the WebGPU kernel's.
- A run that aborts onnxruntime-web's WebAssembly (``Aborted()``) or fails
  a wait on WebGPU's queue leaves the page unusable: every later run of it
  fails or hangs, in an order that depends on the packing. The runner then
  loads its page again (a new device and onnxruntime-web) and says so, and
  the sessions cached here, which were the old page's, are dropped; a page
  that cannot be loaded again ends the runner (a crash record).
- A model the WebGPU backend refuses for placement is refused again for every
  model of the same nodes, types and edges (its placement is a function of
  them: kernels are looked up by operator, opset and types): the adapter
  remembers the refusal by that key (:func:`placement_key`) and gives it again
  without a round trip to the page, where each attempt cost a session's
  making (a failed pack is tried again as halves, then case by case).
- onnxruntime-web has no bfloat16 or complex tensor: such an input or output
  cannot cross, harness-unsupported.
- Node, npm's install or Chromium missing: the worker does not start, with a
  line naming what to install (:func:`missing`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np

from conformance.adapters.contract import (
    Adapter,
    HarnessUnsupported,
    LoadError,
    RunError,
    Runtime,
    probe_model,
)
from conformance.adapters.ortweb_js import install as js
from conformance.tables import dtypes

RUNTIME_NAME = "onnxruntime-web"
JS = Path(__file__).with_name("ortweb_js")  # package.json, package-lock.json, runner.mjs
WASM, WEBGPU = "wasm", "webgpu"
# The project's dtype names that onnxruntime-web has a tensor type of, by the same name.
CARRIED = frozenset(
    {"float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
     "uint32", "uint64", "bool", "string"}
)  # fmt: skip
CHROMIUM_ENV = "CONFORMANCE_CHROMIUM"  # the browser, if not Debian's chromium on PATH
CHROMIUMS = ("chromium", "chromium-browser", "google-chrome")
# The refusal of a node the WebGPU backend has no kernel for (fallback disabled),
# in either of the two wordings ONNX Runtime gives it: the partitioner's, and the
# memcpy transformer's when no provider was assigned at all (ScatterElements of a
# type WebGPU has no kernel for: "Provider type for ScatterElements node with
# name '' is not set").
NOT_PLACED = re.compile(
    r"fallback to CPU EP has been explicitly disabled|Provider type for \S+ node .* is not set"
)


def chromium() -> str | None:
    if os.environ.get(CHROMIUM_ENV):
        return os.environ[CHROMIUM_ENV]
    return next(filter(None, map(shutil.which, CHROMIUMS)), None)


INSTALL = js.COMMAND


def missing(backend: str) -> str | None:
    """What must be installed before a target of ``backend`` can start, as
    one line; None when nothing is missing."""
    if shutil.which("node") is None:
        return (
            f"{RUNTIME_NAME}:{backend} needs Node.js 18 or newer (node) on PATH: install it "
            f"(Debian: apt-get install nodejs npm), then run `{INSTALL}`"
        )
    if not (js.modules_folder() / "onnxruntime-web" / "package.json").is_file():
        return (
            f"{RUNTIME_NAME} is not installed in {js.modules_folder().parent}: run `{INSTALL}` "
            f"(npm ci of {JS / 'package-lock.json'}; needs npm and the npm registry)"
        )
    if backend == WEBGPU and chromium() is None:
        return (
            f"{RUNTIME_NAME}:{WEBGPU} needs Chromium: install it (Debian: apt-get install "
            f"chromium) or set {CHROMIUM_ENV} to a Chromium or Chrome executable"
        )
    return None


def _wire(name: str, array: np.ndarray) -> dict:
    kind = dtypes.name_of(array)
    if kind not in CARRIED:
        raise HarnessUnsupported(
            f"input {name!r} is {kind}: onnxruntime-web has no such tensor type"
        )
    dims = [int(d) for d in array.shape]
    if kind == "string":
        return {"type": kind, "dims": dims, "strings": [str(s) for s in array.ravel()]}
    data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    return {"type": kind, "dims": dims, "data": base64.b64encode(data).decode("ascii")}


def _array(wire: dict) -> np.ndarray:
    kind, dims = wire["type"], tuple(wire["dims"])
    if kind not in CARRIED:
        raise HarnessUnsupported(
            f"onnxruntime-web returned a {kind} tensor, which NumPy cannot read"
        )
    if kind == "string":
        strings = np.empty(dims, dtype=object)
        strings.ravel()[:] = wire["strings"]
        return strings
    dtype = dtypes.by_name(kind).numpy.newbyteorder("<")
    data = np.frombuffer(base64.b64decode(wire["data"]), dtype=dtype).reshape(dims)
    return data.astype(dtype.newbyteorder("="))


def placement_key(model: bytes) -> tuple | None:
    """What the WebGPU backend's placement of ``model``'s nodes depends on:
    the opsets, each node's operator, attributes and edges, and the element
    type of every graph input, initializer and output (names numbered in
    order of appearance, so that models of one structure share a key
    whatever their names); never shapes or values. None for bytes that
    are no model (the runtime says why)."""
    import onnx

    try:
        proto = onnx.ModelProto.FromString(model)
    except Exception:  # not a model: onnxruntime-web's refusal says what is wrong
        return None
    graph = proto.graph
    numbers: dict[str, int] = {}

    def number(name: str) -> int:
        return numbers.setdefault(name, len(numbers))

    def typed(values) -> tuple:
        return tuple((number(v.name), v.type.SerializeToString()) for v in values)

    return (
        tuple(sorted((o.domain, o.version) for o in proto.opset_import)),
        typed(graph.input),
        tuple((number(t.name), t.data_type) for t in graph.initializer),
        tuple(
            (
                node.domain,
                node.op_type,
                tuple(number(name) for name in node.input),
                tuple(number(name) for name in node.output),
                tuple(a.SerializeToString() for a in node.attribute),
            )
            for node in graph.node
        ),
        typed(graph.output),
    )


class _Session:
    """A session of the runner's; its release is sent with the next request
    (not after the runner's page was loaded again: the number is another's)."""

    def __init__(self, adapter: OrtWebAdapter, number: int) -> None:
        self.adapter, self.number, self.page = adapter, number, adapter.page

    def __del__(self) -> None:
        if self.page == self.adapter.page:
            self.adapter.released.append(self.number)


class OrtWebAdapter(Adapter):
    name = RUNTIME_NAME
    cache_size = 64  # sessions held in the runner (a browser's memory is its own)

    def __init__(self, properties: dict | None = None) -> None:
        super().__init__(properties)
        self.backend = str(self.properties.pop("backend", WASM))
        if self.properties or self.backend not in (WASM, WEBGPU):
            raise ValueError(f"onnxruntime-web takes backend {WASM} or {WEBGPU}, got {properties}")
        self.released: list[int] = []
        self.page = 0  # the runner's page loads after the first
        # placement_key -> the runtime's refusal of a model with that key (webgpu)
        self.not_placed: dict[tuple, str] = {}
        self._runner: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        lacking = missing(self.backend)
        if lacking:
            raise RuntimeError(lacking)
        command = ["node", str(JS / "runner.mjs"), str(js.modules_folder()), self.backend]
        # Its stderr is the worker's: a crash record keeps its tail.
        return subprocess.Popen(
            [*command, chromium() or ""], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def _ask(self, request: dict) -> dict:
        if self._runner is None:
            self._runner = self._start()
        runner = self._runner
        assert runner.stdin is not None and runner.stdout is not None
        if self.released and request["op"] != "info":
            sessions, self.released[:] = list(self.released), []
            self._ask({"op": "release", "sessions": sessions})
        try:
            runner.stdin.write(json.dumps(request).encode() + b"\n")
            runner.stdin.flush()
            line = runner.stdout.readline()
        except BrokenPipeError:
            line = b""
        if not line:
            self._died(runner)
        answer = json.loads(line)
        if not answer["ok"] and answer["stage"] in ("start", "harness"):
            raise RuntimeError(f"onnxruntime-web's runner: {answer['error']}")
        return answer

    def _died(self, runner: subprocess.Popen) -> None:
        """The runner is gone: this worker goes the same way (a crash record)."""
        code = runner.wait()
        print(f"the {RUNTIME_NAME} runner ended ({code})", file=sys.stderr, flush=True)
        if code < 0:  # its signal (SIGKILL's handler cannot be set, nor need be)
            with contextlib.suppress(ValueError, OSError):
                signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code if code > 0 else 1)

    def info(self) -> dict:
        facts = self._ask({"op": "info"})["info"]
        gpu = facts.get("gpu")
        if self.backend == WEBGPU and (not gpu or gpu.get("missing")):
            raise RuntimeError(
                f"Chromium found no WebGPU adapter ({(gpu or {}).get('missing')}): docs/browser.md"
            )
        if self.backend == WEBGPU:
            probe: dict[str, np.ndarray] = {
                "data": np.zeros(4, np.float32),
                "indices": np.zeros(2, np.int64),
            }
            self._ask({
                "op": "warm",
                "model": base64.b64encode(probe_model()).decode("ascii"),
                "feeds": {name: _wire(name, array) for name, array in probe.items()},
            })  # fmt: skip
        return {
            "name": self.name,
            "version": facts["version"],
            "device": "CPU" if self.backend == WASM else _device(gpu),
            "backend": self.backend,
            "webgpu_adapter": gpu,
            "interface": _interface(self.backend, facts),
            "effective": {
                "numThreads": facts["numThreads"],
                "disable_cpu_ep_fallback": facts["disable_cpu_ep_fallback"],
                "graphOptimizationLevel": facts["graphOptimizationLevel"],
                "chromium_flags": facts.get("flags"),
            },
        }

    def load(self, model: bytes):
        key = placement_key(model) if self.backend == WEBGPU else None
        if key is not None and key in self.not_placed:
            raise HarnessUnsupported(self.not_placed[key])
        answer = self._ask({"op": "load", "model": base64.b64encode(model).decode("ascii")})
        if not answer["ok"]:
            if self.backend == WEBGPU and NOT_PLACED.search(answer["error"]):
                said = (
                    f"a node has no WebGPU kernel and CPU fallback is off, not the backend's "
                    f"verdict: {answer['error']}"
                )
                if key is not None:
                    self.not_placed[key] = said
                raise HarnessUnsupported(said)
            raise LoadError(answer["error"])
        return _Session(self, answer["session"]), answer["inputs"]

    def execute(self, session, feeds):
        handle, names = session
        wired = {name: _wire(name, feeds[name]) for name in names}
        answer = self._ask({"op": "run", "session": handle.number, "feeds": wired})
        if answer.get("reset"):  # the runner loaded its page again: its sessions are gone
            self.page += 1
            self._sessions.clear()
            self.released.clear()
        if not answer["ok"]:
            raise RunError(answer["error"])
        return [_array(wire) for wire in answer["outputs"]]


def _interface(backend: str, facts: dict) -> str:
    where = f"Node {facts.get('node')}" if backend == WASM else f"headless {facts.get('chromium')}"
    return f"{RUNTIME_NAME} in {where}"


def _device(gpu: dict) -> str:
    """WebGPU's adapter as one phrase: ``WebGPU google swiftshader (software)``."""
    said = " ".join(filter(None, (gpu.get("vendor"), gpu.get("architecture"), gpu.get("device"))))
    return f"WebGPU {said or '?'}" + (" (software)" if gpu.get("software") else "")


RUNTIME = Runtime(
    name=RUNTIME_NAME,
    adapter=OrtWebAdapter.__name__,
    position=7,
    modules=("numpy",),  # the Python side; the JavaScript side is npm's (install)
    extra=None,
    # Run only when named: it needs Node, an npm install and (webgpu) Chromium.
    opt_in=True,
    # A load costs a session in the runner (tens of ms); packed as ONNX Runtime is.
    pack_size=32,
    # WebGPU: a run error loads the runner's page again (seconds on a busy machine).
    timeout=30,
    profiles={WASM: {"backend": WASM}, WEBGPU: {"backend": WEBGPU}},
)
