"""Known-discrepancy baselines: ``cases/known/<baseline name>.yaml``.

A baseline lists the discrepancies a runtime is known to have, so a CI gate
fails only on what is new (:mod:`conformance.gate.check`) and the pytest plugin
turns them into strict xfails. One file per runtime, named after it
(``onnxruntime.yaml``, ``openvino.yaml``, ``reference.yaml``)::

    entries:
      - case: gather-index-int32-extremes      # a glob on the case id
        signature: {variant: [static, dynamic]}  # optional narrowing
        outcome: crash                           # or a list of kinds
        reason: SIGSEGV on indices at the int32 limits
        upstream: https://github.com/openvinotoolkit/openvino/issues/...
        versions: ">=2026.4"                     # optional
      - signature: {op: Gather, dtype: [complex64, complex128]}
        outcome: rejected
        reason: no complex kernel
        clause: data-dtype

Two kinds of entry, as the word "each" decides:

* an entry with ``case`` (a glob matched against the concrete id
  ``gather-x.op13.float32.int64`` and the case-file id ``gather-x``) names
  results of the corpus: *each* result in its scope is expected to show one
  of its outcomes. One that conforms now makes the entry "fixed upstream?".
* an entry with only ``signature`` names a family of discrepancies, as fuzz
  classes are: any result in its scope *may* show them (a value-dependent bug
  does not show on every input). It is "fixed upstream?" only when enough
  results in its scope conform and none shows its outcome (:mod:`conformance.gate.check`).

``signature`` fields, each one value or a list of them (any of): ``op``,
``opset``, ``dtype``, ``indices_dtype``, ``variant``, ``axis`` (as written,
-1 is not 1; an absent axis counts as 0), ``violation`` (the clause an
invalid input breaks, ``none`` for a valid input) and ``features`` (all of
these input features present; see :mod:`conformance.tables.features`).
``opset`` and ``axis`` are integers (``true`` is not opset 1, nor ``13.0``
opset 13; an axis within int64), the others strings.

A family whose discrepancy shows only on some values (ONNX Runtime's string
Gather goes wrong only when the strings of a block differ) says
``depends_on_values: true``: inputs in its scope that pass prove nothing,
so the gate never calls it fixed; case entries pin such bugs in the corpus.

A value-mismatch family names its **explanation** (``explained_by:
int64-low32``, or a list; :mod:`conformance.tables.explanations`; ``model:``
is its spelling in baselines of earlier versions, still read): a result is
covered only when the runtime's output is exactly the oracle's output as the
explanation transforms it (the judge records those that fit it, the record's
``explained_by``). A new mechanism, garbage from a regression, is not
covered: it is NEW. An ``accepted_invalid`` entry may name the explanations
of invalid inputs (``out-of-range-reads-zero``) alike; an entry's
explanations bind only the outcomes they are of.

``clause`` is an id of the decisions table, ``upstream`` a link to the
runtime's issue; an entry gives at least one, and always a ``reason``.

Where an entry holds, when that depends on the target: ``versions`` is a
version specifier (PEP 440: ``">=2026.4,<2027"``) matched against the
runtime's version as the run recorded it; ``profile`` the target profiles it
holds for (``[default, accuracy]``; a targets file's properties count as no
profile); ``cpu`` ``{has: [flags], lacks: [flags]}`` against the CPU flags
the run recorded (``conformance.engine.run_writer.CPU_FLAGS``); ``gpu``
``{name: [globs], compute_capability: ["9.0"]}`` against the GPU a GPU target
recorded (``header.json`` ``runtimes.*.gpu``: docs/gpu.md), each given one
matching, and never on a target without a GPU; ``webgpu`` ``{adapter:
[globs], software: bool}`` against the WebGPU adapter a WebGPU target
recorded (``runtimes.*.webgpu_adapter``, its "vendor architecture" and
whether it is a software one: docs/browser.md), never on a target without one. An entry that
does not apply to a target is "not used" for it, never "fixed upstream?".

A baseline says what it was observed on (``observed``, a list of
``{version, profile, cpu_flags}``: a version string, quoted if YAML would
read a number; a profile name; a list of CPU flags; and for a GPU target
``gpu: {name, compute_capability}``): a target that matches none of them is
named first by the gate, with the difference, so that a verdict on another
machine or version is read as what it is.

No **catch-all**: an entry must narrow, for each outcome it lists, by what
the input is or how the runtime goes wrong (:func:`unnarrowed`): a case glob
with a letter or digit in its case-file id, ``dtype`` (not every dtype),
``axis``, ``features``, ``violation`` (some clauses, not all, not ``none``
alone), an ``indices_dtype`` that Tind forbids, or, for ``value_mismatch`` and
``accepted_invalid``, an explanation of that outcome (``explained_by``). ``op``,
``opset`` and ``variant`` split the results into a few large slices and do not
count, nor do ``versions``, ``profile``, ``cpu``, ``gpu`` and ``webgpu``
(where an entry holds, not which results it covers). An entry that would
accept every crash (or every Gather crash) of a runtime would let any new one
pass the gate: it is refused at load.

A file is held to ``docs/schemas/baseline.schema.json`` (fields, types, the
kinds, dtypes, ops, variants, decision ids, features, explanations, profiles
and CPU flags each may be: :mod:`conformance.cases.yaml_schema`); what no
schema can say (a PEP 440 specifier, the rules that relate fields, the
catch-all) is checked here after it.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from conformance import adapters, shipped
from conformance.cases import yaml_lines, yaml_schema
from conformance.cases.loader import CaseErrors, YamlFileReader
from conformance.engine import models
from conformance.engine.targets import adapter_of
from conformance.tables import decisions, dtypes, explanations, outcomes, spec
from conformance.tables.features import FEATURES

FOLDER = "known"  # below the cases folder; never read as case files
# What each signature field may hold, from the code's tables: the enums of
# docs/schemas/baseline.schema.json, which the reader holds files to, say the
# same (tests/test_file_schemas.py keeps the two in step).
SIGNATURE_FIELDS: dict[str, tuple | None] = {
    "op": spec.OPS,
    "opset": tuple(sorted({o for opsets in spec.OPSETS.values() for o in opsets})),
    "dtype": tuple(dtypes.NAMES),
    "indices_dtype": tuple(dtypes.NAMES),
    "variant": tuple(models.VARIANTS),
    "axis": None,  # any int64, as the model gives it (out-of-range ones too)
    "violation": ("none", *decisions.BY_ID),
    "features": tuple(FEATURES),
}
NAMES_EXPLAINED = frozenset({"explained_by", "model"})  # model: its spelling before
# Discrepancies only a valid input can have (judge: a refusal of an invalid input
# conforms, an output for one is accepted_invalid): their violation is "none".
VALID_ONLY = outcomes.kinds(lambda kind: kind.discrepancy and kind.inputs == outcomes.VALID)
# ...only an invalid one (accepted_invalid); the others (crash, timeout) may come of any input.
INVALID_ONLY = outcomes.kinds(lambda kind: kind.discrepancy and kind.inputs == outcomes.INVALID)
TIND = frozenset({"int32", "int64"})  # the index types ONNX allows


@dataclass(frozen=True)
class Where:
    """What a target is, as the gate matches entries on it (from the run header)."""

    version: str | None = None
    profile: str | None = "default"
    cpu_flags: frozenset[str] | None = None  # None: not recorded
    gpu: tuple[str, str] | None = None  # (name, compute capability) of a GPU target's device
    webgpu: tuple[str, bool] | None = None  # a WebGPU target's adapter: webgpu_of

    def describe(self) -> str:
        flags = "?" if self.cpu_flags is None else " ".join(sorted(self.cpu_flags)) or "none"
        profile = self.profile or "(properties)"
        said = f"version {self.version or '?'}, profile {profile}, CPU flags {flags}"
        return said + (f", GPU {gpu_text(self.gpu)}" if self.gpu else "")


def gpu_of(recorded: dict | None) -> tuple[str, str] | None:
    """(name, compute capability) of a header's ``gpu`` record (None: no GPU)."""
    if not isinstance(recorded, dict) or not recorded.get("name"):
        return None
    return (str(recorded["name"]), str(recorded.get("compute_capability") or "?"))


