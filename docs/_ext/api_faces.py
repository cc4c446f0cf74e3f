"""The API reference, generated from the public faces of ``core`` at build time.

A *face* is a package's ``__init__.py`` with its ``__all__`` (ARCHITECTURE.md). On
``builder-inited`` this extension walks the packages of ``core`` and writes one page per face
into ``api/generated/`` (``automodule`` with ``:members:``, which follows ``__all__``), so a
package another engineer adds is documented without editing the docs.

Docstrings inside ``core`` refer to the module that *defines* a name
(``core.data.audit_data.AuditData``), while the reference documents it where users import it
(``core.data.AuditData``). On ``missing-reference`` a target that imports is pointed at the
face that exports it, or at the face of the package that holds it; a target that does not
import stays a warning — with ``-n -W`` a failed build.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

GENERATED = Path("api") / "generated"


#: Modules and packages of ``core`` that are not documented here: the command line has its own
#: page in the user guide.
UNDOCUMENTED = ("core.cli",)


def faces() -> list[str]:
    """Every package of ``core`` that has an ``__all__``, in import-path order."""
    import core

    names = [module.name for module in pkgutil.walk_packages(core.__path__, "core.")
             if module.ispkg]
    return sorted(name for name in names if name not in UNDOCUMENTED
                  and hasattr(importlib.import_module(name), "__all__"))


def top_modules() -> list[str]:
    """The modules at the top of ``core`` (none since every layer is a package): their public
    names defined there are documented."""
    import core

    return sorted(f"core.{module.name}" for module in pkgutil.iter_modules(core.__path__)
                  if not module.ispkg and f"core.{module.name}" not in UNDOCUMENTED)


def constant_note(face: str, name: str, value) -> str:
    """The ``#:`` comment of a constant in the module of the face that defines it, else where
    it comes from."""
    from sphinx.pycode import ModuleAnalyzer

    module = importlib.import_module(face)
    for info in pkgutil.walk_packages(module.__path__, face + "."):
        defining = importlib.import_module(info.name)
        if getattr(defining, name, None) is not value:
            continue
        try:
            comment = ModuleAnalyzer.for_module(info.name).find_attr_docs().get(("", name))
        except Exception:  # noqa: BLE001 — no source to read: fall back to the origin
            comment = None
        if comment:
            return " ".join(line.strip() for line in comment if line.strip())
        origin = info.name
        break
    else:
        origin = face
    return f"Defined in ``{origin}``."


def short_value(value) -> str:
    text = repr(value)
    text = text if len(text) <= 120 else text[:117] + "..."
    return text.replace("\n", " ")


def page(face: str) -> str:
    """The reST page of one face: its docstring, then every name of ``__all__`` — functions
    and classes by ``automodule`` (which follows ``__all__``), constants as data entries with
    their value, modules the face exports as sections of their own."""
    title = f"``{face}``"
    text = f"{title}\n{'=' * len(title)}\n\n.. automodule:: {face}\n   :members:\n"
    module = importlib.import_module(face)
    names = getattr(module, "__all__", ())
    constants = [name for name in names if not callable(getattr(module, name))
                 and not inspect.ismodule(getattr(module, name))]
    modules = [name for name in names if inspect.ismodule(getattr(module, name))]
    if constants:
        text += f"\nConstants\n---------\n\n.. py:currentmodule:: {face}\n\n"
        for name in constants:
            value = getattr(module, name)
            text += (f".. py:data:: {name}\n   :value: {short_value(value)}\n\n"
                     f"   {constant_note(face, name, value)}\n\n")
    for name in modules:
        heading = f"``{face}.{name}``"
        text += (f"\n{heading}\n{'-' * len(heading)}\n\n"
                 f".. automodule:: {getattr(module, name).__name__}\n   :members:\n")
    return text


def write_pages(app) -> None:
    folder = Path(app.srcdir) / GENERATED
    folder.mkdir(parents=True, exist_ok=True)
    wanted = {f"{face}.rst": page(face) for face in [*faces(), *top_modules()]}
    for stale in folder.glob("*.rst"):
        if stale.name not in wanted:
            stale.unlink()
    for name, text in wanted.items():
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")


def exported() -> dict[int, str]:
    """``id(object)`` → the name its face exports it under (the first face, in order)."""
    names: dict[int, str] = {}
    for face in faces():
        module = importlib.import_module(face)
        for name in module.__all__:
            value = getattr(module, name)
            if hasattr(value, "__qualname__") or hasattr(value, "__path__"):  # not a constant
                names.setdefault(id(value), f"{face}.{name}")
    return names


def lookup(path: str):
    """The object a dotted path names, or None when it does not import."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attribute in parts[cut:]:
                target = getattr(target, attribute)
        except AttributeError:
            return None
        return target
    return None


def face_targets(path: str, names: dict[int, str], face_names: list[str]) -> list[tuple[str, str]]:
    """``(role, target)`` candidates for a ``core`` path: the exported name of the path or of
    its longest exported prefix (with the rest appended), then the face holding it."""
    parts = path.split(".")
    candidates = []
    for cut in range(len(parts), 1, -1):
        found = lookup(".".join(parts[:cut]))
        if found is not None and id(found) in names:
            public = ".".join([names[id(found)], *parts[cut:]])
            candidates.append(("obj", public))
            if cut < len(parts):
                candidates.append(("obj", names[id(found)]))
            break
    holders = [face for face in face_names if path == face or path.startswith(face + ".")]
    if holders:
        candidates.append(("mod", max(holders, key=len)))
    return candidates


def documented_in(node) -> str | None:
    """The dotted name whose docstring holds ``node`` (autodoc's ``docstring of X`` source)."""
    source = node.source or ""
    marker = "docstring of "
    return source.split(marker, 1)[1].strip() if marker in source else None


def resolve_to_face(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "").lstrip("~.")
    module, klass = node.get("py:module"), node.get("py:class")
    paths = [target]
    if not target.startswith("core."):
        if module and klass:
            paths.append(f"{module}.{klass}.{target}")
        if module:
            paths.append(f"{module}.{target}")
        owner = documented_in(node)  # a bare name: look beside the docstring that uses it
        if owner:
            parts = owner.split(".")
            paths += [".".join([*parts[:cut], target]) for cut in range(len(parts), 1, -1)]
    state = env.app.__dict__.setdefault("_api_faces", {})
    if "names" not in state:
        state["names"], state["faces"] = exported(), [*faces(), *top_modules()]
    domain = env.get_domain("py")
    for path in paths:
        if not path.startswith("core.") or lookup(path) is None:
            continue
        for role, candidate in face_targets(path, state["names"], state["faces"]):
            resolved = domain.resolve_xref(env, node.get("refdoc"), app.builder, role,
                                           candidate, node, contnode)
            if resolved is not None:
                return resolved
    return None


def setup(app):
    app.connect("builder-inited", write_pages)
    app.connect("missing-reference", resolve_to_face)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
