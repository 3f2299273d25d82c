#!/usr/bin/env python3
"""Generates ``python/harness_agents/_events.py`` from the JSON Schema ``harness schema`` prints.

The event and outcome classes of the Python package are never written by hand: this script
reads the schema (derived in Rust from the serde types that write the lines) and writes one
dataclass per event kind, the outcome and their parts, the functions that build them from the
JSON objects the extension hands over, and ``to_dict`` methods that give those objects back.

    cargo run -q -p harness-cli -- schema | python3 harness-python/gen_events.py
    cargo run -q -p harness-cli -- schema | python3 harness-python/gen_events.py --check

``--check`` writes nothing and fails when the committed module differs from what the schema
gives (CI runs it). Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).resolve().parent / "python" / "harness_agents" / "_events.py"

# The event fields every kind carries: the schema states them once on `Event`, beside the
# `oneOf` of kinds.
COMMON = "Event"


def class_name(kind: str) -> str:
    """`unknown` -> `UnknownEvent`; `started` -> `StartedEvent`."""
    return "".join(part.capitalize() for part in kind.split("_")) + "Event"


def py_type(schema: dict[str, Any]) -> str:
    """The annotation of a property's schema."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "const" in schema:
        return f"Literal[{json.dumps(schema['const'])}]"
    kind = schema.get("type")
    if isinstance(kind, list):
        parts = [py_type({**schema, "type": k}) for k in kind]
        return " | ".join(parts)
    if kind == "string":
        return "str"
    if kind == "integer":
        return "int"
    if kind == "number":
        return "int | float"
    if kind == "boolean":
        return "bool"
    if kind == "null":
        return "None"
    if kind == "array":
        return f"list[{py_type(schema.get('items', {}))}]"
    if kind == "object":
        values = schema.get("additionalProperties")
        if isinstance(values, dict):
            keys = schema.get("propertyNames", {})
            key = py_type(keys) if keys else "str"
            return f"dict[{key}, {py_type(values)}]"
        return "dict[str, Any]"
    return "Any"


