#!/usr/bin/env python3
"""Lists the type names (struct, enum, trait, type alias) defined more than
once in `src/` (tests left out), and fails when there is one: a name in
this house means one thing. `Args` and `Sub` are exempt — each `hearth`
command's clap arguments and subcommands, one meaning in many rooms.
Run in CI beside layers.py: `python3 scripts/names.py`."""
import collections, os, re, sys

EXEMPT = {"Args", "Sub"}
# A `type` indented inside an `impl` (`type Data = Bytes;`) names the
# trait's associated type, not a type of the house: only a type alias at
# the top of a module counts.
DEF = re.compile(r"^(?:\s*(?:pub(?:\([a-z:]+\))?\s+)?(?:struct|enum|trait|union)|(?:pub(?:\([a-z:]+\))?\s+)?type)\s+([A-Z][A-Za-z0-9]*)", re.M)

defined = collections.defaultdict(list)
for root, _, files in os.walk("src"):
    for f in files:
        if not f.endswith(".rs") or f.endswith("_tests.rs"):
            continue
        path = os.path.join(root, f)
        text = open(path, encoding="utf-8").read()
        # leave out `#[cfg(test)] mod tests { … }` (from its line to the end)
        cut = re.search(r"#\[cfg\(test\)\]\s*mod \w+ \{", text)
        if cut:
            text = text[: cut.start()]
        for m in DEF.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            defined[m.group(1)].append(f"{path}:{line}")

twice = {n: places for n, places in defined.items() if len(places) > 1 and n not in EXEMPT}
for name, places in sorted(twice.items()):
    print(f"defined {len(places)} times: {name}: {', '.join(places)}")
print(f"{len(defined)} type names; {len(twice)} defined more than once")
sys.exit(1 if twice else 0)
