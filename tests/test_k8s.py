"""deploy/k8s: the Kubernetes manifests, validated offline. Core kinds against the Kubernetes JSON schema
(kubernetes-validate, strict: unknown fields fail); the Gateway API kinds, which it does not ship, against the
fields of the Gateway API v1.6 CRDs (experimental channel: HTTPRoute sessionPersistence, GEP-1619) transcribed
below; then what the issue asks of them: probes on /_stcore/health, requests and limits from the measured memory,
cookie affinity at the edge and never client-IP affinity, an autoscaler on CPU, PostgreSQL from a Secret."""

from __future__ import annotations

import json
import re
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


def test_postgres_takes_its_password_from_the_secret_the_app_reads():
    db, secret = one("StatefulSet", "attention-lab-db"), one("Secret", "attention-lab-db")
    env = {e["name"]: e for e in db["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": secret["metadata"]["name"],
                                                                     "key": "password"}  # fmt: skip
    url = secret["stringData"]["url"]
    assert url.startswith("postgresql://") and secret["stringData"]["password"] in url
    assert one("Service", db["spec"]["serviceName"])["spec"]["ports"][0]["port"] == 5432
    assert f"@{db['spec']['serviceName']}:5432/" in url
