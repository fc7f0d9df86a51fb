#!/usr/bin/env python3
"""A local Kubernetes API server test double for the KubeRay launcher's tests (127.0.0.1 only).

No Kubernetes API server can be installed on the machines these tests run on, so the real
`kubectl` talks to this instead. It serves what kubectl needs for apply / get -o json / logs /
delete on RayJobs (ray.io/v1), pods, pods/log and events: discovery (/api, /apis, resource
lists, an empty OpenAPI v2 document), the REST paths, label and field selectors, JSON merge
patches, and the API server's metav1.Status errors (401, 403, 404, 409, 422, 400, 500).

Every RayJob that is created or patched is validated against the real CRD (read from
--crd, the KubeRay v1.7.0 file under ATTUNE_SHARED_DIR) and refused with a 422 naming the field.
Bearer tokens are scoped to one namespace (403 elsewhere) and, with --role, to the rules of a
Role (as `attune kuberay rbac` prints it). kuberay_operator.py plays the KubeRay operator.

  k8s_double.py --crd CRD.yaml --state-dir DIR --workdir DIR --port-file FILE
                [--token TOKEN=NAMESPACE ...] [--role ROLE.yaml] [--kubeconfig-out FILE
                --kube-token TOKEN --kube-namespace NS] [--nodes N --gpus-per-node G]
                [--faults FAULTS.json]

Control (no auth, loopback only): POST /_double/faults with a JSON list of faults,
GET /_double/state ({"rayjobs": [...], "live_processes": [...]}).
Faults: {"kind": "unschedulable"|"image_pull"|"oom"|"node_lost", "match": GLOB, "after_s": S,
"times": N} per RayJob; {"kind": "api_error", "code": 500, "count": N, "method": "GET",
"path": SUBSTRING} and {"kind": "slow", "seconds": S, "count": N, ...} per request.
"""
import argparse
import base64
import copy
import fnmatch
import json
import os
import re
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import crd_schema  # noqa: E402
import kuberay_operator  # noqa: E402
from store import ApiError, Store, now_rfc3339  # noqa: E402

SERVER_VERSION = {"major": "1", "minor": "30", "gitVersion": "v1.30.0-attune-double",
                  "platform": "linux/amd64"}
CORE_RESOURCES = [
    {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod",
     "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"], "shortNames": ["po"],
     "categories": ["all"]},
    {"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod", "verbs": ["get"]},
    {"name": "events", "singularName": "event", "namespaced": True, "kind": "Event",
     "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"], "shortNames": ["ev"]},
    {"name": "namespaces", "singularName": "namespace", "namespaced": False, "kind": "Namespace",
     "verbs": ["get", "list"], "shortNames": ["ns"]},
]
RAY_RESOURCES = [
    {"name": "rayjobs", "singularName": "rayjob", "namespaced": True, "kind": "RayJob",
     "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
     "categories": ["all"]},
    {"name": "rayjobs/status", "singularName": "", "namespaced": True, "kind": "RayJob",
     "verbs": ["get", "patch", "update"]},
]
PATH = re.compile(r"^/(?:api/v1|apis/ray\.io/v1)(?:/namespaces/([^/]+))?/(rayjobs|pods|events)"
                  r"(?:/([^/]+))?(?:/(log|status))?$")


def public(obj):
    """The object without the double's private bookkeeping (keys starting with '_')."""
    if isinstance(obj, dict):
        return {k: public(v) for k, v in obj.items() if not k.startswith("_")}
    if isinstance(obj, list):
        return [public(v) for v in obj]
    return obj


def match_labels(obj, selector):
    """Equality-based label selectors (a=b, a==b, a!=b, a, !a), comma-separated."""
    labels = obj.get("metadata", {}).get("labels", {}) or {}
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k.strip()) == v.strip():
                return False
        elif "=" in term:
            k, v = re.split(r"==?", term, maxsplit=1)
            if labels.get(k.strip()) != v.strip():
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


def field_value(obj, path):
    for part in path.split("."):
        obj = obj.get(part, {}) if isinstance(obj, dict) else {}
    return obj if isinstance(obj, str) else ""


