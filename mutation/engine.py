"""Plan the mutants of a target, build the trampolined work copy, run the worker, collect.

See ``mutation/README.md`` for the design; ``mutation.run`` is the entry point.
"""

from __future__ import annotations

import compileall
import difflib
import fnmatch
import hashlib
import re
import shutil
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from mutmut.mutation.file_mutation import combine_mutations_to_source, deep_replace
from mutmut.mutation.trampoline_templates import mangle_function_name

from mutation import catalogue
from mutation.config import TargetConfig
from mutation.operators import (
    DEFAULT_QUIET_CALLS,
    CtxMutation,
    OperatorSettings,
    create_mutations,
    function_index,
)

REPO = Path(__file__).resolve().parents[1]
WORK = REPO / "mutation" / "work"
SHARD_FORMAT = "ctxaudit-mutation-shard/1"

TIMEOUT_FACTOR = 10.0
TIMEOUT_CONSTANT = 5.0

Progress = Callable[[dict[str, Any]], None]


class MutationError(Exception):
    """The run cannot go on (bad input, broken baseline, worker crash). One line."""


@dataclass
class Mutant:
    id: str
    target: str
    file: str
    function: str
    kind: str
    operator: str
    line: int
    column: int
    end_line: int
    end_column: int
    original: str
    replacement: str
    properties: list[str] = field(default_factory=list)
    catalogue: str | None = None
    description: str = ""
    mutmut_name: str = ""
    function_key: str = ""
    #: killed, timeout, crashed (detected); survived, no-coverage, flaky; error (its runs
    #: died by a signal not ctxaudit's: no verdict); pending (not run)
    status: str = "pending"
    second_status: str | None = None
    killed_by: str | None = None
    reason: str = ""
    seconds: float = 0.0
    tests: int = 0
    tests_completed: int | None = None
    diff: str = ""
    #: pass 3: the verdict under each further seed ({seed, status, killed_by, seed_free})
    seed_checks: list[dict[str, Any]] = field(default_factory=list)
    #: "robust", "seed-dependent" or None (not a detected gated mutant, or one seed only)
    robust: str | None = None
    robust_reason: str = ""
    #: how a robust kill was shown: "seed-free test" or "every seed"
    robust_by: str | None = None
    #: the pass-1 killer never asked Hypothesis for randomness
    seed_free: bool = False
    #: the seeds its verdict was found under (the first is pass 1's)
    seeds: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class PeerRun:
    """A peer test suite resolved for one run: absolute test files and pytest arguments."""

    name: str
    root: str
    tests: tuple[str, ...]
    pytest_args: tuple[str, ...]
    deselect: tuple[tuple[str, str], ...]
    sys_path: tuple[str, ...]
    selection_reason: str


@dataclass
class FilePlan:
    path: str
    source: str
    module: cst.Module
    mutations: list[tuple[Mutant, CtxMutation]] = field(default_factory=list)
    positions: Any = None


@dataclass
class Plan:
    target: str
    version: str
    root: Path
    files: dict[str, FilePlan]
    mutants: list[Mutant]
    not_applicable: list[dict[str, str]]
    excluded: dict[str, int]
    #: named mutants whose code is gone from a developer's tree (information, not an error)
    no_longer_applies: list[dict[str, str]] = field(default_factory=list)

    @property
    def digest(self) -> str:
        return hashlib.sha256("\n".join(sorted(m.id for m in self.mutants)).encode()).hexdigest()


def module_name(path: str) -> str:
    name = path[:-3].replace("/", ".")
    return name.removesuffix(".__init__")


def _short(code: str, limit: int = 160) -> str:
    code = " ".join(code.strip().split())
    return code if len(code) <= limit else code[: limit - 3] + "..."


def stable_id(path: str, function: str, kind: str, operator: str, digest: str) -> str:
    return f"{path}:{function}:{kind}:{operator}:{digest}"


def shard_of(mutant_id: str, n: int) -> int:
    """0-based shard of a mutant: a hash of its stable identity, mod n."""
    return int(hashlib.sha256(mutant_id.encode()).hexdigest()[:16], 16) % n


def sampled(m: Mutant, fraction: float) -> bool:
    """Whether an ``other`` mutant is in a deterministic sample of ``fraction`` (by id hash)."""
    if fraction >= 1.0 or m.kind != "other" or m.catalogue:
        return True
    h = int(hashlib.sha256(("sample:" + m.id).encode()).hexdigest()[:12], 16)
    return h / float(16**12) < fraction


