"""deploy/k8s: the Kubernetes manifests, validated offline. Core kinds against the Kubernetes JSON schema
(kubernetes-validate, strict: unknown fields fail); the Gateway API kinds, which it does not ship, against the
fields of the Gateway API v1.6 CRDs (experimental channel: HTTPRoute sessionPersistence, GEP-1619) transcribed
below; then what the issue asks of them: probes on /_stcore/health, requests and limits from the measured memory,
cookie affinity at the edge and never client-IP affinity, an autoscaler on CPU, PostgreSQL from a Secret that is
not committed, an app role that is no superuser and never trust, a NetworkPolicy that lets only the app reach
PostgreSQL, a hardened securityContext on every pod, images by digest (the kustomization rendered by
`kubectl kustomize`), TLS at the Gateway with HTTP only redirecting."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
kv = pytest.importorskip("kubernetes_validate")

ROOT = Path(__file__).resolve().parents[1]
K8S = ROOT / "deploy" / "k8s"
KUBERNETES = "1.35.0"  # schema version checked (the package ships several; unknown fields fail in strict mode)
GATEWAY_API = "gateway.networking.k8s.io/v1"
DURATION = re.compile(r"^([0-9]{1,5}(h|m|s|ms)){1,4}$")  # Gateway API's Duration pattern

# Gateway API v1.6 field names (apis/v1: GatewaySpec, Listener, HTTPRouteSpec, HTTPRouteRule, HTTPBackendRef,
# ParentReference, HTTPRouteTimeouts, SessionPersistence, CookieConfig)
GATEWAY_SPEC = {"gatewayClassName", "listeners", "addresses", "infrastructure", "backendTLS", "allowedListeners",
                "tls", "defaultScope"}  # fmt: skip
LISTENER = {"name", "hostname", "port", "protocol", "tls", "allowedRoutes"}
LISTENER_TLS = {"mode", "certificateRefs", "options", "frontendValidation"}
SECRET_REF = {"group", "kind", "name", "namespace"}
FILTER = {"type", "requestHeaderModifier", "responseHeaderModifier", "requestMirror", "requestRedirect", "urlRewrite",
          "extensionRef", "cors", "externalAuth"}  # fmt: skip
HEADER_MODIFIER = {"set", "add", "remove"}
REDIRECT = {"scheme", "hostname", "path", "port", "statusCode"}
ROUTE_SPEC = {"parentRefs", "hostnames", "rules", "useDefaultGateways"}
PARENT_REF = {"group", "kind", "namespace", "name", "sectionName", "port"}
RULE = {"name", "matches", "filters", "backendRefs", "timeouts", "retry", "sessionPersistence"}
BACKEND_REF = {"group", "kind", "name", "namespace", "port", "weight", "filters"}
MATCH = {"path", "headers", "queryParams", "method"}
PATH_TYPES = {"Exact", "PathPrefix", "RegularExpression"}
TIMEOUTS = {"request", "backendRequest"}
SESSION = {"sessionName", "absoluteTimeout", "type", "cookieConfig"}
PROTOCOLS = {"HTTP", "HTTPS", "TLS", "TCP", "UDP"}


def documents() -> list[dict]:
    docs = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name != "kustomization.yaml":
            docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def one(kind: str, name: str = "attention-lab") -> dict:
    found = [d for d in documents() if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, (kind, name, len(found))
    return found[0]


def test_the_kustomization_lists_every_manifest():
    listed = yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(p.name for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")


@pytest.mark.parametrize("doc", [d for d in documents() if not d["apiVersion"].startswith("gateway.")],
                         ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")  # fmt: skip
def test_core_kinds_are_valid_kubernetes(doc):
    kv.validate(doc, KUBERNETES, strict=True)  # raises ValidationError with the path of the bad field


def test_the_validator_rejects_an_unknown_field():  # the check above is not vacuous
    bad = json.loads(json.dumps(one("Deployment")))
    bad["spec"]["template"]["spec"]["containers"][0]["resourcez"] = {}
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, KUBERNETES, strict=True)


def keys_within(obj: dict, allowed: set, where: str) -> None:
    assert set(obj) <= allowed, f"{where}: unknown fields {sorted(set(obj) - allowed)}"


def test_gateway_has_the_fields_of_the_gateway_api():
    gw = one("Gateway")
    assert gw["apiVersion"] == GATEWAY_API
    keys_within(gw["spec"], GATEWAY_SPEC, "Gateway.spec")
    assert gw["spec"]["gatewayClassName"]
    for listener in gw["spec"]["listeners"]:
        keys_within(listener, LISTENER, "listener")
        assert listener["protocol"] in PROTOCOLS and 1 <= listener["port"] <= 65535
        if "tls" in listener:
            keys_within(listener["tls"], LISTENER_TLS, "listener.tls")
            for ref in listener["tls"].get("certificateRefs", []):
                keys_within(ref, SECRET_REF, "certificateRef")


def check_session(sp: dict) -> None:
    keys_within(sp, SESSION, "sessionPersistence")
    assert sp.get("type", "Cookie") in {"Cookie", "Header"}
    assert len(sp.get("sessionName", "")) <= 128
    if "absoluteTimeout" in sp:
        assert DURATION.match(sp["absoluteTimeout"])
    if "cookieConfig" in sp:  # the CRD's CEL rules
        keys_within(sp["cookieConfig"], {"lifetimeType"}, "cookieConfig")
        assert sp.get("type", "Cookie") == "Cookie", "cookieConfig can only be set with type Cookie"
        lifetime = sp["cookieConfig"].get("lifetimeType", "Session")
        assert lifetime in {"Permanent", "Session"}
        assert lifetime != "Permanent" or "absoluteTimeout" in sp


def test_httproute_has_the_fields_of_the_gateway_api_and_a_cookie_on_every_rule():
    route, gw, svc = one("HTTPRoute"), one("Gateway"), one("Service")
    assert route["apiVersion"] == GATEWAY_API
    keys_within(route["spec"], ROUTE_SPEC, "HTTPRoute.spec")
    for ref in route["spec"]["parentRefs"]:
        keys_within(ref, PARENT_REF, "parentRef")
        assert ref["name"] == gw["metadata"]["name"]
        assert ref.get("sectionName") in {None, *(x["name"] for x in gw["spec"]["listeners"])}
    ports = {p["port"] for p in svc["spec"]["ports"]}
    for rule in route["spec"]["rules"]:
        keys_within(rule, RULE, "rule")
        check_filters(rule.get("filters", []))
        for match in rule.get("matches", []):
            keys_within(match, MATCH, "match")
            assert match["path"]["type"] in PATH_TYPES
        for ref in rule["backendRefs"]:
            keys_within(ref, BACKEND_REF, "backendRef")
            assert ref["name"] == svc["metadata"]["name"] and ref["port"] in ports
        keys_within(rule.get("timeouts", {}), TIMEOUTS, "timeouts")
        assert all(DURATION.match(v) for v in rule.get("timeouts", {}).values())
        check_session(rule["sessionPersistence"])
        assert rule["sessionPersistence"].get("type", "Cookie") == "Cookie"  # a browser's cookie, not its address


def check_filters(filters: list[dict]) -> None:
    for f in filters:
        keys_within(f, FILTER, "filter")
        kind = f["type"]
        field = kind[0].lower() + kind[1:]  # RequestRedirect -> requestRedirect, as the CRD pairs them
        assert field in f and set(f) == {"type", field}, f
        if kind in {"RequestHeaderModifier", "ResponseHeaderModifier"}:
            keys_within(f[field], HEADER_MODIFIER, field)
            for header in f[field].get("set", []) + f[field].get("add", []):
                assert set(header) == {"name", "value"}, header
        if kind == "RequestRedirect":
            keys_within(f[field], REDIRECT, field)
            assert f[field].get("statusCode", 302) in {301, 302, 303, 307, 308}


def routes() -> list[dict]:
    return [d for d in documents() if d["kind"] == "HTTPRoute"]


def test_tls_terminates_at_the_gateway_and_plain_http_only_redirects():
    gw = one("Gateway")
    listeners = {x["name"]: x for x in gw["spec"]["listeners"]}
    https = [x for x in listeners.values() if x["protocol"] == "HTTPS"]
    assert len(https) == 1 and https[0]["port"] == 443 and https[0]["tls"]["mode"] == "Terminate"
    assert https[0]["tls"]["certificateRefs"] == [{"kind": "Secret", "name": "attention-lab-tls"}]
    by_listener = {ref.get("sectionName"): r for r in routes() for ref in r["spec"]["parentRefs"]}
    assert set(by_listener) == set(listeners)  # every route names its listener: none attaches to both
    app = by_listener[https[0]["name"]]
    assert all(rule["backendRefs"] for rule in app["spec"]["rules"])
    for name, listener in listeners.items():
        if listener["protocol"] == "HTTP":  # a redirect, nothing else: no page, no websocket, no cookie in clear
            for rule in by_listener[name]["spec"]["rules"]:
                keys_within(rule, RULE, "rule")
                check_filters(rule["filters"])
                assert "backendRefs" not in rule and "sessionPersistence" not in rule
                assert [f["requestRedirect"]["scheme"] for f in rule["filters"]] == ["https"]


def test_the_app_gets_security_headers_and_hsts_at_the_edge():
    nginx = (ROOT / "deploy" / "nginx.conf").read_text()
    for rule in one("HTTPRoute")["spec"]["rules"]:
        headers = {h["name"]: h["value"] for f in rule["filters"] if f["type"] == "ResponseHeaderModifier"
                   for h in f["responseHeaderModifier"]["set"]}  # fmt: skip
        assert headers.pop("Strict-Transport-Security").startswith("max-age=")
        for name, value in headers.items():  # the same values as nginx gives a class on one machine
            assert re.search(rf'add_header {name} "?{re.escape(value)}"? always;', nginx), name
        assert {"X-Content-Type-Options", "Referrer-Policy", "Content-Security-Policy"} <= set(headers)


def test_check_session_rejects_what_the_crd_rejects():
    for bad in (
        {"type": "Header", "cookieConfig": {"lifetimeType": "Session"}},
        {"cookieConfig": {"lifetimeType": "Permanent"}},
        {"sessionName": "x" * 129},
        {"idleTimeout": "1h"},  # not a field of v1.6
        {"absoluteTimeout": "1d"},
    ):
        with pytest.raises(AssertionError):
            check_session(bad)


def test_no_client_ip_affinity_anywhere():
    for doc in documents():
        assert "ClientIP" not in json.dumps(doc), doc["metadata"]["name"]
    for name in ("attention-lab", "attention-lab-db"):
        assert one("Service", name)["spec"].get("sessionAffinity", "None") == "None"


def test_the_deployment_probes_health_and_asks_for_the_measured_memory():
    container = one("Deployment")["spec"]["template"]["spec"]["containers"][0]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container[probe]["httpGet"]["path"] == "/_stcore/health", probe
    res = container["resources"]
    mib = {"Mi": 1, "Gi": 1024}

    def to_mib(q: str) -> float:
        return float(q[:-2]) * mib[q[-2:]]

    peak = json.loads((ROOT / "results" / "memory_footprint.json").read_text())["peak_mib"]
    assert to_mib(res["requests"]["memory"]) >= peak  # every model loaded and the logit lens run fit the request
    assert to_mib(res["limits"]["memory"]) >= 2 * to_mib(res["requests"]["memory"]) - 1  # room for /long-maps
    assert float(res["requests"]["cpu"]) >= 1  # one interpreter lock: one core per pod
    env = {e["name"]: e for e in container["env"]}
    assert env["DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {"name": "attention-lab-db", "key": "url"}
    assert env["OMP_NUM_THREADS"]["value"] == "1"


def test_the_autoscaler_scales_the_deployment_on_cpu():
    hpa, dep = one("HorizontalPodAutoscaler"), one("Deployment")
    assert hpa["spec"]["scaleTargetRef"]["name"] == dep["metadata"]["name"]
    assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]
    assert 2 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]


def pods() -> list[tuple[str, dict]]:
    return [(d["metadata"]["name"], d["spec"]["template"]["spec"]) for d in documents()
            if d["kind"] in {"Deployment", "StatefulSet", "DaemonSet", "Job"}]  # fmt: skip


def env_of(container: dict) -> dict:
    return {e["name"]: e for e in container.get("env", [])}


def test_no_secret_is_committed():
    for doc in documents():
        assert doc["kind"] != "Secret", doc["metadata"]["name"]  # the operator creates it (postgres.yaml)
    for _, spec in pods():
        for c in spec["containers"]:
            for name, e in env_of(c).items():
                if re.search(r"PASSWORD|PASSCODE|URL|TOKEN|SECRET", name):
                    assert "valueFrom" in e and "value" not in e, (c["name"], name)


def test_every_pod_asks_for_the_operators_room_passcode_from_a_secret_it_cannot_start_without():
    """A hosted class server is never open for anyone to fill with rooms: every replica reads one passcode from the
    operator's Secret, and a missing Secret or key stops the pod (not optional) instead of opening rooms to all."""
    app = env_of(one("Deployment")["spec"]["template"]["spec"]["containers"][0])
    ref = app["ATTENTION_LAB_ROOM_PASSCODE"]["valueFrom"]["secretKeyRef"]
    assert ref == {"name": "attention-lab-rooms", "key": "passcode"}  # no "optional": true
    readme = (ROOT / "README.md").read_text()
    assert "kubectl create secret generic attention-lab-rooms --from-literal=passcode=" in readme


