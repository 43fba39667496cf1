#!/usr/bin/env python3
"""What happens to the corpus's GPU workloads on a small GPU cluster, with and
without aiadmit: run by bench/e2e-scheduling.sh, which starts the control plane
and its Nodes and sets KUBECONFIG.

Every manifest of ../shared/corpus marked uses_gpu in SOURCES.tsv is applied
twice, as its documentation says (kubectl apply, or create for a generateName),
into a namespace aiadmit does not see and into an opted-in one. Once the
controllers have made their Pods and the scheduler has placed what it can, it
prints, per workload and in total: Pods bound to GPU nodes, Pods bound to CPU
nodes, Pods Pending with the scheduler's reason, and workloads refused at apply
time with the rules that refused them.
"""

import collections
import csv
import json
import os
import re
import subprocess
import sys
import time

KUBECTL = os.environ["KUBECTL"]
CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "corpus")


def kubectl(*args, stdin=None):
    return subprocess.run([KUBECTL, *args], input=stdin, capture_output=True, text=True)


def kubectl_json(*args):
    done = kubectl(*args, "-o", "json")
    if done.returncode != 0:
        sys.exit(f"kubectl {' '.join(args)}: {done.stderr}")
    return json.loads(done.stdout)


def gpu_manifests():
    with open(os.path.join(CORPUS, "SOURCES.tsv"), newline="") as sources:
        rows = csv.DictReader(sources, delimiter="\t")
        return sorted(row["file"] for row in rows
                      if row["file"].startswith("manifests/") and row["uses_gpu"] == "yes")


def objects_of(path):
    """The file's objects as kubectl reads them, without their own namespace."""
    done = kubectl("create", "--dry-run=client", "-o", "json", "-f", path)
    if done.returncode != 0:
        return None, done.stderr.strip()
    decoder, text, objects = json.JSONDecoder(), done.stdout, []
    position = 0
    while position < len(text):
        while position < len(text) and text[position].isspace():
            position += 1
        if position == len(text):
            break
        value, position = decoder.raw_decode(text, position)
        objects.extend(value["items"] if value.get("kind") == "List" else [value])
    for item in objects:
        item["metadata"].pop("namespace", None)
    return objects, ""


def api_error(stderr):
    """The API server's (or kubectl's) reason, without kubectl's preamble."""
    for marker in ("strict decoding error: ", "no matches for kind "):
        if marker in stderr:
            return marker.rstrip(": ") + ": " + stderr.split(marker, 1)[1].splitlines()[0]
    lines = stderr.strip().splitlines() or ["?"]
    return lines[-1].split('": ', 1)[-1]


def display_name(item):
    group = item["apiVersion"].split("/")[0] if "/" in item["apiVersion"] else ""
    kind = item["kind"].lower() + ("." + group if group else "")
    return f"{kind}/{item['metadata'].get('name') or item['metadata'].get('generateName', '') + '*'}"


RUNS_PODS = {"Pod", "Deployment", "StatefulSet", "ReplicaSet", "Job", "CronJob"}
# The kinds whose operator runs beside the control plane (e2e-cluster up
# --operators), by the names AIADMIT_E2E_OPERATORS gives them.
OPERATOR_KINDS = {"jobset": {"JobSet"}, "lws": {"LeaderWorkerSet"},
                  "kuberay": {"RayCluster", "RayJob", "RayService"}, "kueue": set()}
RUNNING_OPERATORS = [name for name in os.environ.get("AIADMIT_E2E_OPERATORS", "").split(",") if name]
for _operator in RUNNING_OPERATORS:
    RUNS_PODS |= OPERATOR_KINDS.get(_operator, set())
# The children through which an operator's Pods reach the applied workload.
OWNER_KINDS = ("replicasets", "jobs", "statefulsets", "jobsets.jobset.x-k8s.io", "rayclusters.ray.io")