def nullable(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    return isinstance(kind, list) and "null" in kind


def doc(text: str | None, indent: str) -> list[str]:
    """A docstring, its lines indented; empty when there is no text."""
    if not text:
        return []
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = text.splitlines()
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    return [f'{indent}"""{lines[0]}'] + [f"{indent}{line}" if line else "" for line in lines[1:]] + [f'{indent}"""']


class Model:
    """One generated dataclass: its name, doc, the JSON kind it is tagged with (if any) and its
    fields in order: required first (as the schema lists them), then optional ones."""

    def __init__(self, name: str, description: str | None, kind: str | None) -> None:
        self.name = name
        self.description = description
        self.kind = kind
        self.fields: list[tuple[str, dict[str, Any], bool]] = []

    def add(self, properties: dict[str, Any], required: list[str]) -> None:
        for key in sorted(properties, key=lambda k: (k not in required, k)):
            if key == "kind" and self.kind is not None:
                continue
            self.fields.append((key, properties[key], key in required))


def models(schema: dict[str, Any]) -> tuple[list[Model], list[Model], dict[str, list[str]]]:
    """The part classes, the tagged classes (events then the outcome) and the string enums."""
    defs = schema["$defs"]
    enums: dict[str, list[str]] = {}
    parts: list[Model] = []
    for name in sorted(defs):
        definition = defs[name]
        alternatives = definition.get("oneOf")
        if alternatives and all("const" in alt for alt in alternatives):
            enums[name] = [alt["const"] for alt in alternatives]
        elif name not in (COMMON, "OutcomeLine") and definition.get("type") == "object":
            model = Model(name, definition.get("description"), None)
            model.add(definition.get("properties", {}), definition.get("required", []))
            parts.append(model)
    tagged: list[Model] = []
    event = defs[COMMON]
    for alternative in event["oneOf"]:
        kind = alternative["properties"]["kind"]["const"]
        model = Model(class_name(kind), alternative.get("description"), kind)
        model.add(alternative["properties"], alternative.get("required", []))
        model.add(event.get("properties", {}), event.get("required", []))
        tagged.append(model)
    outcome_line = defs["OutcomeLine"]
    outcome = Model("Outcome", outcome_line.get("description"), "outcome")
    outcome.add(outcome_line["properties"], outcome_line.get("required", []))
    tagged.append(outcome)
    return parts, tagged, enums


def reader(schema: dict[str, Any], expr: str, builders: set[str]) -> str:
    """How to build a field's value from its JSON value `expr`."""
    ref = schema.get("$ref", "").rsplit("/", 1)[-1]
    if ref in builders:
        return f"_{ref}_from_json({expr})"
    items = schema.get("items", {})
    item_ref = items.get("$ref", "").rsplit("/", 1)[-1] if isinstance(items, dict) else ""
    if schema.get("type") == "array" and item_ref in builders:
        return f"[_{item_ref}_from_json(item) for item in {expr}]"
    return expr


def writer(schema: dict[str, Any], expr: str, builders: set[str]) -> str:
    """How to turn a field's value `expr` back into JSON."""
    ref = schema.get("$ref", "").rsplit("/", 1)[-1]
    if ref in builders:
        return f"{expr}.to_dict()"
    items = schema.get("items", {})
    item_ref = items.get("$ref", "").rsplit("/", 1)[-1] if isinstance(items, dict) else ""
    if schema.get("type") == "array" and item_ref in builders:
        return f"[item.to_dict() for item in {expr}]"
    return expr


def render_model(model: Model, builders: set[str]) -> list[str]:
    out = ["", "", "@dataclass(slots=True, kw_only=True)", f"class {model.name}:"]
    description = model.description or ""
    if model.kind is not None:
        description += f'\n\nThe JSON object\'s "kind" is "{model.kind}".'
    out += doc(description.strip(), "    ")
    if model.kind is not None:
        out += ["", f"    kind: ClassVar[Literal[{json.dumps(model.kind)}]] = {json.dumps(model.kind)}"]
    for key, schema, required in model.fields:
        annotation = py_type(schema)
        if not required and "None" not in annotation.split(" | "):
            annotation += " | None"
        default = "" if required else " = None"
        if key == "raw" and model.kind == "unknown":
            description = (schema.get("description") or "") + " Kept whole, as `json.loads` gives it."
        else:
            description = schema.get("description")
        out += ["", f"    {key}: {annotation}{default}"]
        out += doc(description, "    ")
    # to_dict: the JSON object back, optional fields that are None left out (J10).
    out += ["", "    def to_dict(self) -> dict[str, Any]:"]
    out += ['        """The JSON object `harness` writes for this value (absent fields left out)."""']
    out += ["        out: dict[str, Any] = {}"]
    if model.kind is not None:
        out += [f"        out[\"kind\"] = {json.dumps(model.kind)}"]
    for key, schema, required in model.fields:
        value = writer(schema, f"self.{key}", builders)
        if required:
            out += [f"        out[{json.dumps(key)}] = {value}"]
        else:
            out += [f"        if self.{key} is not None:", f"            out[{json.dumps(key)}] = {value}"]
    out += ["        return out"]
    return out


def render_builder(model: Model, builders: set[str]) -> list[str]:
    name = f"_{model.name}_from_json"
    out = ["", "", f"def {name}(data: dict[str, Any]) -> {model.name}:"]
    out += [f"    return {model.name}("]
    for key, schema, required in model.fields:
        if required:
            value = reader(schema, f"data[{json.dumps(key)}]", builders)
        else:
            built = reader(schema, "value", builders)
            if built == "value":
                value = f"data.get({json.dumps(key)})"
            else:
                value = f"None if (value := data.get({json.dumps(key)})) is None else {built}"
        out += [f"        {key}={value},"]
    out += ["    )"]
    return out


def render(schema: dict[str, Any]) -> str:
    parts, tagged, enums = models(schema)
    builders = {model.name for model in parts}
    out = [
        '"""The events and the outcome of `harness`, as dataclasses.',
        "",
        "Generated by `gen_events.py` from the JSON Schema `harness schema` prints; do not edit.",
        "Regenerate: `cargo run -q -p harness-cli -- schema | python3 harness-python/gen_events.py`.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from dataclasses import dataclass",
        "from typing import Any, Callable, ClassVar, Literal, Union",
        "",
        "__all__ = [",
    ]
    names = sorted(enums) + [m.name for m in parts] + [m.name for m in tagged] + ["Event", "FROM_JSON"]
    out += [f"    {json.dumps(name)}," for name in names]
    out += ["]"]
    for name in sorted(enums):
        description = schema["$defs"][name].get("description")
        values = ", ".join(json.dumps(v) for v in enums[name])
        out += ["", f"{name} = Literal[{values}]"]
        out += doc(description, "")
    for model in parts:
        out += render_model(model, builders)
    for model in tagged:
        out += render_model(model, builders)
    events = [m for m in tagged if m.name != "Outcome"]
    out += ["", "", "Event = Union["]
    out += [f"    {m.name}," for m in events]
    out += ["]", '"""One normalized event (SPEC J1-J10): one class per kind."""']
    for model in parts + tagged:
        out += render_builder(model, builders)
    out += ["", "", "FROM_JSON: dict[str, Callable[[dict[str, Any]], Any]] = {"]
    out += [f"    {json.dumps(m.kind)}: _{m.name}_from_json," for m in tagged]
    out += ["}", '"""The builder of each JSON object, by its "kind"; the extension calls these."""', ""]
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("schema", nargs="?", help="the schema file (default: standard input)")
    parser.add_argument("--check", action="store_true", help="fail if the committed module is stale")
    args = parser.parse_args()
    text = Path(args.schema).read_text() if args.schema else sys.stdin.read()
    generated = render(json.loads(text))
    if args.check:
        current = OUTPUT.read_text() if OUTPUT.exists() else ""
        if current != generated:
            print(
                f"{OUTPUT} is stale: regenerate it with "
                "`cargo run -q -p harness-cli -- schema | python3 harness-python/gen_events.py`",
                file=sys.stderr,
            )
            return 1
        return 0
    OUTPUT.write_text(generated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