def match_fields(obj, selector):
    for term in filter(None, (t.strip() for t in selector.split(","))):
        negate = "!=" in term
        k, v = re.split(r"!=|==?", term, maxsplit=1)
        if (field_value(obj, k.strip()) == v.strip()) == negate:
            return False
    return True


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch (what kubectl's client-side apply sends for custom resources)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


class Auth:
    """Tokens scoped to a namespace ('*' = every namespace), optionally limited to a Role."""

    def __init__(self, tokens, role_path):
        self.tokens = {}
        for t in tokens:
            token, _, ns = t.partition("=")
            self.tokens[token] = ns or "*"
        self.rules = None
        if role_path:
            with open(role_path) as f:
                docs = [d for d in yaml.safe_load_all(f) if d]
            roles = [d for d in docs if d.get("kind") == "Role"]
            if not roles:
                raise SystemExit(f"{role_path}: no Role document")
            self.rules = roles[0].get("rules", [])

    def user(self, token):
        ns = self.tokens[token]
        return "system:admin" if ns == "*" else f"system:serviceaccount:{ns}:attune-launcher"

    def check(self, header, namespace, resource, verb, group):
        if not header.startswith("Bearer ") or header[7:] not in self.tokens:
            raise ApiError(401, "Unauthorized", "Unauthorized")
        token = header[7:]
        scope = self.tokens[token]
        if scope == "*":
            return
        where = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
        denied = ApiError(403, "Forbidden",
                          f'{resource.split("/")[0]}{"." + group if group else ""} is forbidden: '
                          f'User "{self.user(token)}" cannot {verb} resource '
                          f'"{resource.split("/")[0]}"'
                          f'{" subresource " + chr(34) + resource.split("/")[1] + chr(34) if "/" in resource else ""}'
                          f' in API group "{group}"{where}',
                          {"group": group, "kind": resource.split("/")[0]})
        if namespace != scope:
            raise denied
        if self.rules is None:
            return
        for rule in self.rules:
            if (group in rule.get("apiGroups", []) or "*" in rule.get("apiGroups", [])) and \
                    (resource in rule.get("resources", []) or "*" in rule.get("resources", [])) and \
                    (verb in rule.get("verbs", []) or "*" in rule.get("verbs", [])):
                return
        raise denied


class Double:
    def __init__(self, args):
        self.args = args
        self.store = Store(args.state_dir)
        _, raw = crd_schema.load_crd(args.crd)
        self.schema = crd_schema.Schema(raw)
        self.auth = Auth(args.token, args.role)
        self.operator = kuberay_operator.Operator(self.store, args.workdir, nodes=args.nodes,
                                                  gpus_per_node=args.gpus_per_node,
                                                  tick_s=args.tick, startup_s=args.startup)
        self.request_faults = []
        self.fault_lock = threading.Lock()
        if args.faults:
            with open(args.faults) as f:
                self.add_faults(json.load(f))

    def add_faults(self, faults):
        with self.fault_lock:
            for f in faults:
                if f.get("kind") in ("api_error", "slow"):
                    f.setdefault("count", 1)
                    self.request_faults.append(f)
        self.operator.add_faults([f for f in faults if f.get("kind") not in ("api_error", "slow")])

    def request_fault(self, method, path):
        """The first request fault matching this request (its count used up by one)."""
        with self.fault_lock:
            for f in self.request_faults:
                if f["count"] == 0:
                    continue
                if f.get("method") and f["method"] != method:
                    continue
                if f.get("path") and f["path"] not in path:
                    continue
                f["count"] -= 1
                return dict(f)
        return None

    # -- resources -------------------------------------------------------------------------------
    def validate_rayjob(self, obj, name, strict):
        causes = [{"reason": "FieldValueInvalid", "message": m, "field": f}
                  for f, m in self.schema.validate(obj)]
        if causes:
            summary = ", ".join(f"{c['field']}: {c['message']}" for c in causes)
            if len(causes) > 1:
                summary = "[" + summary + "]"
            raise ApiError(422, "Invalid", f'RayJob.ray.io "{name}" is invalid: {summary}',
                           {"name": name, "group": "ray.io", "kind": "RayJob", "causes": causes})
        unknown = self.schema.unknown(obj)
        if unknown and strict:
            shown = ", ".join(f'unknown field "{u}"' for u in unknown)
            raise ApiError(400, "BadRequest", f"strict decoding error: {shown}")
        return unknown

    def strict(self, query):
        """Unknown fields are refused under fieldValidation=Strict (what kubectl >= 1.27 sends by
        default) or always with --strict-fields (so that tests catch a misspelt field whatever
        the kubectl version); otherwise pruned, as the API server does."""
        return self.args.strict_fields or query.get("fieldValidation", [""])[0] == "Strict"

    def prune(self, obj, unknown):
        for path in unknown:
            parts = re.findall(r"[^.\[\]]+|\[\d+\]", path)
            node = obj
            for part in parts[:-1]:
                node = node[int(part[1:-1])] if part.startswith("[") else node[part]
            node.pop(parts[-1], None)

    def create_rayjob(self, ns, body, query):
        if not isinstance(body, dict) or body.get("kind") != "RayJob":
            raise ApiError(400, "BadRequest", "the body of the request was not a RayJob")
        name = body.get("metadata", {}).get("name", "")
        strict = self.strict(query)
        unknown = self.validate_rayjob(body, name, strict)
        self.prune(body, unknown)
        body = self.schema.default(body)
        body.pop("status", None)
        if query.get("dryRun"):
            return body
        obj = self.store.create("rayjobs", ns, body)
        self.store.audit(event="rayjob_created", namespace=ns, rayjob=name,
                         uid=obj["metadata"]["uid"],
                         labels=obj["metadata"].get("labels", {}),
                         job=obj["metadata"].get("annotations", {}).get("attune.job", ""))
        return obj

    def patch_rayjob(self, ns, name, patch, content_type, query):
        if "merge-patch" not in content_type:
            raise ApiError(415, "UnsupportedMediaType",
                           f"the double supports application/merge-patch+json, not {content_type}")
        with self.store.lock:
            current = self.store.get("rayjobs", ns, name)
            updated = merge_patch(current, patch)
            updated["metadata"]["name"], updated["metadata"]["namespace"] = name, ns
            updated["status"] = current.get("status", {})
            strict = self.strict(query)
            self.prune(updated, self.validate_rayjob(updated, name, strict))
            changed = updated.get("spec") != current.get("spec")
            return self.store.replace("rayjobs", ns, name, updated, changed)

    def delete_rayjob(self, ns, name):
        with self.store.lock:
            obj = self.store.get("rayjobs", ns, name)
            obj["metadata"].setdefault("deletionTimestamp", now_rfc3339())
            obj["metadata"]["finalizers"] = ["ray.io/rayjob-finalizer"]
            self.store.touch(obj)
            return obj

    def pod_log(self, ns, name, query):
        pod = self.store.get("pods", ns, name)
        container = query.get("container", [""])[0]
        names = [c["name"] for c in pod["spec"].get("containers", [])]
        if container and container not in names:
            raise ApiError(400, "BadRequest",
                           f"container {container} is not valid for pod {name}")
        if not container and len(names) > 1:
            raise ApiError(400, "BadRequest",
                           f"a container name must be specified for pod {name}, choose one of: "
                           f"[{' '.join(names)}]")
        path = self.operator.pod_log_path(ns, name, container)
        if pod["status"]["phase"] == "Pending" or path is None:
            raise ApiError(400, "BadRequest",
                           f'container "{container or names[0]}" in pod "{name}" is waiting to '
                           f'start: ContainerCreating')
        with open(path, "rb") as f:
            data = f.read()
        tail = query.get("tailLines", [None])[0]
        if tail is not None:
            lines = data.splitlines(keepends=True)
            data = b"".join(lines[-int(tail):]) if int(tail) > 0 else b""
        return data

    def listing(self, resource, ns, query):
        items = self.store.list(resource, ns)
        if "labelSelector" in query:
            items = [o for o in items if match_labels(o, query["labelSelector"][0])]
        if "fieldSelector" in query:
            items = [o for o in items if match_fields(o, query["fieldSelector"][0])]
        group = "ray.io/v1" if resource == "rayjobs" else "v1"
        kind = {"rayjobs": "RayJobList", "pods": "PodList", "events": "EventList"}[resource]
        return {"apiVersion": group, "kind": kind,
                "metadata": {"resourceVersion": self.store.version_info()},
                "items": [public(o) for o in items]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    double = None  # set by main

    def log_message(self, fmt, *args):
        if self.double.args.verbose:
            sys.stderr.write("k8s-double: " + fmt % args + "\n")

    def send_json(self, code, obj, content_type="application/json"):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_bytes(self, code, data, content_type):
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            try:
                return yaml.safe_load(raw)
            except yaml.YAMLError as e:
                raise ApiError(400, "BadRequest", f"the request body is neither JSON nor YAML: {e}")

    def handle_any(self, method):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        try:
            if url.path.startswith("/_double/"):
                return self.control(method, url.path)
            fault = self.double.request_fault(method, url.path)
            if fault and fault["kind"] == "slow":
                time.sleep(float(fault.get("seconds", 1)))
            elif fault:
                code = int(fault.get("code", 500))
                raise ApiError(code, {500: "InternalError", 503: "ServiceUnavailable",
                                      429: "TooManyRequests", 504: "Timeout"}.get(code, "Unknown"),
                               fault.get("message", "Internal error occurred: injected by the "
                                                    "test double"))
            if self.discovery(method, url.path):
                return
            self.resource(method, url.path, query)
        except ApiError as e:
            self.send_json(e.code, e.status())
        except (BrokenPipeError, ConnectionResetError):
            pass

    def discovery(self, method, path):
        if method != "GET":
            return False
        docs = {
            "/version": SERVER_VERSION,
            "/api": {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
            "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                {"name": "ray.io", "versions": [
                    {"groupVersion": "ray.io/v1", "version": "v1"},
                    {"groupVersion": "ray.io/v1alpha1", "version": "v1alpha1"}],
                 "preferredVersion": {"groupVersion": "ray.io/v1", "version": "v1"}}]},
            "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1",
                        "resources": CORE_RESOURCES},
            "/apis/ray.io": {"kind": "APIGroup", "apiVersion": "v1", "name": "ray.io",
                             "versions": [{"groupVersion": "ray.io/v1", "version": "v1"}],
                             "preferredVersion": {"groupVersion": "ray.io/v1", "version": "v1"}},
            "/apis/ray.io/v1": {"kind": "APIResourceList", "apiVersion": "v1",
                                "groupVersion": "ray.io/v1", "resources": RAY_RESOURCES},
            "/apis/ray.io/v1alpha1": {"kind": "APIResourceList", "apiVersion": "v1",
                                      "groupVersion": "ray.io/v1alpha1", "resources": []},
        }
        if path in docs:
            self.send_json(200, docs[path])
            return True
        if path in ("/openapi/v2", "/swagger-2.0.0.pb-v1"):
            # An empty OpenAPI v2 document (a valid, empty protobuf message): kubectl then finds no
            # model for RayJob and leaves validation to the server, as it does for many CRDs.
            self.send_bytes(200, b"", "application/octet-stream")
            return True
        if path.startswith("/openapi/v3"):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return False

    def resource(self, method, path, query):
        m = PATH.match(path)
        if not m:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        ns, resource, name, sub = m.groups()
        group = "ray.io" if path.startswith("/apis/ray.io") else ""
        if (group == "ray.io") != (resource == "rayjobs"):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        verb = {"GET": "get" if name else "list", "POST": "create", "PATCH": "patch",
                "PUT": "update", "DELETE": "delete"}[method]
        self.double.auth.check(self.headers.get("Authorization", ""), ns, resource +
                               (f"/{sub}" if sub else ""), verb, group)
        d = self.double
        if method == "GET" and not name:
            with d.store.lock:  # a consistent snapshot: the operator changes objects in place
                listing = d.listing(resource, ns, query)
            return self.send_json(200, listing)
        if ns is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if method == "GET" and sub == "log" and resource == "pods":
            return self.send_bytes(200, d.pod_log(ns, name, query), "text/plain")
        if method == "GET":
            with d.store.lock:
                obj = public(d.store.get(resource, ns, name))
            return self.send_json(200, obj)
        if resource != "rayjobs":
            raise ApiError(405, "MethodNotAllowed", f"the double does not {verb} {resource}")
        if method == "POST" and not name:
            return self.send_json(201, public(d.create_rayjob(ns, self.body(), query)))
        if method == "PATCH" and name:
            return self.send_json(200, public(d.patch_rayjob(
                ns, name, self.body(), self.headers.get("Content-Type", ""), query)))
        if method == "DELETE" and name:
            return self.send_json(200, public(d.delete_rayjob(ns, name)))
        raise ApiError(405, "MethodNotAllowed", f"{method} {path} is not supported")

    def control(self, method, path):
        d = self.double
        if method == "POST" and path == "/_double/faults":
            d.add_faults(self.body() or [])
            return self.send_json(200, {"ok": True})
        if method == "GET" and path == "/_double/state":
            with d.store.lock:
                state = {"rayjobs": [public(o) for o in d.store.list("rayjobs")],
                         "pods": [public(o) for o in d.store.list("pods")],
                         "live_processes": d.operator.live_processes()}
            return self.send_json(200, state)
        raise ApiError(404, "NotFound", f"no control endpoint {method} {path}")

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_DELETE(self):
        self.handle_any("DELETE")


