"""Pytrees: nested tuples, lists, dicts and namedtuples of leaves, flattened
to a list of leaves and a hashable structure (TreeDef) that rebuilds them.

None is a node with no leaves (as in JAX). Dicts flatten in sorted key
order when the keys sort, else in insertion order; either way the order is
part of the TreeDef, so two dicts with equal keys give equal TreeDefs."""
from typing import Any, Callable, List, Tuple

# A TreeDef is a nested tuple: ("leaf",), ("none",), ("tuple", type, children),
# ("list", children), ("dict", keys, children). It is hashable and compares
# by structure, so it can be part of a cache key.
TreeDef = tuple
LEAF: TreeDef = ("leaf",)


def _dict_keys(d: dict) -> list:
    try:
        return sorted(d)
    except TypeError:
        return list(d)


def flatten(tree: Any, path: str = "") -> Tuple[List[Any], TreeDef, List[str]]:
    """(leaves, treedef, paths): the leaves in order, the structure, and a
    dotted path per leaf ("params.w", "xs.0") for names and messages."""
    leaves: List[Any] = []
    paths: List[str] = []
    tdef = _flatten(tree, path, leaves, paths)
    return leaves, tdef, paths


def _join(path: str, key: Any) -> str:
    return "%s.%s" % (path, key) if path else str(key)


def _flatten(tree: Any, path: str, leaves: list, paths: list) -> TreeDef:
    if tree is None:
        return ("none",)
    if isinstance(tree, tuple):
        kids = tuple(_flatten(x, _join(path, i), leaves, paths) for i, x in enumerate(tree))
        kind = type(tree) if hasattr(tree, "_fields") else tuple
        return ("tuple", kind, kids)
    if isinstance(tree, list):
        return ("list", tuple(_flatten(x, _join(path, i), leaves, paths) for i, x in enumerate(tree)))
    if isinstance(tree, dict):
        keys = _dict_keys(tree)
        kids = tuple(_flatten(tree[k], _join(path, k), leaves, paths) for k in keys)
        return ("dict", tuple(keys), kids)
    leaves.append(tree)
    paths.append(path or "arg")
    return LEAF


def num_leaves(tdef: TreeDef) -> int:
    if tdef[0] == "leaf":
        return 1
    if tdef[0] == "none":
        return 0
    return sum(num_leaves(k) for k in tdef[-1])


def unflatten(tdef: TreeDef, leaves: List[Any]) -> Any:
    """The tree of structure tdef holding leaves (in flatten's order)."""
    it = iter(leaves)
    tree = _build(tdef, it)
    if next(it, it) is not it:
        raise ValueError("unflatten: more leaves than the structure holds")
    return tree


def _build(tdef: TreeDef, it) -> Any:
    kind = tdef[0]
    if kind == "leaf":
        try:
            return next(it)
        except StopIteration:
            raise ValueError("unflatten: fewer leaves than the structure holds") from None
    if kind == "none":
        return None
    if kind == "list":
        return [_build(k, it) for k in tdef[1]]
    if kind == "dict":
        return {key: _build(k, it) for key, k in zip(tdef[1], tdef[2])}
    kids = [_build(k, it) for k in tdef[2]]
    return tuple(kids) if tdef[1] is tuple else tdef[1](*kids)


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """tree with fn applied to every leaf."""
    leaves, tdef, _ = flatten(tree)
    return unflatten(tdef, [fn(x) for x in leaves])


def describe(tdef: TreeDef) -> str:
    """A short text of a structure, for error messages: "(*, [*, *], {a: *})"."""
    kind = tdef[0]
    if kind == "leaf":
        return "*"
    if kind == "none":
        return "None"
    if kind == "list":
        return "[%s]" % ", ".join(describe(k) for k in tdef[1])
    if kind == "dict":
        return "{%s}" % ", ".join("%s: %s" % (key, describe(k)) for key, k in zip(tdef[1], tdef[2]))
    return "(%s)" % ", ".join(describe(k) for k in tdef[2])
