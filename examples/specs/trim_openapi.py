#!/usr/bin/env python3
"""Trim a large OpenAPI JSON document to a coherent subset of its operations.

Takes: a JSON OpenAPI 3.0/3.1 document and a list of operations, each given as
an operationId or as "METHOD /path/template".
Writes: a JSON document that holds exactly
  * every top-level key of the original, in the original order, with `paths`
    and `components` reduced as below (`tags`, if present, keeps only the tags
    used by the kept operations);
  * in `paths`, only the path items of the kept operations; inside each kept
    path item, the kept methods plus every non-method key of the item
    (`parameters`, `servers`, `summary`, `description`, `x-...`), which apply
    to every method of that path;
  * in `components`, only the entries reachable by `$ref` (transitively) from
    what is kept, plus the security schemes named by any kept `security`
    requirement (document level or operation level), each section and each
    entry in the original order.
Every kept value is the original value, unchanged: nothing is rewritten,
reordered, re-escaped or fixed.

Must never: follow or fetch an external `$ref` (another file or a URL): it
stops with an error naming the reference instead; write output that it has not
verified. Verification is done in two ways before writing:
  1. the serializer is checked to reproduce the ORIGINAL file byte for byte
     (so it knows the original's exact JSON style), and
  2. every kept operation and every kept component entry, serialized at its
     own nesting depth, is checked to occur verbatim in the original file.
It then re-reads the output and checks that every local `$ref` in it resolves.

The serializer reproduces two JSON styles:
  * "python": `json.dumps(indent=N, ensure_ascii=...)` output;
  * "go": Go's `json.MarshalIndent` as Square's spec uses it: the python layout,
    with `<`, `>`, `&`, U+2028 and U+2029 written as `\\u003c`, `\\u003e`,
    `\\u0026`, `\\u2028` and `\\u2029` (Go's HTML-safe escaping);
  * "ruby": Ruby's `JSON.pretty_generate` as Stripe's spec uses it, where an
    empty object is written "{\\n<indent>}" and an empty array "[\\n\\n<indent>]".
Numbers with a fraction or exponent are kept as their exact input text.
The style, indent and ASCII escaping are detected by trying each candidate
against the original file; if none reproduces it, the script refuses to run.

Usage:
  trim_openapi.py IN.json OUT.json OP [OP ...]
  e.g. trim_openapi.py spec3.json stripe.json "GET /v1/customers" PostRefunds
"""

import json
import sys

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
COMPONENT_PREFIX = "#/components/"


