"""The double's object store: namespaced objects by (resource, namespace, name), with the API
server's bookkeeping (uid, resourceVersion, generation, creationTimestamp) and its Status error
shapes. Thread-safe: one lock around everything (the HTTP threads and the operator share it)."""
import datetime
import json
import os
import random
import string
import threading
import time
import uuid


def now_rfc3339(t=None):
    """metav1.Time: whole seconds, UTC, 'Z'."""
    t = time.time() if t is None else t
    return datetime.datetime.fromtimestamp(int(t), datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def rand5():
    """The 5-character suffix Kubernetes' generateName and KubeRay's names use."""
    return "".join(random.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))


class ApiError(Exception):
    """An API server error answered as a metav1.Status."""

    def __init__(self, code, reason, message, details=None):
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def status(self):
        s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
             "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            s["details"] = self.details
        return s


GROUP_OF = {"rayjobs": "ray.io", "pods": "", "events": ""}
KIND_OF = {"rayjobs": "RayJob", "pods": "Pod", "events": "Event"}


def qualified(resource):
    group = GROUP_OF[resource]
    return f"{resource}.{group}" if group else resource


def not_found(resource, name):
    return ApiError(404, "NotFound", f'{qualified(resource)} "{name}" not found',
                    {"name": name, "group": GROUP_OF[resource], "kind": resource})


def already_exists(resource, name):
    return ApiError(409, "AlreadyExists", f'{qualified(resource)} "{name}" already exists',
                    {"name": name, "group": GROUP_OF[resource], "kind": resource})


class Store:
    def __init__(self, state_dir):
        self.lock = threading.RLock()
        self.objects = {}  # (resource, namespace, name) -> dict
        self.version = 1000
        self.state_dir = state_dir
        os.makedirs(state_dir, exist_ok=True)
        self.audit_path = os.path.join(state_dir, "audit.jsonl")

    def audit(self, **record):
        """Appends one line to <state_dir>/audit.jsonl (creations, deletions, process starts)."""
        record["t"] = round(time.time(), 3)
        with open(self.audit_path, "a") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def _bump(self, obj):
        self.version += 1
        obj["metadata"]["resourceVersion"] = str(self.version)

    def create(self, resource, namespace, obj):
        with self.lock:
            meta = obj.setdefault("metadata", {})
            name = meta.get("name")
            if not name and meta.get("generateName"):
                name = meta["generateName"] + rand5()
                meta["name"] = name
            key = (resource, namespace, name)
            if key in self.objects:
                raise already_exists(resource, name)
            meta["namespace"] = namespace
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = now_rfc3339()
            meta["generation"] = 1
            self._bump(obj)
            self.objects[key] = obj
            return obj

    def get(self, resource, namespace, name):
        with self.lock:
            obj = self.objects.get((resource, namespace, name))
            if obj is None:
                raise not_found(resource, name)
            return obj

    def find(self, resource, namespace, name):
        with self.lock:
            return self.objects.get((resource, namespace, name))

    def list(self, resource, namespace=None):
        with self.lock:
            return [o for (r, ns, _), o in sorted(self.objects.items())
                    if r == resource and (namespace is None or ns == namespace)]

    def replace(self, resource, namespace, name, obj, spec_changed):
        with self.lock:
            if (resource, namespace, name) not in self.objects:
                raise not_found(resource, name)
            if spec_changed:
                obj["metadata"]["generation"] = obj["metadata"].get("generation", 1) + 1
            self._bump(obj)
            self.objects[(resource, namespace, name)] = obj
            return obj

    def touch(self, obj):
        """Records a change the operator made in place (new resourceVersion)."""
        with self.lock:
            self._bump(obj)

    def delete(self, resource, namespace, name):
        with self.lock:
            obj = self.objects.pop((resource, namespace, name), None)
            if obj is None:
                raise not_found(resource, name)
            return obj

    def version_info(self):
        return str(self.version)


def safe_name(text):
    return "".join(c if c in string.ascii_lowercase + string.digits + "-." else "-" for c in text)
