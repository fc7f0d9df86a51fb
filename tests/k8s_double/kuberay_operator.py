"""The double's stand-in for the KubeRay operator (v1.7.0 RayJob controller), the scheduler and the
kubelet, reduced to what a launcher can observe through the API:

  RayJob .status.jobDeploymentStatus: "" -> Initializing -> Running -> Complete | Failed
         (ValidationFailed for a name KubeRay refuses), .status.jobStatus: "" -> PENDING -> RUNNING
         -> SUCCEEDED | FAILED | STOPPED, .status.startTime at Initializing, .status.endTime at the
         end, .status.rayJobInfo.{startTime,endTime} of the Ray job, reason/message as KubeRay sets
         them (AppFailed, DeadlineExceeded, PreRunningDeadlineExceeded, ValidationFailed).
  Pods   named as the operator and the Job controller name them: <cluster>-head-xxxxx,
         <cluster>-<group>-worker-xxxxx, and the K8sJobMode submitter <rayjob>-xxxxx, with
         KubeRay's labels; scheduled first-fit on the double's GPU nodes (Unschedulable with the
         scheduler's message when nothing fits); their logs are files the API serves.
  The entrypoint runs as a real local process (/bin/sh -c, own process group) in the double's
         work directory with runtimeEnvYAML's env_vars; its output is the submitter's log, as
         `ray job logs --follow` would print it.

Faults, injected per RayJob name (fnmatch): unschedulable, image_pull, oom, node_lost.
"""
import fnmatch
import os
import re
import signal
import subprocess
import threading
import time

import yaml

from store import now_rfc3339, rand5

DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
MAX_RAYJOB_NAME = 47  # KubeRay v1.7.0: MaxRayClusterNameLength (53) - 6
GPU = "nvidia.com/gpu"


def _gpus(container):
    res = container.get("resources", {})
    for section in ("limits", "requests"):
        value = res.get(section, {}).get(GPU)
        if value is not None:
            return int(value)
    return 0


class Node:
    def __init__(self, name, gpus):
        self.name, self.gpus, self.used = name, gpus, 0


class Run:
    """What the operator tracks for one RayJob (the RayCluster, the pods, the driver process)."""

    def __init__(self, ns, name):
        self.ns, self.name = ns, name
        self.cluster = ""
        self.pods = []          # names of head and worker pods
        self.submitter = None   # submitter pod name (K8sJobMode)
        self.sidecar = False    # SidecarMode: the submitter is a container of the head pod
        self.proc = None
        self.proc_started = None
        self.log_path = None    # the driver's output (the submitter's log)
        self.faults = []
        self.done = False
        self.finished_at = None
        self.stopped = False    # the driver was stopped by the operator (deadline, deletion)


