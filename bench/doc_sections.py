"""doc_sections.py — docs/perf.md is written by more than one benchmark:
bench/run.py writes the whole page but for the `## ` sections other
scripts own (bench/python_overhead.py's "Python overhead"), which it keeps
as they are; each of those scripts replaces its own section only."""
import re


def sections(text):
    """[(title or None for the head, text)] split at '## ' lines."""
    parts = re.split(r"(?m)^(?=## )", text)
    return [(p.splitlines()[0][3:].strip() if p.startswith("## ") else None, p) for p in parts]


def kept(path, own):
    """The sections of the page at path whose titles are not in own."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return ""
    return "".join(p for t, p in sections(text) if t is not None and t not in own)


def write_section(path, title, body):
    """Replace section `## title` of the page at path with body (the
    section's text after its title line), or append it."""
    with open(path) as f:
        parts = sections(f.read())
    new = "## %s\n\n%s\n" % (title, body.strip("\n"))
    out, done = [], False
    for t, p in parts:
        if t == title:
            out.append(new + "\n")
            done = True
        else:
            out.append(p)
    if not done:
        out.append(("\n" if out and not out[-1].endswith("\n\n") else "") + new)
    with open(path, "w") as f:
        f.write("".join(out).rstrip("\n") + "\n")