def _excluded_lines(module: cst.Module, cfg: TargetConfig) -> dict[str, list[tuple[int, int, str]]]:
    """qualname -> [(first line, last line, reason)] of statements left out by config."""
    if not cfg.exclude_statements:
        return {}
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    out: dict[str, list[tuple[int, int, str]]] = {}
    for qual, _cls, func in function_index(module).values():
        rules = [r for r in cfg.exclude_statements if re.fullmatch(_glob(r.function), qual)]
        if not rules:
            continue
        stack: list[cst.CSTNode] = [func.body]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.SimpleStatementLine | cst.BaseCompoundStatement):
                first = module.code_for_node(node).strip().splitlines()
                # leading comments belong to the node; find the first code line
                text = next((ln.strip() for ln in first if not ln.strip().startswith("#")), "")
                for r in rules:
                    if r.pattern.search(text):
                        pos = positions[node]
                        out.setdefault(qual, []).append((pos.start.line, pos.end.line, r.reason))
                        break
                else:
                    stack.extend(node.children)
            else:
                stack.extend(node.children)
    return out


def _glob(pattern: str) -> str:

    return fnmatch.translate(pattern)


def build_plan(
    target: str,
    cfg: TargetConfig,
    root: Path,
    version: str,
    catalogue_path: Path = catalogue.CATALOGUE_FILE,
    *,
    developer: bool = False,
) -> Plan:
    """Every mutant of the target in scope, generated and catalogued, with stable ids.

    ``developer``: ``root`` is a developer's tree, not a registered version: a named
    mutant whose code is gone from it (:class:`catalogue.NoLongerApplies`, or its file
    gone) goes into ``Plan.no_longer_applies`` instead of failing the plan (the rule is in
    ``mutation/catalogue.py``'s docstring)."""
    excluded: dict[str, int] = {}
    files = _generated_files(target, cfg, root, excluded)
    # the operators' mutants first, file by file, then the catalogue's in its order
    mutants = [mutant for fp in files.values() for mutant, _mu in fp.mutations]
    plan = Plan(target, version, root, files, mutants, [], excluded, [])
    for entry in catalogue.load(catalogue_path, target=target):
        _add_catalogued(plan, entry, developer)
    ids = [m.id for m in plan.mutants]
    if len(ids) != len(set(ids)):
        raise MutationError(f"{target}: mutant ids are not unique")  # would be a bug
    return plan


@dataclass(frozen=True)
class _Generation:
    """What generating the operators' mutants of one target needs, file after file."""

    target: str
    cfg: TargetConfig
    settings: OperatorSettings
    #: the functions this version's exclusions leave out as dead code
    dead: frozenset[str]
    #: reason -> how many mutants config left out for it (filled in as files are read)
    excluded: dict[str, int]


def _generated_files(
    target: str, cfg: TargetConfig, root: Path, excluded: dict[str, int]
) -> dict[str, FilePlan]:
    """Every source file in scope (in the config's order) with the operators' mutants
    of its functions in scope; the mutants config leaves out with a reason are counted
    into ``excluded``. No file in scope is an error: a plan of nothing is a wrong config."""
    settings = OperatorSettings(quiet_calls=cfg.quiet_calls or DEFAULT_QUIET_CALLS)
    paths = cfg.source_files(root)
    if not paths:
        raise MutationError(f"{target}: no source files in scope under {root}")
    gen = _Generation(target, cfg, settings, cfg.dead_functions(root), excluded)
    return {path: _file_plan(gen, root, path) for path in paths}


def _file_plan(gen: _Generation, root: Path, path: str) -> FilePlan:
    """One file's operator mutants in source order, leaving out those outside a function
    in scope and those in statements the config excludes (counted by their reason)."""
    source = (root / path).read_text(encoding="utf-8")
    module, mutations = create_mutations(source, path, gen.settings)
    index = function_index(module)
    scope = {
        k: gen.cfg.in_scope(path, q, module.code_for_node(n), gen.dead)
        for k, (q, _c, n) in index.items()
    }
    skip = _excluded_lines(module, gen.cfg)
    fp = FilePlan(path, source, module)
    # how many mutants so far had the same key: the n-th one's id differs from the others'
    seen: dict[tuple[str, ...], int] = {}
    for mu in mutations:
        func = mu.contained_by_top_level_function
        qual = index[id(func)][0] if id(func) in index else None
        if qual is None:
            continue
        if not scope[id(func)]:
            _count_dead(gen, path, qual)
            continue
        # counted even when its statement is left out, so that an exclusion never
        # renumbers the ids of the same change after it
        nth = _nth(fp, qual, mu, seen)
        rule = next((r for r in skip.get(qual, []) if r[0] <= mu.start[0] <= r[1]), None)
        if rule is not None:
            gen.excluded[rule[2]] = gen.excluded.get(rule[2], 0) + 1
            continue
        fp.mutations.append((_operator_mutant(gen, fp, qual, mu, nth), mu))
    return fp


