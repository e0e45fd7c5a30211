"""Just enough YAML to read this repository's own manifests (.pre-commit-hooks.yaml,
action.yml): block mappings and sequences by indentation, plain and quoted scalars, flow
lists, `|` block scalars, and whole-line comments. No dependency beyond the standard
library; anything outside that subset is an error, so a manifest cannot drift into YAML
this reader would misread."""

from __future__ import annotations

import json


def load(text: str):
    lines = [(len(raw) - len(raw.lstrip(" ")), raw.strip(), raw, n) for n, raw in enumerate(text.splitlines())]
    lines = [line for line in lines if line[1] and not line[1].startswith("#")]
    value, rest = _block(lines, 0, lines[0][0] if lines else 0, text)
    if rest != len(lines):
        raise ValueError(f"unparsed line: {lines[rest][2]!r}")
    return value


def _scalar(text: str):
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [_scalar(part.strip()) for part in inner.split(",")] if inner else []
    if text.startswith('"'):
        return json.loads(text)
    if text.startswith("'") and text.endswith("'"):
        return text[1:-1].replace("''", "'")
    if text in ("true", "false"):
        return text == "true"
    if text.lstrip("-").isdigit():
        return int(text)
    if text.startswith(("{", "&", "*", "!", "|-", ">")) or " #" in text:
        raise ValueError(f"outside the supported subset: {text!r}")
    return text


def _block(lines, i, indent, source):
    if lines[i][1].startswith("- "):
        items = []
        while i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("- "):
            inner_indent = indent + 2
            first = lines[i][1][2:]
            lines[i] = (inner_indent, first, lines[i][2], lines[i][3])
            if ":" in first and not first.startswith(("'", '"')):
                value, i = _mapping(lines, i, inner_indent, source)
            else:
                value, i = _scalar(first), i + 1
            items.append(value)
        return items, i
    return _mapping(lines, i, indent, source)


def _mapping(lines, i, indent, source):
    result = {}
    all_lines = source.splitlines()
    while i < len(lines) and lines[i][0] == indent and not lines[i][1].startswith("- "):
        key, sep, value = lines[i][1].partition(":")
        if not sep:
            raise ValueError(f"expected 'key: value': {lines[i][2]!r}")
        value = value.strip()
        if value == "|":
            start = lines[i][3] + 1
            body, j = [], i + 1
            block_indent = None
            for raw in all_lines[start:]:
                if raw.strip() and (len(raw) - len(raw.lstrip(" "))) <= indent:
                    break
                if raw.strip() and block_indent is None:
                    block_indent = len(raw) - len(raw.lstrip(" "))
                body.append(raw[block_indent or 0 :] if raw.strip() else "")
            while body and not body[-1]:
                body.pop()
            while j < len(lines) and lines[j][0] > indent:
                j += 1
            result[key.strip()] = "\n".join(body) + "\n"
            i = j
        elif value:
            result[key.strip()] = _scalar(value)
            i += 1
        elif i + 1 < len(lines) and lines[i + 1][0] > indent:
            result[key.strip()], i = _block(lines, i + 1, lines[i + 1][0], source)
        elif i + 1 < len(lines) and lines[i + 1][0] == indent and lines[i + 1][1].startswith("- "):
            result[key.strip()], i = _block(lines, i + 1, indent, source)
        else:
            result[key.strip()] = None
            i += 1
    return result, i
