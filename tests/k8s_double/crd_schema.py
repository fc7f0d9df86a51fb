"""A custom resource definition's openAPIV3Schema, applied the way a Kubernetes API server does.

Three jobs, each a function of the CRD file alone (the file is read from the shared fixtures, never
copied into the project):

  validate(obj)  -> list of (field path, message): type, enum, required, pattern, bounds and
                    format errors, in the API server's words ("spec.x in body must be of type
                    integer: \"string\""). The API server answers these with a 422 Invalid.
  unknown(obj)   -> field paths the schema does not declare. A server prunes them silently, or
                    refuses them with 400 BadRequest under `fieldValidation=Strict`.
  default(obj)   -> fills the schema's `default:` values into objects that are present.

Kubernetes extensions honoured: x-kubernetes-int-or-string, x-kubernetes-preserve-unknown-fields,
nullable, format int32/int64 bounds. CEL rules (x-kubernetes-validations) are not evaluated; see
docs/kuberay.md for why that does not weaken the launcher's tests.
"""
import copy

import jsonschema
import yaml

INT32 = (-(2 ** 31), 2 ** 31 - 1)
INT64 = (-(2 ** 63), 2 ** 63 - 1)


def load_crd(path, version="v1"):
    """(crd dict, the served version's openAPIV3Schema)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(path) as f:
        crd = yaml.load(f, Loader=loader)
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return crd, v["schema"]["openAPIV3Schema"]
    raise ValueError(f"{path}: no version {version}")


def _to_json_schema(node):
    """The OpenAPI v3 subset of a structural schema as a JSON Schema (draft 7) the validator
    understands: int-or-string becomes a type union, nullable adds null, formats get bounds."""
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {k: _to_json_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = _to_json_schema(value)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [_to_json_schema(v) for v in value]
        elif key.startswith("x-kubernetes-") or key in ("description", "format", "nullable",
                                                         "default", "example"):
            continue
        else:
            out[key] = value
    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
    fmt = node.get("format")
    if node.get("type") == "integer" and fmt in ("int32", "int64"):
        lo, hi = INT32 if fmt == "int32" else INT64
        out.setdefault("minimum", lo)
        out.setdefault("maximum", hi)
    if node.get("nullable") and "type" in out:
        types = out["type"] if isinstance(out["type"], list) else [out["type"]]
        out["type"] = types + ["null"]
    return out


def _path(error_path):
    """A JSON pointer deque as the API server writes field paths: spec.containers[0].name."""
    out = ""
    for part in error_path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _describe(error, field):
    """The API server's wording for one schema violation."""
    value = error.instance
    shown = value if isinstance(value, (int, float)) and not isinstance(value, bool) else \
        f'"{value}"' if isinstance(value, str) else str(value).lower() if isinstance(value, bool) \
        else type(value).__name__
    v = error.validator
    if v == "type":
        want = error.validator_value
        want = want[0] if isinstance(want, list) and len(want) == 1 else want
        if isinstance(want, list):
            want = " or ".join(w for w in want if w != "null")
        return f"Invalid value: {shown}: {field} in body must be of type {want}: {shown}"
    if v == "enum":
        allowed = ", ".join(f'"{x}"' for x in error.validator_value)
        return f"Unsupported value: {shown}: supported values: {allowed}"
    if v == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return f"Required value: {field + '.' if field else ''}{missing} in body is required"
    if v in ("minimum", "maximum"):
        word = "greater than or equal to" if v == "minimum" else "less than or equal to"
        return f"Invalid value: {shown}: {field} in body should be {word} {error.validator_value}"
    if v in ("maxLength", "minLength", "maxItems", "minItems", "pattern"):
        return f"Invalid value: {shown}: {field} in body should match {v} {error.validator_value}"
    return f"Invalid value: {shown}: {error.message}"


class Schema:
    def __init__(self, open_api_v3):
        self.raw = open_api_v3
        self.validator = jsonschema.Draft7Validator(_to_json_schema(open_api_v3))

    def validate(self, obj):
        """[(field, message)], sorted by field: what a 422 Invalid lists as its causes."""
        problems = []
        for error in self.validator.iter_errors(obj):
            field = _path(error.absolute_path)
            if error.validator == "required" and "'" in error.message:
                missing = error.message.split("'")[1]
                field = f"{field}.{missing}" if field else missing
                problems.append((field, "Required value"))
                continue
            problems.append((field, _describe(error, field)))
        return sorted(set(problems))

    def unknown(self, obj):
        """Field paths present in obj and declared nowhere in the schema."""
        found = []
        self._unknown(self.raw, obj, "", found)
        return found

    def _unknown(self, node, value, path, found):
        if not isinstance(node, dict) or node.get("x-kubernetes-preserve-unknown-fields"):
            return
        if isinstance(value, dict) and node.get("type") == "object":
            props = node.get("properties")
            extra = node.get("additionalProperties")
            for key, sub in value.items():
                where = f"{path}.{key}" if path else key
                if props is not None and key in props:
                    self._unknown(props[key], sub, where, found)
                elif isinstance(extra, dict):
                    self._unknown(extra, sub, where, found)
                elif props is not None and path != "metadata":
                    found.append(where)
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            for i, item in enumerate(value):
                self._unknown(node["items"], item, f"{path}[{i}]", found)

    def default(self, obj):
        """A copy of obj with the schema's defaults filled into the objects it has."""
        obj = copy.deepcopy(obj)
        self._default(self.raw, obj)
        return obj

    def _default(self, node, value):
        if not isinstance(node, dict):
            return
        if isinstance(value, dict):
            for key, sub in node.get("properties", {}).items():
                if key not in value and "default" in sub:
                    value[key] = copy.deepcopy(sub["default"])
                if key in value:
                    self._default(sub, value[key])
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            for item in value:
                self._default(node["items"], item)