def webgpu_of(recorded: dict | None) -> tuple[str, bool] | None:
    """("vendor architecture", software) of a header's ``webgpu_adapter``
    (onnxruntime-web's webgpu profile: docs/browser.md); None: no WebGPU."""
    if not isinstance(recorded, dict) or "vendor" not in recorded:
        return None
    said = f"{recorded.get('vendor') or ''} {recorded.get('architecture') or ''}".strip()
    return (said, bool(recorded.get("software")))


def gpu_text(gpu: tuple[str, str] | None) -> str:
    return f"{gpu[0]} (compute capability {gpu[1]})" if gpu else "none"


@dataclass(frozen=True)
class Observed:
    """One configuration a baseline file was written on."""

    version: str
    profile: str
    cpu_flags: frozenset[str]
    gpu: tuple[str, str] | None = None

    def differences(self, target: Where) -> list[str]:
        found = []
        if release(target.version) != release(self.version):
            found.append(f"version {target.version} (observed {self.version})")
        if (target.profile or "") != self.profile:
            found.append(f"profile {target.profile or '(properties)'} (observed {self.profile})")
        if target.cpu_flags is not None and target.cpu_flags != self.cpu_flags:
            extra = sorted(target.cpu_flags - self.cpu_flags)
            missing = sorted(self.cpu_flags - target.cpu_flags)
            said = [f"+{f}" for f in extra] + [f"-{f}" for f in missing]
            found.append(f"CPU flags {' '.join(said)}")
        if (self.gpu or target.gpu) and target.gpu != self.gpu:
            found.append(f"GPU {gpu_text(target.gpu)} (observed {gpu_text(self.gpu)})")
        return found


