#!/usr/bin/env python3
"""Lists hearth's imports between modules and flags those that point up a
layer or form a cycle between two files. Used for issue 12's closing note and
kept so the count can be taken again: `python3 scripts/layers.py`."""
import os, re, sys, collections

def read_layers(path="docs/architecture.md"):
    """The layer table of docs/architecture.md: the only map of the house."""
    text = open(path).read()
    table = text.split("<!-- layers:", 1)[1]
    layers = []
    for line in table.splitlines()[1:]:
        if not line.startswith("|"):
            if layers: break
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if not cells[0].isdigit(): continue
        layers.append(re.findall(r"`([a-z_]+)`", cells[1]))
    if not layers:
        sys.exit(f"no layer table in {path}")
    return layers

LAYERS = read_layers()
RANK = {m: i for i, layer in enumerate(LAYERS) for m in layer}

def module_of(path):
    rel = os.path.relpath(path, "src")
    return rel.split(os.sep)[0].removesuffix(".rs")

def file_of(path):
    return os.path.relpath(path, "src")

USE = re.compile(r"crate::([a-z_]+)(?:::([a-z_]+))?")
edges = collections.defaultdict(set)   # file -> set of (module, submodule)
for root, _, files in os.walk("src"):
    for f in files:
        if not f.endswith(".rs"): continue
        p = os.path.join(root, f)
        src = open(p).read()
        for m in USE.finditer(src):
            edges[p].add((m.group(1), m.group(2)))
        # `super::x` inside a module folder stays in the module: fine.

up = []
for p, targets in sorted(edges.items()):
    me = module_of(p)
    if me in ("lib", "main"): continue
    for (mod, sub) in sorted(targets, key=str):
        if mod == me or mod not in RANK or me not in RANK: continue
        if RANK[mod] < RANK[me]:
            up.append((file_of(p), mod + (("::" + sub) if sub else "")))

# file-level cycles: a imports a file of b's module path and b imports a's
def target_file(mod, sub):
    for cand in (f"src/{mod}/{sub}.rs", f"src/{mod}/mod.rs", f"src/{mod}.rs"):
        if sub is None and cand.endswith(f"/{sub}.rs"): continue
        if os.path.exists(cand): return cand
    return None
fedges = collections.defaultdict(set)
for p, targets in edges.items():
    for mod, sub in targets:
        t = target_file(mod, sub)
        if t and t != p: fedges[p].add(t)
# same-module imports through super:: too
SUPER = re.compile(r"super::([a-z_]+)")
for p in list(edges) + [os.path.join(r, f) for r, _, fs in os.walk("src") for f in fs if f.endswith(".rs")]:
    d = os.path.dirname(p)
    if os.path.basename(p) == "mod.rs": continue
    for m in SUPER.finditer(open(p).read()):
        t = os.path.join(d, m.group(1) + ".rs")
        if os.path.exists(t) and t != p: fedges[p].add(t)
cycles = sorted({tuple(sorted((a, b))) for a, ts in fedges.items() for b in ts if a in fedges.get(b, ())})

for f, t in up: print(f"up    {f} -> {t}")
for a, b in cycles: print(f"cycle {file_of(a)} <-> {file_of(b)}")
unknown = sorted({module_of(p) for p in edges} - set(RANK) - {"lib", "main"})
if unknown: print("unranked modules:", unknown)
# The library reads no environment: the CLI (src/cli) reads it once and
# passes what each part needs, so a library call means the same wherever
# it runs (docs/architecture.md).
ENV = re.compile(r"std::env::var|env::vars?(_os)?\(")
env_reads = []
for root, _, files in os.walk("src"):
    for f in files:
        p = os.path.join(root, f)
        if not f.endswith(".rs") or p.startswith("src/cli") or p == "src/main.rs": continue
        for n, line in enumerate(open(p), 1):
            if ENV.search(line.split("//")[0]): env_reads.append(f"{file_of(p)}:{n}")
for at in env_reads: print(f"env   {at} reads the environment (the CLI passes it instead)")
print(f"{len(up)} upward imports, {len(cycles)} two-file cycles, {len(env_reads)} environment reads")
sys.exit(1 if up or cycles or env_reads else 0)