def test_postgres_takes_its_passwords_from_the_secret_the_app_reads_and_the_app_is_no_superuser():
    db = one("StatefulSet", "attention-lab-db")
    env = env_of(db["spec"]["template"]["spec"]["containers"][0])
    ref = lambda name: env[name]["valueFrom"]["secretKeyRef"]  # noqa: E731
    assert ref("POSTGRES_PASSWORD") == {"name": "attention-lab-db", "key": "admin-password"}
    assert ref("LAB_PASSWORD") == {"name": "attention-lab-db", "key": "password"}
    app = env_of(one("Deployment")["spec"]["template"]["spec"]["containers"][0])
    assert app["DATABASE_URL"]["valueFrom"]["secretKeyRef"] == {"name": "attention-lab-db", "key": "url"}
    assert env["POSTGRES_USER"]["value"] != "lab"  # the image's POSTGRES_USER is a superuser: not the app's role
    assert "POSTGRES_HOST_AUTH_METHOD" not in env  # never trust
    initdb = env["POSTGRES_INITDB_ARGS"]["value"].split()
    assert {"--auth-host=scram-sha-256", "--auth-local=scram-sha-256"} <= set(initdb)  # the socket too
    init = one("ConfigMap", "attention-lab-db-init")["data"]
    script = "\n".join(init.values())
    assert re.search(r"CREATE ROLE lab LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE\b.*PASSWORD '\$LAB_PASSWORD'", script)
    assert "CREATE DATABASE attention_lab OWNER lab" in script
    mounts = {m["mountPath"]: m["name"] for m in db["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]}
    volumes = {v["name"]: v for v in db["spec"]["template"]["spec"]["volumes"]}
    assert volumes[mounts["/docker-entrypoint-initdb.d"]]["configMap"]["name"] == "attention-lab-db-init"
    assert one("Service", db["spec"]["serviceName"])["spec"]["ports"][0]["port"] == 5432


def test_only_the_app_reaches_postgres():
    policy, db, app = (
        one("NetworkPolicy", "attention-lab-db"),
        one("StatefulSet", "attention-lab-db"),
        one("Deployment"),
    )
    spec = policy["spec"]
    assert spec["podSelector"]["matchLabels"] == db["spec"]["template"]["metadata"]["labels"]
    assert spec["policyTypes"] == ["Ingress"]
    assert len(spec["ingress"]) == 1
    rule = spec["ingress"][0]
    assert rule["from"] == [{"podSelector": {"matchLabels": app["spec"]["template"]["metadata"]["labels"]}}]
    assert rule["ports"] == [{"protocol": "TCP", "port": 5432}]


@pytest.mark.parametrize(("name", "spec"), pods(), ids=[n for n, _ in pods()])
def test_every_pod_is_hardened(name, spec):
    pod = spec["securityContext"]
    assert pod["runAsNonRoot"] is True and pod["runAsUser"] > 0 and pod["seccompProfile"]["type"] == "RuntimeDefault"
    assert spec["automountServiceAccountToken"] is False
    for c in spec.get("initContainers", []) + spec["containers"]:
        ctx = c["securityContext"]
        assert ctx["allowPrivilegeEscalation"] is False and ctx.get("privileged", False) is False, c["name"]
        assert ctx["capabilities"] == {"drop": ["ALL"]}, c["name"]
        assert ctx["readOnlyRootFilesystem"] is True, c["name"]
        writable = {m["mountPath"] for m in c.get("volumeMounts", []) if not m.get("readOnly")}
        assert "/tmp" in writable, c["name"]  # what a read-only root still needs to write goes to a volume


def kustomize(folder: Path) -> subprocess.CompletedProcess:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed (its built-in kustomize renders deploy/k8s)")
    return subprocess.run([kubectl, "kustomize", str(folder)], capture_output=True, text=True, timeout=120)


def test_every_image_is_pinned_by_the_operators_digest(tmp_path):
    for _, spec in pods():  # the manifests name no tag: kustomize writes each image from images.env
        for c in spec["containers"]:
            assert ":" not in c["image"] and "@" not in c["image"], c["image"]
    example = (K8S / "images.env.example").read_text()
    keys = re.findall(r"^([A-Z_]+)=\S+@sha256:\S+$", example, re.M)
    assert sorted(keys) == ["APP_IMAGE", "DB_IMAGE"]
    ignored = subprocess.run(["git", "check-ignore", "-q", "deploy/k8s/images.env"], cwd=ROOT)
    assert ignored.returncode == 0  # the operator's file is never committed
    copy = tmp_path / "k8s"
    shutil.copytree(K8S, copy, ignore=shutil.ignore_patterns("images.env"))
    missing = kustomize(copy)
    assert missing.returncode != 0 and "images.env" in missing.stderr  # no digests, no manifests
    digests = {"APP_IMAGE": "registry.example/attention-lab@sha256:" + "a" * 64,
               "DB_IMAGE": "docker.io/library/postgres@sha256:" + "b" * 64}  # fmt: skip
    (copy / "images.env").write_text("".join(f"{k}={v}\n" for k, v in digests.items()))
    rendered = kustomize(copy)
    assert rendered.returncode == 0, rendered.stderr
    docs = [d for d in yaml.safe_load_all(rendered.stdout) if d]
    images = {d["metadata"]["name"]: [c["image"] for c in d["spec"]["template"]["spec"]["containers"]]
              for d in docs if d["kind"] in {"Deployment", "StatefulSet"}}  # fmt: skip
    assert images == {"attention-lab": [digests["APP_IMAGE"]], "attention-lab-db": [digests["DB_IMAGE"]]}
    assert not any(d["metadata"]["name"] == "attention-lab-images" for d in docs)  # read, never applied
    assert not any(d["kind"] == "Secret" for d in docs)