@dataclass(frozen=True)
class BaselineEntry:
    """One known discrepancy of one runtime."""

    runtime: str
    path: Path
    line: int
    outcome: tuple[str, ...]
    reason: str
    case: tuple[str, ...] = ()  # globs; empty for a signature-only entry
    signature: dict[str, tuple] = field(default_factory=dict)
    clause: str | None = None
    upstream: str | None = None
    versions: str | None = None
    depends_on_values: bool = False  # a family no run of passing inputs can call fixed
    explained_by: tuple[str, ...] = ()  # explanations (tables.explanations), one must fit
    profile: tuple[str, ...] = ()  # the target profiles it holds for; empty: any
    cpu_has: frozenset[str] = frozenset()
    cpu_lacks: frozenset[str] = frozenset()
    gpu_name: tuple[str, ...] = ()  # globs on the GPU's name; empty: any
    gpu_capability: tuple[str, ...] = ()  # compute capabilities ("9.0"); empty: any
    webgpu_adapter: tuple[str, ...] = ()  # globs on a WebGPU adapter's "vendor architecture"
    webgpu_software: bool | None = None  # whether that adapter is a software one; None: any

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def each(self) -> bool:
        """True when every result in scope must reproduce (a ``case`` entry)."""
        return bool(self.case)

    def describe(self) -> str:
        parts = [f"case {'|'.join(self.case)}"] if self.case else []
        for name, allowed in self.signature.items():
            parts.append(f"{name} {'|'.join(map(str, allowed))}")
        return f"{', '.join(parts)} -> {'|'.join(self.outcome)}"

    def in_scope(self, record: dict) -> bool:
        """Whether the record is one this entry speaks of (whatever its outcome)."""
        if record.get("runtime") != self.runtime:
            return False
        if self.case and not any(
            fnmatch.fnmatchcase(record.get("case_id", ""), glob)
            or fnmatch.fnmatchcase(record.get("base_id", ""), glob)
            for glob in self.case
        ):
            return False
        for name, allowed in self.signature.items():
            if name == "features":
                if not set(allowed) <= set(record.get("features") or ()):
                    return False
            elif name == "violation":
                expected = record.get("expected") or {}
                if (expected.get("violation") or "none") not in allowed:
                    return False
            elif name == "axis":
                axis = record.get("axis")
                if (0 if axis is None else axis) not in allowed:  # absent: ONNX's default 0
                    return False
            elif record.get(name) not in allowed:
                return False
        return True

    def covers(self, record: dict) -> bool:
        """Whether the record shows this entry's discrepancy (the one rule the
        gate, the report and the pytest plugin use; where it holds is
        :meth:`applies_to`). With explanations, a value mismatch is covered
        only when one of them fits its output exactly."""
        kind = record.get("kind")
        if kind not in self.outcome or not self.in_scope(record):
            return False
        named = explained_for(self.explained_by, kind)
        if named:  # only outputs one of them fits (a record without explained_by: none)
            return bool(set(named) & set(record.get("explained_by") or ()))
        return True

    def applies_to(self, target: Where | str | None) -> bool:
        """Whether the entry holds for this target: its version, profile and
        CPU flags (each condition absent: always). A version string alone is
        a target of the default profile on an unrecorded CPU."""
        if not isinstance(target, Where):
            target = Where(version=target)
        if self.versions is not None:
            parsed = release(target.version)
            if parsed is None or not SpecifierSet(self.versions).contains(parsed, prereleases=True):
                return False
        if self.profile and target.profile not in self.profile:
            return False
        if self.gpu_name or self.gpu_capability:  # a GPU's entry: not of a target without one
            if target.gpu is None:
                return False
            name, capability = target.gpu
            if self.gpu_name and not any(fnmatch.fnmatchcase(name, g) for g in self.gpu_name):
                return False
            if self.gpu_capability and capability not in self.gpu_capability:
                return False
        if not self._holds_on_webgpu(target.webgpu):
            return False
        flags = target.cpu_flags
        if flags is None or not (self.cpu_has or self.cpu_lacks):  # nothing to hold it to
            return True
        return not (not self.cpu_has <= flags or self.cpu_lacks & flags)

    def _holds_on_webgpu(self, webgpu: tuple[str, bool] | None) -> bool:
        """A WebGPU adapter's entry holds only on a target with that adapter."""
        if not self.webgpu_adapter and self.webgpu_software is None:
            return True
        if webgpu is None:
            return False
        adapter, software = webgpu
        if self.webgpu_adapter and not any(
            fnmatch.fnmatchcase(adapter, g) for g in self.webgpu_adapter
        ):
            return False
        return self.webgpu_software is None or software == self.webgpu_software

    def conditions(self) -> str:
        """Where the entry holds, for a person: ``versions >=2026.4, profile
        1thread, CPU lacks amx_bf16``."""
        said = [f"versions {self.versions}"] if self.versions else []
        if self.profile:
            said.append(f"profile {'|'.join(self.profile)}")
        if self.cpu_has:
            said.append(f"CPU has {' '.join(sorted(self.cpu_has))}")
        if self.cpu_lacks:
            said.append(f"CPU lacks {' '.join(sorted(self.cpu_lacks))}")
        if self.gpu_name:
            said.append(f"GPU {'|'.join(self.gpu_name)}")
        if self.webgpu_adapter:
            said.append(f"WebGPU adapter {'|'.join(self.webgpu_adapter)}")
        if self.webgpu_software is not None:
            said.append(f"WebGPU software adapter {'yes' if self.webgpu_software else 'no'}")
        if self.gpu_capability:
            said.append(f"GPU compute capability {'|'.join(self.gpu_capability)}")
        return ", ".join(said) or "everywhere"