class RawFloat:
    """A JSON number with a fraction or exponent, kept as the exact text of
    the input (so 0.00001 stays 0.00001 and 1.0 stays 1.0 when written)."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __eq__(self, other):
        return isinstance(other, RawFloat) and other.text == self.text

    def __hash__(self):
        return hash(self.text)


# What Go's encoding/json escapes in strings beyond what Python's json does.
GO_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


class Style:
    """One way of writing JSON text; `dump(value, depth)` gives the text of a
    value whose first line sits at nesting `depth`."""

    def __init__(self, family, indent, ensure_ascii):
        self.family = family
        self.indent = indent
        self.ensure_ascii = ensure_ascii

    def __repr__(self):
        return "Style(%s, indent=%d, ensure_ascii=%s)" % (
            self.family,
            self.indent,
            self.ensure_ascii,
        )

    def scalar(self, value):
        if isinstance(value, RawFloat):
            return value.text
        text = json.dumps(value, ensure_ascii=self.ensure_ascii)
        if self.family == "go" and isinstance(value, str):
            for char, escaped in GO_ESCAPES:
                text = text.replace(char, escaped)
        return text

    def member(self, key, value, depth):
        """The text of `"key": value` as an object member at `depth`,
        including its leading indentation."""
        return " " * (self.indent * depth) + self.scalar(key) + ": " + self.dump(value, depth)

    def dump(self, value, depth=0):
        pad = " " * (self.indent * depth)
        inner = " " * (self.indent * (depth + 1))
        if isinstance(value, dict):
            if not value:
                return "{\n" + pad + "}" if self.family == "ruby" else "{}"
            items = [
                inner + self.scalar(k) + ": " + self.dump(v, depth + 1)
                for k, v in value.items()
            ]
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(value, list):
            if not value:
                return "[\n\n" + pad + "]" if self.family == "ruby" else "[]"
            items = [inner + self.dump(v, depth + 1) for v in value]
            return "[\n" + ",\n".join(items) + "\n" + pad + "]"
        return self.scalar(value)


def no_duplicate_keys(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise SystemExit("error: duplicate JSON key %r in the input" % k)
        seen[k] = v
    return seen


def detect_style(doc, raw_text):
    for family in ("ruby", "python", "go"):
        for indent in (2, 4, 1, 3):
            for ensure_ascii in (False, True):
                style = Style(family, indent, ensure_ascii)
                text = style.dump(doc)
                for tail in ("", "\n"):
                    if text + tail == raw_text:
                        return style, tail
    raise SystemExit(
        "error: no known JSON style reproduces the input byte for byte; "
        "refusing to trim (the kept parts could not be shown to be unchanged)"
    )


def decode_pointer_token(token):
    return token.replace("~1", "/").replace("~0", "~")


def component_of(ref, where):
    """("schemas", "customer") for "#/components/schemas/customer" (or for a
    pointer deeper inside that entry). Anything else is refused."""
    if not ref.startswith("#"):
        raise SystemExit(
            "error: external $ref %r at %s: this tool does not follow other "
            "files or URLs" % (ref, where)
        )
    if not ref.startswith(COMPONENT_PREFIX):
        raise SystemExit(
            "error: $ref %r at %s points outside #/components/; this tool "
            "keeps only component entries, so it cannot keep that target" % (ref, where)
        )
    parts = ref[len(COMPONENT_PREFIX):].split("/")
    if len(parts) < 2:
        raise SystemExit("error: $ref %r at %s names no entry" % (ref, where))
    return decode_pointer_token(parts[0]), decode_pointer_token(parts[1])


def collect_refs(value, where, out):
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str):
            out.append((ref, where))
        for k, v in value.items():
            collect_refs(v, where + "/" + k, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            collect_refs(v, "%s/%d" % (where, i), out)


def security_names(requirements):
    names = []
    for req in requirements or []:
        for name in req:
            names.append(name)
    return names


def find_operation(doc, spec):
    paths = doc.get("paths", {})
    head, _, rest = spec.partition(" ")
    if rest and head.lower() in METHODS:
        method, path = head.lower(), rest.strip()
        item = paths.get(path)
        if not isinstance(item, dict) or method not in item:
            raise SystemExit("error: no operation %s %s in the input" % (method.upper(), path))
        return path, method
    hits = [
        (path, method)
        for path, item in paths.items()
        for method in METHODS
        if isinstance(item, dict)
        and isinstance(item.get(method), dict)
        and item[method].get("operationId") == spec
    ]
    if len(hits) != 1:
        raise SystemExit(
            "error: operationId %r matches %d operations (want exactly 1)" % (spec, len(hits))
        )
    return hits[0]


def trim(doc, op_specs):
    keep_ops = {}
    for spec in op_specs:
        path, method = find_operation(doc, spec)
        if method in keep_ops.setdefault(path, []):
            raise SystemExit("error: operation %s listed twice" % spec)
        keep_ops[path].append(method)

    new_paths = {}
    for path, item in doc["paths"].items():
        if path not in keep_ops:
            continue
        new_paths[path] = {
            k: v for k, v in item.items() if k not in METHODS or k in keep_ops[path]
        }

    components = doc.get("components", {})
    wanted = {}  # section -> set(names)
    queue = []
    collect_refs(new_paths, "#/paths", queue)
    # Other top-level values (3.1 `webhooks`, `x-...`) are kept whole, so
    # whatever they reference must be kept too, or the output would dangle.
    for key, value in doc.items():
        if key not in ("paths", "components", "tags"):
            collect_refs(value, "#/" + key, queue)
    sec = security_names(doc.get("security"))
    for item in new_paths.values():
        for m in METHODS:
            if m in item:
                sec += security_names(item[m].get("security"))
    for name in sec:
        wanted.setdefault("securitySchemes", set()).add(name)
        if name not in components.get("securitySchemes", {}):
            raise SystemExit("error: security scheme %r is not in components" % name)
    while queue:
        ref, where = queue.pop()
        section, name = component_of(ref, where)
        if name not in components.get(section, {}):
            raise SystemExit("error: $ref %r at %s does not resolve" % (ref, where))
        names = wanted.setdefault(section, set())
        if name in names:
            continue
        names.add(name)
        collect_refs(
            components[section][name],
            "%s%s/%s" % (COMPONENT_PREFIX, section, name),
            queue,
        )

    new_components = {}
    for section, entries in components.items():
        if section in wanted:
            new_components[section] = {
                k: v for k, v in entries.items() if k in wanted[section]
            }
        elif section.startswith("x-"):
            new_components[section] = entries

    used_tags = set()
    for item in new_paths.values():
        for m in METHODS:
            if m in item:
                used_tags.update(item[m].get("tags", []))

    out = {}
    for key, value in doc.items():
        if key == "paths":
            out[key] = new_paths
        elif key == "components":
            out[key] = new_components
        elif key == "tags":
            out[key] = [t for t in value if t.get("name") in used_tags]
        else:
            out[key] = value
    return out, keep_ops, wanted


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    src, dst, op_specs = argv[1], argv[2], argv[3:]
    raw_text = open(src, encoding="utf-8").read()
    doc = json.loads(raw_text, object_pairs_hook=no_duplicate_keys, parse_float=RawFloat)
    style, tail = detect_style(doc, raw_text)

    out, keep_ops, wanted = trim(doc, op_specs)

    # Kept operations sit at depth 3 (root > paths > path > method) and kept
    # component entries at depth 3 (root > components > section > name) in
    # both files, so each must occur verbatim in the original at that depth.
    result = style.dump(out) + tail
    checked = 0
    for path, methods in keep_ops.items():
        for m in methods:
            text = style.member(m, doc["paths"][path][m], 3)
            if "\n" + text not in raw_text or "\n" + text not in result:
                raise SystemExit("error: %s %s is not byte-identical" % (m, path))
            checked += 1
    for section, names in wanted.items():
        for name in names:
            entry = doc["components"][section][name]
            text = style.member(name, entry, 3)
            if "\n" + text not in raw_text or "\n" + text not in result:
                raise SystemExit("error: %s/%s is not byte-identical" % (section, name))
            checked += 1

    reread = json.loads(result, parse_float=RawFloat)
    refs = []
    collect_refs(reread, "#", refs)
    for ref, where in refs:
        section, name = component_of(ref, where)
        if name not in reread.get("components", {}).get(section, {}):
            raise SystemExit("error: dangling $ref %r at %s in the output" % (ref, where))

    with open(dst, "w", encoding="utf-8") as f:
        f.write(result)
    counts = ", ".join("%s=%d" % (s, len(n)) for s, n in sorted(wanted.items()))
    print(
        "style %r; kept %d operations on %d paths; components kept: %s; "
        "%d kept parts checked byte-identical; %d local $refs resolve; wrote %d bytes"
        % (
            style,
            sum(len(m) for m in keep_ops.values()),
            len(keep_ops),
            counts,
            checked,
            len(refs),
            len(result.encode("utf-8")),
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
