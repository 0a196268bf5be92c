#!/usr/bin/env python3
"""docs/cli.md documents every subcommand and option that `adjoint --help` lists.

Runs `adjoint --help` and each subcommand's `--help` (recursively: `bench render`), and
checks that docs/cli.md has a heading naming the command (`adjoint optimize`, `adjoint bench
render`; the editor's own options under `adjoint [SCENE]`) and, under it, every option in
backquotes (`--iterations`). Fails naming each one missing.

usage: check_cli.py REPO_ROOT PATH/TO/adjoint
"""
import pathlib
import re
import subprocess
import sys

root, exe = pathlib.Path(sys.argv[1]), sys.argv[2]
doc_path = root / "docs/cli.md"


def help_of(path):
    out = subprocess.run([exe, *path, "--help"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        sys.exit(f"check_cli: `adjoint {' '.join(path)} --help` exited {out.returncode}: {out.stderr}")
    options, subcommands, section = [], [], ""
    for line in out.stdout.splitlines():
        if re.match(r"^\S.*:$", line):
            section = line[:-1].strip()
            continue
        first = re.split(r"\s{2,}", line.strip())[0] if line.strip() else ""
        if section == "Options" and first.startswith("-"):
            options += [o for o in re.findall(r"--[a-z0-9][a-z0-9-]*", first) if o != "--help"]
        elif section == "Subcommands" and re.fullmatch(r"[a-z][a-z0-9-]*", first):
            subcommands.append(first)
    return options, subcommands


def sections(text):
    """heading text -> the text under it, up to the next heading"""
    out, heading = {}, None
    for line in text.splitlines():
        m = re.match(r"^#+\s+(.*)$", line)
        if m:
            heading = m.group(1)
            out[heading] = ""
        elif heading is not None:
            out[heading] += line + "\n"
    return out


doc = sections(doc_path.read_text())
missing, checked = [], 0
todo = [[]]
while todo:
    path = todo.pop(0)
    options, subcommands = help_of(path)
    todo += [path + [s] for s in subcommands]
    name = "adjoint " + (" ".join(path) if path else "[SCENE]")
    body = [text for heading, text in doc.items()
            if re.search(re.escape(name) + r"(?![\w-])", heading.replace("`", ""))]
    if not body:
        missing.append(f"no heading names `{name}`")
        continue
    for o in options:
        checked += 1
        if f"`{o}" not in body[0]:
            missing.append(f"`{name}`: option `{o}` is not described under its heading")
if missing:
    print(f"{doc_path}: does not match `adjoint --help`:")
    for m in missing:
        print("  " + m)
    sys.exit(1)
print(f"{doc_path}: every subcommand and all {checked} options documented")
