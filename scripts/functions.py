#!/usr/bin/env python3
"""Measures the length of every function in `src/` (tests left out) and
fails when the house grows a function longer than it allows.

Kept beside layers.py and run in CI (`python3 scripts/functions.py`), so the
rule "no function over MAX lines, at most ALLOWED over LONG" is a check, not
a hope. `--list N` prints the N longest; `--quiet` prints only the verdict.

What counts as a function: an `fn` item with a body, from the line holding
`fn` to the line holding its closing brace, both included. Tests are left
out: files named `*_tests.rs` or under `tests/`, and every `#[cfg(test)]`
item (usually `mod tests { … }`). Braces inside strings, chars and comments
are skipped, so a format string with `{}` does not end a function early.
"""
import os, re, sys

MAX = 120      # no function in src/ longer than this
LONG = 80      # a function over this is "long" ...
ALLOWED = 15   # ... and there may be at most this many

FN = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")


def code_only(text):
    """The text with strings, chars and comments blanked (newlines kept), so
    braces and `fn` can be counted on what the compiler sees."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j): depth += 1; j += 2
                elif text.startswith("*/", j): depth -= 1; j += 2
                else: j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 40]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:end])); i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1])); i = j + 1
        elif c == "'":
            # a char literal ('x', '\n', '\u{..}') or a lifetime ('a)
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:i + 12])
            if m:
                out.append(" " * len(m.group(0))); i += len(m.group(0))
            else:
                out.append(c); i += 1
        else:
            out.append(c); i += 1
    return "".join(out)


def matching(code, open_at):
    """Index of the brace closing the one at `open_at`."""
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{": depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0: return j
    return len(code) - 1


def test_spans(code):
    """Character spans of `#[cfg(test)]` items, to be left out."""
    spans = []
    for m in re.finditer(r"#\[cfg\(test\)\]", code):
        brace, semi = code.find("{", m.end()), code.find(";", m.end())
        if brace < 0 or (0 <= semi < brace): continue   # `mod tests;`
        spans.append((m.start(), matching(code, brace)))
    return spans


def functions(path):
    text = open(path, encoding="utf-8").read()
    code = code_only(text)
    skip = test_spans(code)
    line_of = lambda k: code.count("\n", 0, k) + 1
    for m in FN.finditer(code):
        if any(a <= m.start() <= b for a, b in skip): continue
        # the body: the first `{` after the signature, unless a `;` ends it
        j, depth = m.end(), 0
        while j < len(code):
            ch = code[j]
            if ch in "(<[": depth += 1
            elif ch in ")>]": depth -= 1 if ch != ">" or code[j - 1] != "-" else 0
            elif ch == ";" and depth <= 0: j = -1; break
            elif ch == "{" and depth <= 0: break
            j += 1
        if j < 0 or j >= len(code): continue
        end = matching(code, j)
        start_line = line_of(m.start())
        yield path, start_line, m.group(1), line_of(end) - start_line + 1


def scan(root="src"):
    found = []
    for dirpath, _, files in os.walk(root):
        for f in files:
            if f.endswith(".rs") and not f.endswith("_tests.rs"):
                found.extend(functions(os.path.join(dirpath, f)))
    return sorted(found, key=lambda t: -t[3])


def main(argv):
    found = scan()
    show = int(argv[argv.index("--list") + 1]) if "--list" in argv else 0
    for path, line, name, n in found[:show]:
        print(f"{n:5} {path}:{line} {name}")
    over_max = [f for f in found if f[3] > MAX]
    long = [f for f in found if f[3] > LONG]
    for path, line, name, n in over_max:
        print(f"too long: {path}:{line} {name} is {n} lines (at most {MAX})")
    if "--quiet" not in argv or over_max or len(long) > ALLOWED:
        print(f"{len(found)} functions; longest {found[0][3]} lines ({found[0][2]}); "
              f"{len(long)} over {LONG} lines (at most {ALLOWED}); {len(over_max)} over {MAX}")
    return 1 if over_max or len(long) > ALLOWED else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