KNOWN_PROFILES = frozenset(p for profiles in adapters.registry.PROFILES.values() for p in profiles)


def explained_for(names: Iterable[str], kind: str | None) -> list[str]:
    """The explanations among ``names`` of outputs of ``kind``
    (:attr:`conformance.tables.explanations.Explanation.outcome`)."""
    return [
        name
        for name in names
        if name in explanations.BY_NAME and explanations.BY_NAME[name].outcome == kind
    ]


def _glob_narrows(glob: str) -> bool:
    """Whether a case glob names something: a letter or digit in its case-file
    id (before the first '.'; ``*.op13.*`` or ``*-*`` match every case file)
    outside wildcards and bracket expressions."""
    base = re.sub(r"\[[^\]]*\]", "", glob.split(".", 1)[0])
    return any(ch.isalnum() for ch in base)


def unnarrowed(
    outcomes: Iterable[str],
    case: Iterable[str],
    signature: dict[str, tuple],
    explained_by: Iterable[str] = (),
) -> list[str]:
    """The outcomes of an entry that nothing narrows to something specific:
    for each, the entry would cover every discrepancy of that kind of its
    runtime (in an op, opset or variant at most). Empty for a good entry."""
    case, explained = list(case), list(explained_by)
    if case and all(_glob_narrows(glob) for glob in case):
        return []
    if any(name in signature for name in ("axis", "features")):
        return []
    if "dtype" in signature and not set(dtypes.NAMES) <= set(signature["dtype"]):
        return []
    if "indices_dtype" in signature and TIND.isdisjoint(signature["indices_dtype"]):
        return []  # only index types Tind forbids: an input the spec refuses
    left = []
    for kind in outcomes:
        if explained_for(explained, kind):
            continue  # only outputs an explanation fits exactly
        if "violation" in signature:
            possible = {"none"} if kind in VALID_ONLY else set(decisions.BY_ID)
            if kind not in VALID_ONLY | INVALID_ONLY:
                possible.add("none")  # a crash or a timeout, on any input
            allowed = set(signature["violation"]) & possible
            if allowed != possible and allowed != {"none"}:
                continue  # some clauses, not all (valid inputs alone are not specific)
        left.append(kind)
    return left


