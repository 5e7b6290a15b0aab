#!/usr/bin/env python3
"""Completes a man page that swift-argument-parser's generate-manual wrote (scripts/generate-manuals.sh):
each option's default from the command's own --experimental-dump-help (the plugin leaves defaults
out), value names it wrote without their non-ASCII letters (`µs` came out as `s`) spelled with
roff's escapes, and, for a command without subcommands, no `help` subcommand (the plugin lists one
for every command). Usage: man-page-fixes.py PAGE BINARY"""
import json
import re
import subprocess
import sys

ROFF = {"µ": r"\(mc"}

page, binary = sys.argv[1], sys.argv[2]
command = json.loads(subprocess.run([binary, "--experimental-dump-help"], capture_output=True, text=True,
                                    check=True).stdout)["command"]
options = {}
for argument in command.get("arguments", []):
    longs = [n["name"] for n in argument.get("names", []) if n["kind"] == "long"]
    if longs:
        options[longs[0]] = argument
# swift-argument-parser adds `help` to every command's subcommands in its dump, as in its page.
real_subcommands = [c for c in command.get("subcommands", []) if c.get("commandName") != "help"]
lines = open(page).read().split("\n")
out = []
current = None  # the option whose item is being copied


def close_item():
    """Ends the current option's item with its default, unless its text already says one."""
    if current is None:
        return
    default = options[current].get("defaultValue")
    start = max(i for i, l in enumerate(out) if l.startswith(f".It Fl -{current}"))
    if default not in (None, "") and not any("Default" in l for l in out[start:]):
        out.extend([".Pp", f"Default: {default}."])


for index, line in enumerate(lines):
    if line is None:
        continue
    if line.startswith(".It ") or line.startswith(".El"):
        close_item()
        current = None
        match = re.match(r"\.It Fl -([a-z0-9-]+)", line)
        if match and match.group(1) in options:
            current = match.group(1)
    if not real_subcommands and line == ".It Em help" and lines[index + 1].startswith("Show subcommand help"):
        lines[index + 1] = None
        continue
    for name, argument in options.items():
        value = argument.get("valueName", "")
        if any(ord(c) > 127 for c in value):
            ascii_only = "".join(c for c in value if ord(c) < 128)
            spelled = "".join(ROFF.get(c, c) for c in value)
            line = re.sub(rf"(Fl -{re.escape(name)} Ar ){re.escape(ascii_only)}\b",
                          lambda match: match.group(1) + spelled, line)
    out.append(line)
open(page, "w").write("\n".join(out))