def make_certificate(state_dir):
    """A self-signed serving certificate for 127.0.0.1 (client-go sends bearer tokens only over
    TLS, as a real API server is always reached)."""
    cert, key = os.path.join(state_dir, "server.crt"), os.path.join(state_dir, "server.key")
    if not (os.path.exists(cert) and os.path.exists(key)):
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", cert], check=True, capture_output=True)
    return cert, key


def write_kubeconfig(path, port, token, namespace, cert):
    with open(cert, "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "double",
        "clusters": [{"name": "double", "cluster": {"server": f"https://127.0.0.1:{port}",
                                                    "certificate-authority-data": ca}}],
        "users": [{"name": "attune-launcher", "user": {"token": token}}],
        "contexts": [{"name": "double", "context": {"cluster": "double", "user": "attune-launcher",
                                                    "namespace": namespace}}],
    }
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        yaml.safe_dump(config, f, sort_keys=False)
    os.replace(tmp, path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--crd", required=True)
    p.add_argument("--state-dir", required=True)
    p.add_argument("--workdir", default=os.getcwd())
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file")
    p.add_argument("--token", action="append", default=[], help="TOKEN=NAMESPACE ('*' = all)")
    p.add_argument("--role", help="a YAML file with a Role whose rules bind every scoped token")
    p.add_argument("--kubeconfig-out")
    p.add_argument("--kube-token")
    p.add_argument("--kube-namespace", default="default")
    p.add_argument("--nodes", type=int, default=4)
    p.add_argument("--gpus-per-node", type=int, default=8)
    p.add_argument("--tick", type=float, default=0.1)
    p.add_argument("--startup", type=float, default=0.3)
    p.add_argument("--faults")
    p.add_argument("--strict-fields", action="store_true",
                   help="refuse unknown fields even without fieldValidation=Strict")
    p.add_argument("--verbose", action="store_true")
    args = p.parse_args()
    os.makedirs(args.state_dir, exist_ok=True)
    double = Double(args)
    Handler.double = double
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    cert, key = make_certificate(args.state_dir)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    port = server.server_address[1]

    def stop(signum, frame):
        double.operator.shutdown()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    double.operator.start()
    if args.kubeconfig_out:
        write_kubeconfig(args.kubeconfig_out, port, args.kube_token or args.token[0].split("=")[0],
                         args.kube_namespace, cert)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    with open(os.path.join(args.state_dir, "double.pid"), "w") as f:
        f.write(f"{os.getpid()}\n")
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        double.operator.shutdown()


if __name__ == "__main__":
    main()