def release(version: str | None) -> Version | None:
    """The comparable part of a runtime's version string: OpenVINO reports
    '2026.4.1-22982-e213a147257-releases/2026/4', of which 2026.4.1 counts."""
    match = re.match(r"\d+(\.\d+)*", version or "")
    try:
        return Version(match.group(0)) if match else None
    except InvalidVersion:
        return None


class _BaselineReader(YamlFileReader):
    """Turns one baseline file into entries: the file held to its schema
    (docs/schemas/baseline.schema.json: fields, types, enums), then what no
    schema can say checked here, for each entry the schema passed."""

    def read(self) -> list[BaselineEntry]:
        found = self._read()
        self.errors.sort(key=lambda error: error.line or 0)  # the schema's and the code's, by line
        return found

    def _read(self) -> list[BaselineEntry]:
        self.observed: list[Observed] = []
        if not self.load_yaml():
            return []
        if self.root is None:
            return []  # an empty file: no known discrepancy
        wrong = yaml_schema.check(self, "baseline")
        if not isinstance(self.root, dict):
            return []
        if not any(path[:1] == ("observed",) for path in wrong):
            self.observed = [
                Observed(
                    item["version"],
                    item["profile"],
                    frozenset(item["cpu_flags"]),
                    gpu_of(item.get("gpu")),
                )
                for item in self.root.get("observed") or ()
            ]
        raw_entries = self.root.get("entries")
        if not isinstance(raw_entries, list):
            return []  # none (null), or said by the schema
        entries = []
        for index, raw in enumerate(raw_entries):
            if isinstance(raw, dict):
                at = ("entries", index)
                bad = {path[2] if len(path) > 2 else "" for path in wrong if path[:2] == at}
                entries.append(self._entry(index, raw, bad))
        return [entry for entry in entries if entry is not None]

    def _entry(self, index: int, raw: dict, bad: set) -> BaselineEntry | None:
        """The entry, or None after saying what else is wrong with it: what
        relates its fields, or needs more than a schema's keywords. ``bad``:
        the fields the schema found wrong ("" for the entry itself), which are
        not looked at again; an entry with any is not made."""
        at = ("entries", index)
        given = {key: raw[key] for key in raw if key not in bad}
        case, outcome = _listed(given, "case"), _listed(given, "outcome")
        # ``model:`` is how baselines of earlier versions spell ``explained_by:``.
        explained = _listed(given, "explained_by") or _listed(given, "model")
        values = given.get("depends_on_values", False)
        before = len(self.errors)
        if "explained_by" in raw and "model" in raw:  # one field under two names
            self.error((*at, "model"), "the old spelling of explained_by: give one of the two")
        if values and case:  # a relation of two fields
            self.error((*at, "depends_on_values"), "only for families (signature without case)")
        versions = given.get("versions")
        if versions is not None:  # PEP 440's grammar is packaging's, not a pattern's
            try:
                SpecifierSet(versions)
            except InvalidSpecifier:
                self.error((*at, "versions"), f"{versions!r} is not a version specifier (>=2026.4)")
        if values and "value_mismatch" in outcome and not explained and not bad & NAMES_EXPLAINED:
            self.error(  # a relation of three fields
                (*at, "explained_by"),
                "a value-dependent value_mismatch family names its explanation "
                f"({', '.join(explanations.BY_NAME)}): only outputs it fits are covered",
            )
        for name in explained if not bad & NAMES_EXPLAINED else ():
            of = explanations.BY_NAME[name].outcome
            if of not in outcome and "outcome" not in bad:  # it would bind nothing
                field = "explained_by" if "explained_by" in raw else "model"
                self.error((*at, field), f"{name} explains {of} outputs: not an outcome listed")
        if bad or len(self.errors) > before:
            return None
        named = raw.get("signature", {})
        signature = {name: tuple(_listed(named, name)) for name in named}
        broad = unnarrowed(outcome, case, signature, explained)  # what the values mean together
        if broad:
            self.error(
                (*at, "signature" if signature else "case"),
                f"a catch-all: it would cover every {'/'.join(broad)} of this runtime "
                "(op, opset and variant do not narrow an entry); narrow it by what the input is "
                "or how the runtime fails: a case id, dtype, axis, features, violation, or an "
                "explanation for value_mismatch (explained_by; cases/README.md)",
            )
            return None
        cpu, gpu, webgpu = raw.get("cpu", {}), raw.get("gpu", {}), raw.get("webgpu", {})
        return BaselineEntry(
            runtime=self.path.stem,
            path=self.path,
            line=yaml_lines.line_of(self.root, at) or 0,
            outcome=tuple(outcome),
            reason=raw["reason"].strip(),
            case=tuple(case),
            signature=signature,
            clause=raw.get("clause"),
            upstream=raw.get("upstream"),
            versions=versions,
            depends_on_values=values,
            explained_by=tuple(explained),
            profile=tuple(_listed(raw, "profile")),
            cpu_has=frozenset(_listed(cpu, "has")),
            cpu_lacks=frozenset(_listed(cpu, "lacks")),
            gpu_name=tuple(_listed(gpu, "name")),
            gpu_capability=tuple(_listed(gpu, "compute_capability")),
            webgpu_adapter=tuple(_listed(webgpu, "adapter")),
            webgpu_software=webgpu.get("software"),
        )