class Operator:
    def __init__(self, store, workdir, nodes=4, gpus_per_node=8, tick_s=0.1, startup_s=0.3,
                 python=None):
        self.store = store
        self.workdir = workdir
        self.nodes = [Node(f"gpu-node-{i}", gpus_per_node) for i in range(nodes)]
        self.tick_s = tick_s
        self.startup_s = startup_s
        self.runs = {}
        self.faults = []  # [{"match", "kind", "after_s", "times"}]
        self.stop_event = threading.Event()
        self.log_dir = os.path.join(store.state_dir, "pod-logs")
        os.makedirs(self.log_dir, exist_ok=True)
        self.thread = threading.Thread(target=self._loop, daemon=True)

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self):
        self.thread.start()

    def shutdown(self):
        self.stop_event.set()
        with self.store.lock:
            for run in self.runs.values():
                self._kill(run, signal.SIGKILL)

    def add_faults(self, faults):
        with self.store.lock:
            for f in faults:
                f.setdefault("times", -1)
                f.setdefault("after_s", 0.5)
                self.faults.append(f)

    def live_processes(self):
        with self.store.lock:
            return sorted(f"{r.ns}/{r.name}" for r in self.runs.values()
                          if r.proc is not None and r.proc.poll() is None)

    def _loop(self):
        while not self.stop_event.wait(self.tick_s):
            try:
                with self.store.lock:
                    self._tick()
            except Exception as e:  # the double must keep serving; the failure is logged
                self.store.audit(event="operator_error", error=repr(e))

    def _tick(self):
        for job in self.store.list("rayjobs"):
            ns, name = job["metadata"]["namespace"], job["metadata"]["name"]
            run = self.runs.get((ns, name))
            if job["metadata"].get("deletionTimestamp"):
                self._finalize_deletion(job, run)
                continue
            if run is None:
                run = self.runs[(ns, name)] = Run(ns, name)
                run.faults = self._claim_faults(name)
            self._reconcile(job, run)

    def _claim_faults(self, name):
        claimed = []
        for f in self.faults:
            if f["kind"] in ("api_error", "slow") or f["times"] == 0:
                continue
            if fnmatch.fnmatch(name, f.get("match", "*")):
                claimed.append(dict(f))
                if f["times"] > 0:
                    f["times"] -= 1
        return claimed

    def _fault(self, run, kind):
        return next((f for f in run.faults if f["kind"] == kind), None)

    # -- the RayJob state machine ----------------------------------------------------------------
    def _reconcile(self, job, run):
        status = job.setdefault("status", {})
        phase = status.get("jobDeploymentStatus", "")
        if phase in ("", "Suspended") and job["spec"].get("suspend"):
            # KubeRay creates nothing for a suspended RayJob until suspend turns false.
            if phase == "":
                status["jobDeploymentStatus"] = "Suspended"
                self.store.touch(job)
        elif phase in ("", "Suspended"):
            self._initialize(job, run)
        elif phase == "Initializing":
            self._advance_pods(job, run)
            if self._pre_running_deadline(job, run):
                return
            if self._all_running(run):
                self._start_driver(job, run)
        elif phase == "Running":
            self._advance_pods(job, run)
            if status.get("jobStatus") == "PENDING":
                status["jobStatus"] = "RUNNING"
                self.store.touch(job)
            if self._deadline(job, run):
                return
            self._inject_running_faults(job, run)
            self._check_driver(job, run)
        elif phase in ("Complete", "Failed"):
            self._after_end(job, run)

    def _initialize(self, job, run):
        status = job["status"]
        name = job["metadata"]["name"]
        problem = self._validate(job)
        if problem:
            status.update({"jobDeploymentStatus": "ValidationFailed", "reason": "ValidationFailed",
                           "message": problem})
            self.store.touch(job)
            return
        spec = job["spec"]
        run.cluster = f"{name}-{rand5()}"
        run.sidecar = spec.get("submissionMode") == "SidecarMode"
        status.update({"jobDeploymentStatus": "Initializing", "startTime": now_rfc3339(),
                       "rayClusterName": run.cluster, "jobId": spec.get("jobId") or
                       f"{name}-{rand5()}", "jobStatus": "", "failed": 0, "succeeded": 0,
                       "observedGeneration": job["metadata"].get("generation", 1)})
        self._create_cluster_pods(job, run)
        self.store.touch(job)

    def _validate(self, job):
        """KubeRay's own checks (utils/validation.go), made before it creates anything."""
        name = job["metadata"]["name"]
        if len(name) > MAX_RAYJOB_NAME:
            return ("The RayJob metadata is invalid: RayJob name should be no more than "
                    f"{MAX_RAYJOB_NAME} characters")
        if not DNS1035.match(name):
            return "The RayJob metadata is invalid: RayJob name should be a valid DNS1035 label"
        spec = job.get("spec", {})
        if not spec.get("rayClusterSpec"):
            return "The RayJob spec is invalid: one of RayClusterSpec or ClusterSelector must be set"
        if spec.get("submissionMode") in ("HTTPMode", "InteractiveMode"):
            return None
        return None

    # -- pods ------------------------------------------------------------------------------------
    def _labels(self, run, node_type, group):
        return {"ray.io/cluster": run.cluster, "ray.io/node-type": node_type,
                "ray.io/group": group, "ray.io/is-ray-node": "yes",
                "ray.io/identifier": f"{run.cluster}-{node_type}",
                "app.kubernetes.io/name": "kuberay", "app.kubernetes.io/created-by":
                "kuberay-operator"}

    def _new_pod(self, run, name, template, labels, owner):
        spec = dict(template.get("spec", {}))
        meta = template.get("metadata", {})
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "labels": {**meta.get("labels", {}), **labels},
                            "annotations": dict(meta.get("annotations", {})),
                            "ownerReferences": [owner]},
               "spec": spec,
               "status": {"phase": "Pending", "conditions": [], "_created": time.time()}}
        self.store.create("pods", run.ns, pod)
        self.store.audit(event="pod_created", namespace=run.ns, pod=name, rayjob=run.name)
        return pod

    def _create_cluster_pods(self, job, run):
        spec = job["spec"]["rayClusterSpec"]
        owner = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": run.cluster,
                 "controller": True}
        head_tpl = spec.get("headGroupSpec", {}).get("template", {})
        head = self._new_pod(run, f"{run.cluster}-head-{rand5()}", head_tpl,
                             self._labels(run, "head", "headgroup"), owner)
        if run.sidecar:
            head["spec"]["containers"] = list(head["spec"].get("containers", [])) + [
                {"name": "ray-job-submitter", "image": head["spec"]["containers"][0]["image"]}]
        run.pods.append(head["metadata"]["name"])
        for group in spec.get("workerGroupSpecs", []) or []:
            replicas = group.get("replicas", group.get("minReplicas", 0)) or 0
            for _ in range(replicas * max(1, group.get("numOfHosts", 1))):
                pod = self._new_pod(run, f"{run.cluster}-{group['groupName']}-worker-{rand5()}",
                                    group.get("template", {}),
                                    self._labels(run, "worker", group["groupName"]), owner)
                run.pods.append(pod["metadata"]["name"])

    def _pod(self, run, name):
        return self.store.find("pods", run.ns, name)

    def _event(self, run, pod_name, reason, message, kind="Warning", component="kubelet"):
        t = now_rfc3339()
        pod = self._pod(run, pod_name)
        self.store.create("events", run.ns, {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{pod_name}.{rand5()}{rand5()}"},
            "involvedObject": {"kind": "Pod", "namespace": run.ns, "name": pod_name,
                               "uid": pod["metadata"]["uid"] if pod else ""},
            "reason": reason, "message": message, "type": kind,
            "source": {"component": component}, "firstTimestamp": t, "lastTimestamp": t,
            "count": 1})

    def _schedule(self, run, pod):
        """First fit on GPUs; Unschedulable (with the scheduler's message) when nothing fits."""
        want = sum(_gpus(c) for c in pod["spec"].get("containers", []))
        fits = [n for n in self.nodes if n.gpus - n.used >= want]
        if self._fault(run, "unschedulable") or not fits:
            if not any(c.get("reason") == "Unschedulable" for c in pod["status"]["conditions"]):
                n = len(self.nodes)
                message = (f"0/{n} nodes are available: {n} Insufficient {GPU}. preemption: "
                           f"0/{n} nodes are available: {n} No preemption victims found for "
                           f"incoming pod.")
                pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "False",
                                                "reason": "Unschedulable", "message": message,
                                                "lastTransitionTime": now_rfc3339()}]
                self._event(run, pod["metadata"]["name"], "FailedScheduling", message,
                            component="default-scheduler")
                self.store.touch(pod)
            return False
        node = fits[0]
        node.used += want
        pod["spec"]["nodeName"] = node.name
        pod["status"]["_gpus"] = want
        pod["status"]["conditions"] = [{"type": "PodScheduled", "status": "True",
                                        "lastTransitionTime": now_rfc3339()}]
        self._event(run, pod["metadata"]["name"], "Scheduled",
                    f"Successfully assigned {run.ns}/{pod['metadata']['name']} to {node.name}",
                    kind="Normal", component="default-scheduler")
        return True

    def _release(self, pod):
        node = next((n for n in self.nodes if n.name == pod["spec"].get("nodeName")), None)
        if node is not None and pod["status"].get("_gpus"):
            node.used -= pod["status"].pop("_gpus")

    def _advance_pods(self, job, run):
        for name in list(run.pods):
            pod = self._pod(run, name)
            if pod is None or pod["status"]["phase"] != "Pending":
                continue
            if not pod["spec"].get("nodeName") and not self._schedule(run, pod):
                continue
            self._start_containers(run, pod)

    def _start_containers(self, run, pod):
        containers = pod["spec"].get("containers", [])
        if self._fault(run, "image_pull"):
            image = containers[0].get("image", "") if containers else ""
            waiting = pod["status"].get("containerStatuses")
            reason = "ErrImagePull" if not waiting else "ImagePullBackOff"
            message = (f'failed to pull and unpack image "{image}": not found' if
                       reason == "ErrImagePull" else f'Back-off pulling image "{image}"')
            if waiting and waiting[0]["state"]["waiting"]["reason"] == reason:
                return
            pod["status"]["containerStatuses"] = [
                {"name": c["name"], "image": c.get("image", ""), "ready": False, "restartCount": 0,
                 "state": {"waiting": {"reason": reason, "message": message}}}
                for c in containers]
            self._event(run, pod["metadata"]["name"], "Failed" if reason == "ErrImagePull" else
                        "BackOff", message if reason == "ErrImagePull" else
                        f'Back-off pulling image "{image}"')
            self.store.touch(pod)
            return
        if time.time() - pod["status"]["_created"] < self.startup_s:
            return
        started = now_rfc3339()
        pod["status"].update({
            "phase": "Running", "startTime": started, "hostIP": "10.0.0.1", "podIP": "10.1.0.1",
            "containerStatuses": [{"name": c["name"], "image": c.get("image", ""), "ready": True,
                                   "restartCount": 0, "started": True,
                                   "state": {"running": {"startedAt": started}}}
                                  for c in containers]})
        pod["status"]["conditions"].append({"type": "Ready", "status": "True"})
        with open(self._log_file(run, pod["metadata"]["name"]), "a") as f:
            node_type = pod["metadata"]["labels"].get("ray.io/node-type")
            f.write(f"[double] ray start --{node_type} on {pod['spec'].get('nodeName')}\n"
                    "Ray runtime started.\n")
        self.store.touch(pod)

    def _all_running(self, run):
        pods = [self._pod(run, n) for n in run.pods]
        return all(p is not None and p["status"]["phase"] == "Running" for p in pods)

    def _log_file(self, run, pod_name, container=None):
        d = os.path.join(self.log_dir, run.ns)
        os.makedirs(d, exist_ok=True)
        return os.path.join(d, pod_name + (f".{container}" if container else "") + ".log")

    def pod_log_path(self, namespace, pod, container):
        """The file holding a pod container's output, or None when it has none yet."""
        for suffix in ([f".{container}"] if container else []) + [""]:
            path = os.path.join(self.log_dir, namespace, pod + suffix + ".log")
            if os.path.exists(path):
                return path
        return None

    # -- the driver ------------------------------------------------------------------------------
    def _start_driver(self, job, run):
        status = job["status"]
        spec = job["spec"]
        status.update({"jobDeploymentStatus": "Running", "jobStatus": "PENDING",
                       "dashboardURL": f"{run.cluster}-head-svc.{run.ns}.svc.cluster.local:8265"})
        head = run.pods[0]
        if run.sidecar:
            run.log_path = self._log_file(run, head, "ray-job-submitter")
        else:
            owner = {"apiVersion": "batch/v1", "kind": "Job", "name": run.name, "controller": True}
            tpl = {"metadata": {"labels": {}}, "spec": {"restartPolicy": "Never", "containers": [
                {"name": "ray-job-submitter",
                 "image": spec["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]
                 ["containers"][0].get("image", "")}]}}
            labels = {"job-name": run.name, "batch.kubernetes.io/job-name": run.name,
                      "ray.io/originated-from-cr-name": run.name,
                      "ray.io/originated-from-crd": "RayJob",
                      "app.kubernetes.io/created-by": "kuberay-operator"}
            pod = self._new_pod(run, f"{run.name}-{rand5()}", tpl, labels, owner)
            pod["spec"]["nodeName"] = self.nodes[0].name
            started = now_rfc3339()
            pod["status"].update({"phase": "Running", "startTime": started, "containerStatuses": [
                {"name": "ray-job-submitter", "ready": True, "restartCount": 0,
                 "state": {"running": {"startedAt": started}}}]})
            run.submitter = pod["metadata"]["name"]
            run.log_path = self._log_file(run, run.submitter)
        job_id = status["jobId"]
        with open(run.log_path, "a") as f:
            f.write(f"Job submission server address: http://{status['dashboardURL']}\n"
                    f"Job '{job_id}' submitted successfully\n"
                    f"Tailing logs until the job exits (disable with --no-wait):\n")
        env = dict(os.environ)
        env.update(self._runtime_env_vars(spec))
        cwd = self._working_dir(spec)
        if not os.path.isdir(cwd):
            # Ray refuses a runtime env whose working_dir it cannot use: the job fails at once.
            cwd_missing = f"working_dir {cwd} does not exist"
            with open(run.log_path, "a") as f:
                f.write(f"RuntimeEnvSetupError: {cwd_missing}\n")
            cwd, spec = self.workdir, dict(spec, entrypoint="exit 1")
        with open(run.log_path, "ab") as out:
            run.proc = subprocess.Popen(["/bin/sh", "-c", spec.get("entrypoint", "")], cwd=cwd,
                                        env=env, stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        run.proc_started = time.time()
        status["rayJobInfo"] = {"startTime": now_rfc3339()}
        self.store.audit(event="driver_started", namespace=run.ns, rayjob=run.name,
                         uid=job["metadata"]["uid"], pid=run.proc.pid)
        self.store.touch(job)

    def _runtime_env(self, spec):
        text = spec.get("runtimeEnvYAML") or ""
        try:
            env = yaml.safe_load(text) if text else {}
        except yaml.YAMLError:
            return {}
        return env if isinstance(env, dict) else {}

    def _runtime_env_vars(self, spec):
        return {str(k): str(v) for k, v in (self._runtime_env(spec).get("env_vars") or {}).items()}

    def _working_dir(self, spec):
        wd = self._runtime_env(spec).get("working_dir")
        if isinstance(wd, str) and wd and "://" not in wd:
            return os.path.join(self.workdir, wd)
        return self.workdir

    def _kill(self, run, sig):
        if run.proc is not None and run.proc.poll() is None:
            try:
                os.killpg(run.proc.pid, sig)
            except ProcessLookupError:
                pass
            if sig == signal.SIGKILL:
                run.proc.wait()

    def _inject_running_faults(self, job, run):
        if run.proc is None or run.proc.poll() is not None:
            return
        ran = time.time() - run.proc_started
        oom = self._fault(run, "oom")
        if oom and ran >= oom["after_s"]:
            self._kill(run, signal.SIGKILL)
            head = self._pod(run, run.pods[0])
            t = now_rfc3339()
            cs = head["status"]["containerStatuses"][0]
            cs["lastState"] = {"terminated": {"exitCode": 137, "reason": "OOMKilled",
                                              "startedAt": cs["state"].get("running", {})
                                              .get("startedAt", t), "finishedAt": t}}
            cs["restartCount"] = 1
            cs["state"] = {"running": {"startedAt": t}}
            self.store.touch(head)
            run.faults.remove(oom)
        lost = self._fault(run, "node_lost")
        if lost and ran >= lost["after_s"]:
            self._kill(run, signal.SIGKILL)
            head = run.pods[0]
            node = self._pod(run, head)["spec"].get("nodeName")
            self._event(run, head, "NodeNotReady", "Node is not ready", component="node-controller")
            self._event(run, head, "TaintManagerEviction",
                        f"Marking for deletion Pod {run.ns}/{head}", kind="Normal",
                        component="taint-eviction-controller")
            self._release(self._pod(run, head))
            self.store.delete("pods", run.ns, head)
            self.store.audit(event="node_lost", namespace=run.ns, rayjob=run.name, node=node)
            status = job["status"]
            status.update({"jobDeploymentStatus": "Failed", "reason": "AppFailed",
                           "message": "Ray head pod not found.", "endTime": now_rfc3339(),
                           "failed": 1})
            self._end(job, run, finished_submitter=False)

    def _check_driver(self, job, run):
        if run.proc is None or run.proc.poll() is None:
            return
        rc = run.proc.returncode
        status = job["status"]
        with open(run.log_path, "rb") as f:
            tail = f.read()[-20000:].decode(errors="replace")
        end = now_rfc3339()
        status.setdefault("rayJobInfo", {})["endTime"] = end
        with open(run.log_path, "a") as f:
            word = "succeeded" if rc == 0 else "failed"
            f.write(f"-------------------------------------------\n"
                    f"Job '{status['jobId']}' {word}\n"
                    f"-------------------------------------------\n")
        if rc == 0:
            status.update({"jobStatus": "SUCCEEDED", "jobDeploymentStatus": "Complete",
                           "message": "Job finished successfully.", "endTime": end,
                           "succeeded": 1})
        else:
            status.update({"jobStatus": "FAILED", "jobDeploymentStatus": "Failed",
                           "reason": "AppFailed", "endTime": end, "failed": 1,
                           "message": f"Job entrypoint command failed with exit code {rc}, last "
                                      f"available logs (truncated to 20,000 chars):\n{tail}"})
        self._end(job, run, finished_submitter=True, exit_code=0 if rc == 0 else 1)

    def _end(self, job, run, finished_submitter, exit_code=1):
        run.done = True
        run.finished_at = time.time()
        if run.submitter:
            pod = self._pod(run, run.submitter)
            if pod:
                t = now_rfc3339()
                pod["status"]["phase"] = "Succeeded" if exit_code == 0 else "Failed"
                pod["status"]["containerStatuses"][0]["state"] = {
                    "terminated": {"exitCode": exit_code, "reason": "Completed" if exit_code == 0
                                   else "Error", "finishedAt": t}}
                self.store.touch(pod)
        self.store.audit(event="rayjob_ended", namespace=run.ns, rayjob=run.name,
                         uid=job["metadata"]["uid"], status=job["status"].get("jobStatus"),
                         deployment=job["status"].get("jobDeploymentStatus"))
        self.store.touch(job)

    def _seconds_since_start(self, job):
        start = job["status"].get("startTime")
        if not start:
            return 0
        t = time.strptime(start, "%Y-%m-%dT%H:%M:%SZ")
        import calendar
        return time.time() - calendar.timegm(t)

    def _deadline(self, job, run):
        limit = job["spec"].get("activeDeadlineSeconds")
        if not limit or self._seconds_since_start(job) < limit:
            return False
        self._kill(run, signal.SIGKILL)
        status = job["status"]
        status.update({"jobDeploymentStatus": "Failed", "reason": "DeadlineExceeded",
                       "message": f"The RayJob has passed the activeDeadlineSeconds. StartTime: "
                                  f"{status.get('startTime')}. ActiveDeadlineSeconds: {limit}",
                       "endTime": now_rfc3339(), "failed": 1})
        self._end(job, run, finished_submitter=False)
        return True

    def _pre_running_deadline(self, job, run):
        limit = job["spec"].get("preRunningDeadlineSeconds")
        active = job["spec"].get("activeDeadlineSeconds")
        reason = None
        if limit and self._seconds_since_start(job) >= limit:
            reason, word, value = "PreRunningDeadlineExceeded", "preRunningDeadlineSeconds", limit
        elif active and self._seconds_since_start(job) >= active:
            reason, word, value = "DeadlineExceeded", "activeDeadlineSeconds", active
        if reason is None:
            return False
        status = job["status"]
        status.update({"jobDeploymentStatus": "Failed", "reason": reason,
                       "message": f"The RayJob has passed the {word}. StartTime: "
                                  f"{status.get('startTime')}. {word}: {value}",
                       "endTime": now_rfc3339(), "failed": 1})
        self._end(job, run, finished_submitter=False)
        return True

    def _after_end(self, job, run):
        """shutdownAfterJobFinishes: the RayCluster (head and worker pods) goes after the TTL."""
        spec = job["spec"]
        if not run.done or not spec.get("shutdownAfterJobFinishes") or not run.pods:
            return
        if time.time() - run.finished_at < spec.get("ttlSecondsAfterFinished", 0):
            return
        self._delete_cluster_pods(run)

    def _delete_cluster_pods(self, run):
        for name in run.pods:
            pod = self._pod(run, name)
            if pod is not None:
                self._release(pod)
                self.store.delete("pods", run.ns, name)
        run.pods = []

    def _finalize_deletion(self, job, run):
        """Deletion: the driver is stopped (the ray.io/rayjob-finalizer's work), the RayCluster and
        the submitter go with their owner, and the object disappears."""
        if run is not None:
            stopping = run.proc is not None and run.proc.poll() is None
            self._kill(run, signal.SIGTERM)
            if stopping:
                deadline = time.time() + 5
                while run.proc.poll() is None and time.time() < deadline:
                    time.sleep(0.05)
                self._kill(run, signal.SIGKILL)
            self._delete_cluster_pods(run)
            if run.submitter and self._pod(run, run.submitter):
                self.store.delete("pods", run.ns, run.submitter)
            del self.runs[(run.ns, run.name)]
        meta = job["metadata"]
        self.store.delete("rayjobs", meta["namespace"], meta["name"])
        self.store.audit(event="rayjob_deleted", namespace=meta["namespace"], rayjob=meta["name"],
                         uid=meta["uid"])
