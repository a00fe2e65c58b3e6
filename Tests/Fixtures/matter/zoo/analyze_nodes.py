#!/usr/bin/env python3
"""Derive device-types.json, clusters.json and a per-fixture summary from nodes/*.json.

Run with the python-matter-server venv (needs chip.clusters.Objects and
matter_server.client.models.device_types for the names):
  /work/main/.venv-matter/bin/python analyze_nodes.py
"""
import inspect, json, pathlib, re
from collections import defaultdict

HERE = pathlib.Path(__file__).resolve().parent
GLOBAL_ATTRS = {65528: "GeneratedCommandList", 65529: "AcceptedCommandList",
                65530: "EventList", 65531: "AttributeList", 65532: "FeatureMap",
                65533: "ClusterRevision"}

def cluster_names():
    from chip.clusters import Objects as O
    from matter_server.common import custom_clusters as CC  # Eve, Inovelli, Heiman, B04 ...
    out = {}
    members = inspect.getmembers(O, inspect.isclass) + inspect.getmembers(CC, inspect.isclass)
    for name, cls in members:
        cid = getattr(cls, "id", None)
        attrs = getattr(cls, "Attributes", None)
        if not isinstance(cid, int) or attrs is None:
            continue
        amap = {}
        for an, acls in inspect.getmembers(attrs, inspect.isclass):
            aid = getattr(acls, "attribute_id", None)
            if isinstance(aid, int):
                amap[aid] = an
        if cid in out and len(out[cid][1]) >= len(amap):
            continue
        out[cid] = (name, amap)
    return out

def device_type_names():
    from matter_server.client.models import device_types as D
    return {c.device_type: n for n, c in inspect.getmembers(D, inspect.isclass)
            if isinstance(getattr(c, "device_type", None), int)}

def main():
    cn, dn = cluster_names(), device_type_names()
    dev_types = defaultdict(set)          # id -> fixtures
    clusters = defaultdict(lambda: {"fixtures": set(), "attributes": set(), "endpoints_example": set()})
    summary = {}
    for f in sorted((HERE / "nodes").glob("*.json")):
        node = json.loads(f.read_text(encoding="utf-8"))
        attrs = node["attributes"]
        eps = sorted({int(k.split("/")[0]) for k in attrs})
        per_ep = {}
        for ep in eps:
            dts = [d.get("0", d.get("deviceType", d.get("type"))) for d in attrs.get(f"{ep}/29/0") or []]
            servers = attrs.get(f"{ep}/29/1", [])
            per_ep[ep] = {"device_types": [f"0x{d:04X} {dn.get(d, '?')}" for d in dts],
                          "server_clusters": [f"0x{c:04X} {cn.get(c, ('?',))[0]}" for c in servers]}
            for d in dts:
                dev_types[d].add(f.stem)
            for c in servers:
                clusters[c]["fixtures"].add(f.stem)
        for k in attrs:
            ep, c, a = (int(x) for x in k.split("/"))
            clusters[c]["attributes"].add(a)
            clusters[c]["fixtures"].add(f.stem)
        summary[f.stem] = {
            "vendor": attrs.get("0/40/1"), "vendor_id": attrs.get("0/40/2"),
            "product": attrs.get("0/40/3"), "product_id": attrs.get("0/40/4"),
            "node_id_in_fixture": node.get("node_id"), "is_bridge": node.get("is_bridge"),
            "endpoints": per_ep}
    dt_out = [{"id": d, "hex": f"0x{d:04X}", "name": dn.get(d), "fixtures": sorted(v)}
              for d, v in sorted(dev_types.items())]
    cl_out = []
    for c, v in sorted(clusters.items()):
        name, amap = cn.get(c, (None, {}))
        cl_out.append({"id": c, "hex": f"0x{c:04X}", "name": name,
                       "fixtures": sorted(v["fixtures"]),
                       "attributes": [{"id": a, "hex": f"0x{a:04X}", "name": amap.get(a) or GLOBAL_ATTRS.get(a)}
                                      for a in sorted(v["attributes"])]})
    (HERE / "device-types.json").write_text(json.dumps(dt_out, indent=2) + "\n")
    (HERE / "clusters.json").write_text(json.dumps(cl_out, indent=2) + "\n")
    (HERE / "fixtures-summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(len(dt_out), "device types;", len(cl_out), "clusters")

if __name__ == "__main__":
    main()