def _listed(raw: dict, key: str) -> list:
    """A field that is one value or a list of them (the schema says which), as a list."""
    value = raw.get(key, [])
    return list(value) if isinstance(value, list) else [value]


def load_file(path: Path) -> list[BaselineEntry]:
    return _BaselineReader(Path(path)).read_or_raise()


def observed(path: Path) -> list[Observed]:
    """What a baseline file says it was written on (empty: it does not say)."""
    return load_observed(path)[1]


def load_observed(path: Path) -> tuple[list[BaselineEntry], list[Observed]]:
    """A baseline file's entries and what it says it was observed on, read once."""
    reader = _BaselineReader(Path(path))
    entries = reader.read_or_raise()
    return entries, reader.observed


class BaselineFolders(tuple):
    """The baseline folders a gate reads, in the order given: one or more.

    A target's baseline is the union of ``<baseline name>.yaml`` in each (the
    name: :func:`conformance.adapters.baseline_name`); each entry keeps its own
    ``file:line``. A folder without that file adds nothing."""

    def __new__(cls, folders: Iterable[Path | str]) -> BaselineFolders:
        return super().__new__(cls, tuple(Path(f) for f in folders))

    def __str__(self) -> str:
        return ", ".join(str(folder) for folder in self)

    def files(self, name: str) -> list[Path]:
        """The baseline files of the baseline name ``name`` that exist."""
        return [path for folder in self if (path := folder / f"{name}.yaml").exists()]