def _key(fp: FilePlan, qual: str, mu: CtxMutation) -> tuple[str, ...]:
    """What a mutant's id is a hash of: where it is and what it changes."""
    original = fp.module.code_for_node(mu.original_node)
    replacement = fp.module.code_for_node(mu.mutated_node)
    return (fp.path, qual, mu.operator, original.strip(), replacement.strip())


def _nth(fp: FilePlan, qual: str, mu: CtxMutation, seen: dict[tuple[str, ...], int]) -> int:
    """How many of the function's mutants so far, this one included, make this change."""
    key = _key(fp, qual, mu)
    seen[key] = seen.get(key, 0) + 1
    return seen[key]


def _count_dead(gen: _Generation, path: str, qual: str) -> None:
    """A mutant of a function out of scope: counted under its rule's reason when the
    function is this version's dead code (said in the report, not left out silently)."""
    left_out = qual in gen.dead and gen.cfg.listed(path, qual)
    rule = gen.cfg.excluded_function(qual, None, gen.dead) if left_out else None
    if rule is not None:
        gen.excluded[rule.reason] = gen.excluded.get(rule.reason, 0) + 1


def _operator_mutant(
    gen: _Generation, fp: FilePlan, qual: str, mu: CtxMutation, nth: int
) -> Mutant:
    """The mutant of one operator mutation, its id stable across runs: a hash of where
    it is and what it changes, and of how many the same ones came before it in its
    function, those in statements left out included (``nth``)."""
    path, module = fp.path, fp.module
    original = module.code_for_node(mu.original_node)
    replacement = module.code_for_node(mu.mutated_node)
    key = _key(fp, qual, mu)
    digest = hashlib.sha256("\x00".join([*key, str(nth)]).encode()).hexdigest()[:12]
    return Mutant(
        id=stable_id(path, qual, mu.kind, mu.operator, digest),
        target=gen.target,
        file=path,
        function=qual,
        kind=mu.kind,
        operator=mu.operator,
        line=mu.start[0],
        column=mu.start[1] + 1,
        end_line=mu.end[0],
        end_column=mu.end[1] + 1,
        original=_short(original),
        replacement=_short(replacement),
        properties=list(gen.cfg.properties_for(path, qual)),
    )


def _add_catalogued(plan: Plan, entry: catalogue.Entry, developer: bool) -> None:
    """One catalogue entry into the plan: its mutant, or the reason it does not apply
    (another version, its ``where`` not met; ``developer``: its code gone from the tree).
    An entry that should apply and cannot is a :class:`catalogue.CatalogueError`."""
    if not entry.applies_to_version(plan.version):
        plan.not_applicable.append(
            {"id": entry.id, "versions": entry.versions, "description": entry.description}
        )
        return
    if entry.where:
        reason = _where_reason(plan, entry)
        if reason is not None:
            plan.not_applicable.append(
                {
                    "id": entry.id,
                    "where": entry.where,
                    "reason": reason,
                    "description": entry.description,
                }
            )
            return
    fp = plan.files.get(entry.file)
    if fp is None and developer and not (plan.root / entry.file).exists():
        plan.no_longer_applies.append(
            catalogue.no_longer_applies_line(entry, f"{entry.file} is gone")
        )
        return
    if fp is None:
        raise catalogue.CatalogueError(
            f"catalogue entry {entry.id}: {entry.file} is not a file in the {plan.target} scope"
        )
    try:
        mutated_source = catalogue.apply(entry, fp.source)
    except catalogue.NoLongerApplies as exc:
        if not developer:
            raise catalogue.CatalogueError(
                f"{exc} ({plan.target} {plan.version} is a registered version, which the "
                "catalogue is written for: fix the entry or its `versions`)"
            ) from None
        plan.no_longer_applies.append(catalogue.no_longer_applies_line(entry, exc.what))
        return
    mutant, mu = _catalogued_mutant(plan.target, entry, fp, mutated_source)
    fp.mutations.append((mutant, mu))
    plan.mutants.append(mutant)


def _where_reason(plan: Plan, entry: catalogue.Entry) -> str | None:
    """Why an entry's ``where`` condition does not hold in the tree (None: it holds),
    read from its file in scope or, for a file outside the scope, from the tree."""
    where_fp = plan.files.get(entry.where_in)
    text = where_fp.source if where_fp is not None else None
    if text is None and (plan.root / entry.where_in).is_file():
        text = (plan.root / entry.where_in).read_text(encoding="utf-8")  # a file outside the scope
    return entry.where_reason(text)