def service_accounts(value):
    """The ServiceAccounts an object's pod templates name."""
    if isinstance(value, dict):
        found = {value["serviceAccountName"]} if isinstance(value.get("serviceAccountName"), str) else set()
        return found.union(*(service_accounts(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(service_accounts(v) for v in value))
    return set()


def apply_all(namespace):
    """Applies every GPU manifest into `namespace`; returns the workloads.
    The ServiceAccounts they name are made first, as their guides say to."""
    workloads = []
    accounts = set()
    for manifest in gpu_manifests():
        objects, _ = objects_of(os.path.join(CORPUS, manifest))
        accounts |= service_accounts(objects or [])
    for account in sorted(accounts - {"default"}):
        kubectl("create", "serviceaccount", account, "-n", namespace)
    for manifest in gpu_manifests():
        objects, error = objects_of(os.path.join(CORPUS, manifest))
        source = os.path.basename(manifest)
        if objects is None:
            workloads.append({"file": source, "name": source, "refused": api_error(error), "by": "kubectl"})
            continue
        for item in objects:
            if item["kind"] in ("Service", "ConfigMap", "Secret", "PersistentVolumeClaim"):
                continue
            verb = "apply" if item["metadata"].get("name") else "create"
            done = kubectl(verb, "-n", namespace, "-o", "json", "-f", "-", stdin=json.dumps(item))
            entry = {"file": source, "name": display_name(item), "kind": item["kind"]}
            if done.returncode == 0:
                stored = json.loads(done.stdout)
                entry["uid"] = stored["metadata"]["uid"]
                entry["name"] = display_name(stored)
            else:
                rules = sorted(set(re.findall(r"\[(AIA\d{3})\]", done.stderr)))
                entry["refused"] = ", ".join(rules) if rules else api_error(done.stderr)
                entry["by"] = "aiadmit" if rules else "the API server"
            workloads.append(entry)
    return workloads


def settle(namespaces, timeout=120):
    """Waits until the controllers stop making Pods and the scheduler stops
    moving them: the same Pods, nodes and scheduling conditions three polls
    in a row (a Pod whose claim never comes is never tried at all)."""
    deadline, last, steady = time.time() + timeout, None, 0
    while time.time() < deadline:
        state = sorted(
            (pod["metadata"]["name"], pod["spec"].get("nodeName", ""),
             json.dumps([c for c in pod.get("status", {}).get("conditions", [])
                         if c["type"] == "PodScheduled"]))
            for ns in namespaces for pod in kubectl_json("get", "pods", "-n", ns)["items"])
        steady = steady + 1 if state == last else 0
        last = state
        if steady >= 3:
            return
        time.sleep(2)
    print(f"note: the Pods did not settle within {timeout} s; the table shows where they were", file=sys.stderr)


def owner_uid(item):
    for ref in item["metadata"].get("ownerReferences", []):
        if ref.get("controller"):
            return ref["uid"]
    return None


def pod_outcomes(namespace):
    """uid of the applied workload -> Counter of outcomes of its Pods."""
    owners = {}
    for kind in OWNER_KINDS:
        for item in kubectl_json("get", kind, "-n", namespace)["items"]:
            owners[item["metadata"]["uid"]] = owner_uid(item)
    # A LeaderWorkerSet group's workers are owned by its leader Pod.
    for pod in kubectl_json("get", "pods", "-n", namespace)["items"]:
        owners[pod["metadata"]["uid"]] = owner_uid(pod)
    outcomes = collections.defaultdict(collections.Counter)
    for pod in kubectl_json("get", "pods", "-n", namespace)["items"]:
        uid = owner_uid(pod) or pod["metadata"]["uid"]
        while owners.get(uid):
            uid = owners[uid]
        node = pod["spec"].get("nodeName")
        if node:
            outcomes[uid]["on a GPU node" if node.startswith("gpu-node-") else "on a CPU node"] += 1
            continue
        message = next((c.get("message", "") for c in pod.get("status", {}).get("conditions", [])
                        if c["type"] == "PodScheduled"), None)
        if message is None:
            # The scheduler only tries a Pod once its claims exist.
            message = ("never tried: waits for its ResourceClaims" if pod["spec"].get("resourceClaims")
                       else "not tried yet")
        outcomes[uid]["Pending: " + shorten(message)] += 1
    return outcomes


def shorten(message):
    # "0/7 nodes are available: 4 node(s) had untolerated taint {accelerator: gpu}, ...
    # preemption: ..." -> the part before the preemption note.
    message = message.split(" preemption:")[0]
    return message.replace(" no new claims to deallocate,", "").rstrip(".,; ")


def why_no_pods(namespace):
    """uid of a Job or ReplicaSet's owner -> why it made no Pod: its
    controller's last FailedCreate event, or a Job's suspension."""
    reasons = {}
    owners = {}
    for item in kubectl_json("get", "replicasets", "-n", namespace)["items"]:
        owners[item["metadata"]["uid"]] = owner_uid(item)
    for event in kubectl_json("get", "events", "-n", namespace)["items"]:
        if event.get("reason") == "FailedCreate":
            uid = event["involvedObject"].get("uid")
            reasons[owners.get(uid) or uid] = "not created: " + shorten(event.get("message", ""))[:160]
    queued = queue_reasons(namespace) if "kueue" in RUNNING_OPERATORS else {}
    for job in kubectl_json("get", "jobs", "-n", namespace)["items"]:
        if job["spec"].get("suspend"):
            uid = job["metadata"]["uid"]
            reasons.setdefault(uid, queued.get(uid, "suspended (Kueue would start it; Kueue does not run here)"))
    for uid, reason in queued.items():
        reasons.setdefault(uid, reason)
    return reasons


def queue_reasons(namespace):
    """uid of a workload Kueue holds -> why: its Workload's QuotaReserved
    message (a LocalQueue that does not exist, quota it does not have)."""
    reasons = {}
    for workload in kubectl_json("get", "workloads.kueue.x-k8s.io", "-n", namespace)["items"]:
        for condition in workload.get("status", {}).get("conditions", []):
            if condition["type"] == "QuotaReserved" and condition["status"] == "False":
                reasons[owner_uid(workload)] = "suspended by Kueue: " + shorten(condition.get("message", ""))[:160]
    return reasons


def describe(entry, outcomes, reasons):
    if "refused" in entry:
        return f"refused at apply by {entry['by']}: " + entry["refused"]
    pods = outcomes.get(entry["uid"])
    if not pods:
        if entry["uid"] in reasons:
            return "stored; no Pods: " + reasons[entry["uid"]]
        if entry["kind"] not in RUNS_PODS:
            return "stored; no Pods (its operator does not run here)"
        return "stored; no Pods: " + reasons.get(entry["uid"], "none made")
    return "; ".join(f"{count} {what}" for what, count in sorted(pods.items()))


def totals(workloads, outcomes):
    counted = collections.Counter()
    for entry in workloads:
        if "refused" in entry:
            counted["workloads refused at apply by " + ("aiadmit" if entry["by"] == "aiadmit"
                                                        else "the API server or kubectl")] += 1
            continue
        pods = outcomes.get(entry["uid"], {})
        if not pods:
            counted["workloads stored without Pods"] += 1
        for what, count in pods.items():
            counted["Pods " + ("Pending" if what.startswith("Pending") else what)] += count
    return counted


def main():
    runs = {"without aiadmit": os.environ["SCHED_WITHOUT"], "with aiadmit": os.environ["SCHED_WITH"]}
    applied = {mode: apply_all(namespace) for mode, namespace in runs.items()}
    settle(list(runs.values()))
    outcomes = {mode: pod_outcomes(namespace) for mode, namespace in runs.items()}
    reasons = {mode: why_no_pods(namespace) for mode, namespace in runs.items()}

    nodes = kubectl_json("get", "nodes")["items"]
    gpus = sum(int(n["status"].get("allocatable", {}).get("nvidia.com/gpu", "0")) for n in nodes)
    gpu_nodes = sum(1 for n in nodes if n["metadata"]["name"].startswith("gpu-node-"))
    print(f"Nodes: {len(nodes)} ({gpu_nodes} GPU nodes tainted accelerator=gpu:NoSchedule and labelled "
          f"accelerator=nvidia, {gpus} nvidia.com/gpu in all; {len(nodes) - gpu_nodes} CPU nodes)\n")
    print("| | without aiadmit | with aiadmit |")
    print("|---|---|---|")
    keys = ["Pods on a GPU node", "Pods on a CPU node", "Pods Pending", "workloads refused at apply by aiadmit",
            "workloads refused at apply by the API server or kubectl", "workloads stored without Pods"]
    sums = {mode: totals(applied[mode], outcomes[mode]) for mode in runs}
    for key in keys:
        print(f"| {key} | {sums['without aiadmit'][key]} | {sums['with aiadmit'][key]} |")
    print("\n| workload | without aiadmit | with aiadmit |")
    print("|---|---|---|")
    for without, with_ in zip(applied["without aiadmit"], applied["with aiadmit"]):
        name = with_["name"] if "uid" in with_ else without["name"]
        print(f"| `{name}` | {describe(without, outcomes['without aiadmit'], reasons['without aiadmit'])} "
              f"| {describe(with_, outcomes['with aiadmit'], reasons['with aiadmit'])} |")


if __name__ == "__main__":
    main()