def known(folders: BaselineFolders | Path | str | Iterable[Path | str]) -> BaselineFolders:
    """``folders`` as :class:`BaselineFolders`: one folder, or several."""
    if isinstance(folders, BaselineFolders):
        return folders
    if isinstance(folders, (str, Path)):
        return BaselineFolders([folders])
    return BaselineFolders(folders)


def files_of(folders, adapter: str, runtime: str | None = None) -> list[Path]:
    """The baseline files of the target ``runtime`` (default: the adapter's
    own name) of ``adapter`` in ``folders``: its baseline name's, in each."""
    name = adapters.baseline_name(adapter, runtime or adapter)
    return known(folders).files(name) if name else []


def load(folder, runtimes: Iterable[str] | dict[str, str]) -> dict[str, list[BaselineEntry]]:
    """The baseline of each runtime: the entries of ``<baseline name>.yaml``
    (:func:`conformance.adapters.baseline_name`) in each of the folders (one
    folder, or :class:`BaselineFolders`; an absent file is an empty baseline), or
    CaseErrors naming every problem in every file. ``runtimes`` maps target
    names to adapters, or is names."""
    if not isinstance(runtimes, dict):
        runtimes = {name: adapter_of(name) for name in runtimes}
    folders = known(folder)
    baselines, errors, read = {}, [], {}
    for runtime, adapter in runtimes.items():
        entries = []
        for path in files_of(folders, adapter, runtime):
            if path not in read:
                try:
                    read[path] = load_file(path)
                except CaseErrors as exc:
                    errors.extend(exc.errors)
                    read[path] = []
            entries.extend(read[path])
        # Each target of the adapter holds the file's entries as its own
        # (openvino:1thread's are judged, reported and scoped apart).
        baselines[runtime] = [replace(entry, runtime=runtime) for entry in entries]
    if errors:
        raise CaseErrors(errors)
    return baselines


def default_folder() -> BaselineFolders:
    """The shipped baselines (:func:`conformance.shipped.baselines`: the wheel's,
    or a clone's cases/known), never a folder in the working directory."""
    return BaselineFolders([shipped.baselines()])


def missing(folders: BaselineFolders, given, flag: str = "--known") -> str | None:
    """What to say when a baseline folder the user gave does not exist (None:
    each exists, or none was given and the shipped ones are used)."""
    absent = [folder for folder in folders if not folder.is_dir()] if given else []
    return f"{flag} {' '.join(map(str, absent))}: no such folder" if absent else None


def folders(given: Iterable[Path | str] | None) -> BaselineFolders:
    """The baseline folders of ``--known``: none given, the shipped ones; given
    ones replace them, and the word ``shipped`` among them stands for them
    (``--known shipped my/known`` adds to them)."""
    given = list(given or [])
    if not given:
        return default_folder()
    return BaselineFolders(shipped.expand(given, shipped.baselines()))