def _catalogued_mutant(
    target: str, entry: catalogue.Entry, fp: FilePlan, mutated_source: str
) -> tuple[Mutant, CtxMutation]:
    """A catalogue entry's mutant: its function's whole body replaced by the mutated one,
    its id the entry's own."""
    new_func = catalogue.mutated_function(entry, fp.module, mutated_source)
    func = next(n for q, _c, n in function_index(fp.module).values() if q == entry.function)
    line = _first_changed_line(fp.source, mutated_source)
    end_line = line + len(entry.before.strip().splitlines())
    mu = CtxMutation(
        original_node=func.body,
        mutated_node=new_func.body,
        contained_by_top_level_function=func,
        operator="catalogue",
        kind=entry.kind,
        start=(line, 0),
        end=(end_line, 0),
    )
    mutant = Mutant(
        id=f"catalogue:{entry.id}",
        target=target,
        file=entry.file,
        function=entry.function,
        kind=entry.kind,
        operator="catalogue",
        line=line,
        column=1,
        end_line=end_line,
        end_column=1,
        original=_short(entry.before),
        replacement=_short(entry.after),
        properties=[entry.property],
        catalogue=entry.id,
        description=entry.description,
    )
    return mutant, mu


def _first_changed_line(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines(), strict=False)):
        if x != y:
            return i + 1
    return 1


def mutant_diff(fp: FilePlan, mu: CtxMutation) -> str:
    """Unified diff of the mutated function against the file, with the file's line numbers."""
    func = mu.contained_by_top_level_function
    assert func is not None
    new_func = deep_replace(func, mu.original_node, mu.mutated_node)
    assert isinstance(new_func, cst.FunctionDef)
    if fp.positions is None:
        fp.positions = MetadataWrapper(fp.module, unsafe_skip_copy=True).resolve(PositionProvider)
    start = fp.positions[func].start.line
    src_line = fp.source.splitlines()[start - 1]
    indent = src_line[: len(src_line) - len(src_line.lstrip())]
    bare = func.with_changes(leading_lines=())
    new_bare = new_func.with_changes(leading_lines=())

    def render(node: cst.CSTNode) -> list[str]:
        code = fp.module.code_for_node(node)
        return [(indent + ln if ln.strip() else ln) for ln in code.splitlines(keepends=True)]

    out = []
    for line in difflib.unified_diff(
        render(bare), render(new_bare), f"a/{fp.path}", f"b/{fp.path}", n=2
    ):
        hunk = _HUNK.match(line)
        if hunk:
            a, b, c, d = hunk.groups()
            off = start - 1
            line = f"@@ -{int(a) + off}{b or ''} +{int(c) + off}{d or ''} @@\n"
        out.append(line if line.endswith("\n") else line + "\n")
    return "".join(out)


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def write_work_tree(
    plan: Plan, selected: set[str], work: Path, copy_dir: str, compile_here: bool = True
) -> list[str]:
    """Copy the target into ``work/tree`` and write the trampolined files; returns modules."""
    tree = work / "tree"
    if work.exists():
        shutil.rmtree(work)
    if sys.pycache_prefix:  # and the bytecode of its earlier files, kept apart from them
        where = work.resolve()
        shutil.rmtree(Path(sys.pycache_prefix) / where.relative_to(where.anchor), True)
    tree.mkdir(parents=True)
    shutil.copytree(
        plan.root / copy_dir,
        tree / copy_dir,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        dirs_exist_ok=True,  # copy_dir "." copies all of root into the (empty) work copy
    )
    (tree / "PKG-INFO").write_text(
        f"Metadata-Version: 2.1\nName: {plan.target}\nVersion: {plan.version}\n"
    )
    modules: list[str] = []
    for path, fp in plan.files.items():
        chosen = [(m, mu) for m, mu in fp.mutations if m.id in selected]
        if not chosen:
            continue
        index = function_index(fp.module)
        mutated = combine_mutations_to_source(fp.module, [mu for _m, mu in chosen])
        modname = module_name(path)
        counters: dict[int, int] = {}
        names = []
        for mutant, mu in chosen:
            func = mu.contained_by_top_level_function
            qual, cls, node = index[id(func)]
            counters[id(func)] = counters.get(id(func), 0) + 1
            mangled = mangle_function_name(name=node.name.value, class_name=cls)
            mutant.mutmut_name = f"{modname}.{mangled}__mutmut_{counters[id(func)]}"
            mutant.function_key = f"{modname}.{mangled}"
            names.append(mutant.mutmut_name.rpartition(".")[2])
        if sorted(names) != sorted(mutated.mutant_names):
            raise MutationError(f"{path}: mutmut named the mutants differently than expected")
        (tree / path).write_text(mutated.code)
        modules.append(modname)
    # trampolined files are large; compile them once so that tests which start the
    # target in a subprocess do not each pay for it (not for a target that runs in
    # another interpreter, whose syntax this one may not read)
    if compile_here:
        compileall.compile_dir(str(tree), quiet=1)
    return modules


def mutant_to_json(m: Mutant) -> dict[str, Any]:
    return asdict(m)
