#!/usr/bin/env python3
"""Every key and named value the scene loader accepts appears in docs/scene-format.md.

The loader (engine/scene/scene_read.cpp, scene_robot_json.cpp) reads each JSON key through a
Reader call with the key as a string literal (r.number(f, "dt", ...), r.choice(f, "type",
{"cloth", ...}), read_numbers(r, f, "q", ...)) and refuses keys it did not ask for. This
script collects those literals, the choice lists' values and the parameter kinds
(engine/scene/scene.h's ParamKind and engine/model/field_table.h's rows), and fails naming
each one that the reference does not name in an inline code span outside its examples
(`dt`, `settings.dt` or `"z"`).

usage: check_scene_keys.py REPO_ROOT
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
sources = sorted((root / "engine/scene").glob("scene_*.cpp"))
doc_path = root / "docs/scene-format.md"

keys, values = {}, {}
# r.number(f, "key", ...), side.string(f, "key", ...): a Reader method on a Fields
method = re.compile(r"\b(?:r|side)\.(\w+)\(\s*\w+\s*,\s*\"(\w+)\"")
# read_numbers(r, f, "key", ...): a helper taking the Reader and the Fields
helper = re.compile(r"\b\w+\(\s*(?:r|side)\s*,\s*\w+\s*,\s*\"(\w+)\"")
# {"key", &o.field}: a table of keys read in a loop
table = re.compile(r"\{\s*\"(\w+)\"\s*,\s*&")
# f.used.insert("key"): a key accepted and ignored
used = re.compile(r"used\.insert\(\s*\"(\w+)\"")
# r.choice(f, "key", {"a", "b"}, ...): the values a key takes
choice = re.compile(r"\.choice\(\s*\w+\s*,\s*\"(\w+)\"\s*,\s*\{([^}]*)\}", re.S)

for src in sources:
    text = src.read_text()
    for m in method.finditer(text):
        if m.group(1) not in ("error", "join", "index"):
            keys.setdefault(m.group(2), src.name)
    for rx in (helper, table, used):
        for m in rx.finditer(text):
            keys.setdefault(m.group(1), src.name)
    for m in choice.finditer(text):
        for v in re.findall(r"\"(\w+)\"", m.group(2)):
            values.setdefault(v, f"{src.name} ({m.group(1)})")

# parameter kinds: the enum's own entries and the field table's rows
scene_h = (root / "engine/scene/scene.h").read_text()
enum = re.search(r"enum class ParamKind \{(.*?)\n// model fields", scene_h, re.S)
for name in re.findall(r"^\s*(\w+),", enum.group(1) if enum else "", re.M):
    values.setdefault(name, "scene.h (ParamKind)")
fields = (root / "engine/model/field_table.h").read_text()
for name in re.findall(r"X\((?:kind|same),\s*(\w+),", fields):
    values.setdefault(name, "field_table.h (parameter kind)")

# the scan must have found the loader: a format change that hides the keys from it fails here
if len(keys) < 60 or len(values) < 40:
    sys.exit(f"check_scene_keys: found only {len(keys)} keys and {len(values)} values in "
             f"{', '.join(s.name for s in sources)}; has the loader's style changed?")

# documented = a word of some inline code span outside the examples: `dt`, `settings.dt`, `"z"`
prose = re.sub(r"^```.*?^```", "", doc_path.read_text(), flags=re.S | re.M)
words = {w for span in re.findall(r"`([^`]+)`", prose) for w in re.findall(r"\w+", span)}
missing = [f"key `{k}` ({src})" for k, src in sorted(keys.items()) if k not in words]
missing += [f"value `{v}` ({src})" for v, src in sorted(values.items()) if v not in words]
if missing:
    print(f"{doc_path}: does not document what the loader accepts:")
    for m in missing:
        print("  " + m)
    sys.exit(1)
print(f"{doc_path}: all {len(keys)} keys and {len(values)} named values documented")
