#!/usr/bin/env python3
"""Makes docs/configuration.md from the binary itself, so that it cannot drift from --help.

Usage: scripts/config-reference.py BINARY > docs/configuration.md
       scripts/config-reference.py --check docs/configuration.md BINARY

It runs `BINARY --help`, `BINARY COMMAND --help` for every command --help lists, and `BINARY config
--print` (with empty XDG_CONFIG_HOME, XDG_STATE_HOME and HOME directories of its own, so that no config
file of the user's is read), and writes each command's overview, usage, arguments and options as
Markdown tables, in --help's words, then the defaults as a config file. --check makes the same text and
compares it with the file: exit 0 when they are the same, else 1 and a unified diff. (`make test` runs
the check; `make config-reference` writes the file.)
"""
import difflib
import os
import re
import subprocess
import sys
import tempfile

# ArgumentParser's help: an option or argument line starts with two spaces; its text starts at this
# column, or on the next line when the label is too long; continuation lines are indented to it.
TEXT_COLUMN = 26


def run(binary, args, env):
    done = subprocess.run([binary] + args, capture_output=True, text=True, env=env, timeout=60)
    if done.returncode != 0:
        sys.exit(f"config-reference: `{' '.join([binary] + args)}` exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def words(text):
    return " ".join(text.split())


def sections(help_text):
    """The help's sections, in order: (title, lines). Titles are OVERVIEW, USAGE, ARGUMENTS, OPTIONS,
    SUBCOMMANDS and every option group's (e.g. TOUCHPAD MODE)."""
    out = []
    for line in help_text.rstrip("\n").split("\n"):
        m = re.match(r"^([A-Z][A-Z0-9 ,()'/-]*):(.*)$", line)
        if m and not line.startswith(" "):
            out.append([m.group(1), [m.group(2).strip()] if m.group(2).strip() else []])
        elif out:
            out[-1][1].append(line)
    return out


def entries(lines):
    """Label and text of each option, argument or command in a section's lines."""
    items = []
    for line in lines:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent == 2 and not (items and indent >= TEXT_COLUMN):
            label = line[2:TEXT_COLUMN].rstrip() if len(line) > TEXT_COLUMN and line[TEXT_COLUMN - 1] == " " else line[2:].rstrip()
            text = line[TEXT_COLUMN:].strip() if len(line) > TEXT_COLUMN and line[TEXT_COLUMN - 1] == " " else ""
            items.append([label, text])
        elif items:
            items[-1][1] = (items[-1][1] + " " + line.strip()).strip()
    return [(label, words(text)) for label, text in items]


def cell(text):
    # Only what Markdown would take for table syntax is escaped; every word stays --help's.
    return text.replace("|", "\\|")


def command_section(binary, env, command, level):
    args = ([command] if command else []) + ["--help"]
    name = "touchbridge" + (f" {command}" if command else "")
    parts = sections(run(binary, args, env))
    out = [f"{'#' * level} {name}", ""]
    subcommands = []
    for title, lines in parts:
        if title == "OVERVIEW":
            paragraphs = "\n".join(lines).split("\n\n")
            out += [words(p) for p in paragraphs if p.strip()]
            out.append("")
        elif title == "USAGE":
            out += ["```", words(" ".join(lines)), "```", ""]
        elif title == "SUBCOMMANDS":
            out += ["| command | what it does |", "| --- | --- |"]
            # The section's last line says how to get help ("See 'touchbridge help <subcommand>' …"): not a command.
            for label, text in entries([line for line in lines if not line.startswith("  See ")]):
                command_name = label.split()[0]
                subcommands.append(command_name)
                out.append(f"| `{label}` | {cell(text)} |")
            out.append("")
        else:
            items = entries(lines)
            if not items:
                continue
            heading = title.capitalize() if title not in ("OPTIONS", "ARGUMENTS") else title.lower().capitalize()
            kind = "argument" if title == "ARGUMENTS" else "option"
            out += [f"{'#' * (level + 1)} {heading}", "", f"| {kind} | meaning |", "| --- | --- |"]
            out += [f"| `{label}` | {cell(text)} |" for label, text in items]
            out.append("")
    return out, subcommands


def reference(binary):
    with tempfile.TemporaryDirectory(prefix="config-reference.") as home:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8",
               "XDG_CONFIG_HOME": os.path.join(home, "config"), "XDG_STATE_HOME": os.path.join(home, "state"),
               "COLUMNS": "100"}
        out = ["# Configuration reference", "",
               "<!-- Made by scripts/config-reference.py from the binary's --help and `config --print`: do not edit.",
               "     `make config-reference` makes it again; `make test` fails when it differs from the binary. -->", "",
               "Every command and option of touchbridge, in the words of its `--help` (and of `man touchbridge`),",
               "and the defaults as a config file. How the config file is read, the exit statuses and the signals:",
               "[running.md](running.md).", ""]
        top, commands = command_section(binary, env, None, 2)
        out += top
        for command in commands:
            if command == "help":
                continue
            section, _ = command_section(binary, env, command, 2)
            out += section
        out += ["## The defaults as a config file", "",
                "`touchbridge config --print` with no config file and no options: every setting, its default, and",
                "where its value came from. Any of these lines can go in `$XDG_CONFIG_HOME/touchbridge/config.toml`.", "",
                "```toml"]
        out += run(binary, ["config", "--print"], env).rstrip("\n").split("\n")
        out += ["```", ""]
    return "\n".join(out)


def main(argv):
    if len(argv) == 1:
        sys.stdout.write(reference(argv[0]))
        return 0
    if len(argv) == 3 and argv[0] == "--check":
        path, binary = argv[1], argv[2]
        made = reference(binary)
        try:
            with open(path, encoding="utf-8") as f:
                kept = f.read()
        except FileNotFoundError:
            kept = ""
        if made == kept:
            return 0
        sys.stdout.writelines(difflib.unified_diff(kept.splitlines(True), made.splitlines(True), path, f"{binary} --help"))
        print(f"config-reference: {path} differs from what {binary} says: run `make config-reference` and commit it",
              file=sys.stderr)
        return 1
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
