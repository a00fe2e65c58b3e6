#!/usr/bin/env python3
"""Build expected-entities.json: the entities Home Assistant's Matter integration makes per fixture.

Inputs (either or both):
  * real syrupy snapshots  tests/components/matter/snapshots/test_*.ambr  (--ambr DIR)
  * the transcriptions kept here  snapshot-entries/*.tsv  (default; see README for why)

.ambr layout: blocks separated by "# ---". An entity-registry block starts with
  # name: test_<platform>s[<fixture>][<entity_id>-entry]
followed by "  EntityRegistryEntrySnapshot({" and one "'key': value," line per field.
The "-state" blocks (StateSnapshot) carry the state; only 'state' is taken from them.

HA unique_id layout (MatterEntity):
  <compressed fabric id, 16 hex>-<node id, 16 hex>-MatterNodeDevice-<endpoint>-<description key>-<cluster id>-<attribute id>
(tests use compressed fabric id 0x4D2 = 1234). The endpoint here is the entity's endpoint
(HA uses the composed-device parent for the *device* id, not for the entity unique_id).

Usage:
  python3 extract_entities.py                       # from snapshot-entries/*.tsv
  python3 extract_entities.py --ambr /path/to/core/tests/components/matter/snapshots
"""
import argparse, ast, json, pathlib, re, sys

HERE = pathlib.Path(__file__).resolve().parent
NAME_RE = re.compile(r"^# name: (test_\w+)\[(?P<fixture>[^\]]+)\]\[(?P<eid>[^\]]+)-(?P<kind>entry|state)\]")
UID_RE = re.compile(r"^(?P<fabric>[0-9A-F]{16})-(?P<node>[0-9A-F]{16})-(?P<devtype>Matter\w*Device)-"
                    r"(?P<endpoint>\d+)-(?P<key>.+)-(?P<cluster>\d+)-(?P<attribute>\d+)$")
ENUM_RE = re.compile(r"^<[\w.]+: '(.*)'>$")


def pyval(raw):
    raw = raw.strip().rstrip(",")
    if raw in ("None", "<ANY>"):
        return None
    m = ENUM_RE.match(raw)
    if m:
        return m.group(1)
    try:
        return ast.literal_eval(raw)
    except Exception:
        return raw


def parse_unique_id(uid):
    m = UID_RE.match(uid or "")
    if not m:
        return {}
    return {"node_id": int(m["node"], 16), "endpoint": int(m["endpoint"]),
            "description_key": m["key"], "cluster_id": int(m["cluster"]),
            "attribute_id": int(m["attribute"]), "device_kind": m["devtype"]}


def from_ambr(path):
    ents, states = [], {}
    cur = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = NAME_RE.match(line)
        if m:
            cur = {"fixture": m["fixture"], "eid": m["eid"], "kind": m["kind"], "fields": {}}
            continue
        if line.startswith("# ---"):
            if cur and cur["kind"] == "entry":
                ents.append(cur)
            elif cur:
                states[(cur["fixture"], cur["eid"])] = cur["fields"].get("state")
            cur = None
            continue
        if cur is not None:
            fm = re.match(r"^    '(\w+)': (.*)$", line)  # top-level fields only (4 spaces)
            if fm:
                cur["fields"][fm.group(1)] = pyval(fm.group(2))
    out = []
    for e in ents:
        f = e["fields"]
        out.append({"fixture": e["fixture"], "entity_id": f.get("entity_id") or e["eid"],
                    "original_device_class": f.get("original_device_class"),
                    "original_name": f.get("original_name"), "translation_key": f.get("translation_key"),
                    "entity_category": f.get("entity_category"), "unique_id": f.get("unique_id"),
                    "state": states.get((e["fixture"], e["eid"])), "source": path.name})
    return out


def from_tsv(path):
    out, src = [], path.name
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# source:"):
            src = line[len("# source:"):].strip()
        if not line.strip() or line.startswith("#"):
            continue
        fx, eid, dc, name, tk, cat, node_hex, tail, state = line.split("\t")
        nn = lambda v: None if v == "None" else v
        out.append({"fixture": fx, "entity_id": eid, "original_device_class": nn(dc),
                    "original_name": nn(name), "translation_key": nn(tk), "entity_category": nn(cat),
                    "unique_id": f"00000000000004D2-{int(node_hex, 16):016X}-MatterNodeDevice-{tail}",
                    "state": state, "source": src})
    return out


# Home Assistant renamed fixtures over time (most to a `mock_` prefix in 2025), and each snapshot
# file here is of the version the code index holds, so a snapshot may name a dump by an older or
# newer name than the file kept in nodes/. The same device under both names: snapshot name -> dump.
ALIASES = {
    "battery_storage": "mock_battery_storage", "cooktop": "mock_cooktop", "dimmable_light": "mock_dimmable_light",
    "dimmable_plugin_unit": "mock_dimmable_plugin_unit", "door_lock_with_unbolt": "mock_door_lock_with_unbolt",
    "light_sensor": "light-sensor", "mock_air_purifier": "air_purifier", "mock_extractor_hood": "extractor_hood",
    "mock_generic_switch_multi": "generic_switch_multi", "mock_room_airconditioner": "room_airconditioner",
    "pressure_sensor": "mock_pressure_sensor", "temperature_sensor": "mock_temperature_sensor",
    "vacuum_cleaner": "mock_vacuum_cleaner", "window_covering_full": "mock_window_covering_full",
    "window_covering_lift": "mock_window_covering_lift",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ambr", help="directory with test_*.ambr (HA checkout)")
    ap.add_argument("--out", default=str(HERE / "expected-entities.json"))
    a = ap.parse_args()
    rows = []
    if a.ambr:
        for p in sorted(pathlib.Path(a.ambr).glob("test_*.ambr")):
            rows += from_ambr(p)
    else:
        for p in sorted((HERE / "snapshot-entries").glob("*.tsv")):
            rows += from_tsv(p)
    for row in rows:
        row["fixture"] = ALIASES.get(row["fixture"], row["fixture"])
    kept = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (HERE / "nodes").glob("*.json")}
    result = {"_about": {
        "unique_id_layout": "<compressed fabric id hex16>-<node id hex16>-MatterNodeDevice-<endpoint>-<description key>-<cluster id>-<attribute id>",
        "sources": sorted({r["source"] for r in rows}),
        "note": "fixtures absent from nodes/ are listed for reference only (dump not kept)"},
        "fixtures": {}}
    for r in rows:
        u = parse_unique_id(r["unique_id"])
        ent = {"platform": r["entity_id"].split(".")[0], "entity_id": r["entity_id"],
               "unique_id": r["unique_id"], "original_name": r["original_name"],
               "translation_key": r["translation_key"], "device_class": r["original_device_class"],
               "entity_category": r["entity_category"], "endpoint": u.get("endpoint"),
               "cluster_id": u.get("cluster_id"), "attribute_id": u.get("attribute_id"),
               "description_key": u.get("description_key"), "snapshot_state": r["state"],
               "snapshot_source": r["source"]}
        fx = result["fixtures"].setdefault(r["fixture"], {"dump_kept": r["fixture"] in kept, "entities": []})
        node = kept.get(r["fixture"])
        if node is not None and u:
            ent["primary_attribute_in_dump"] = (
                f"{u['endpoint']}/{u['cluster_id']}/{u['attribute_id']}" in node["attributes"])
            fx["node_id_in_dump"] = node.get("node_id")
            fx["node_id_in_snapshot"] = u["node_id"]
        fx["entities"].append(ent)
    for name in kept:
        result["fixtures"].setdefault(name, {"dump_kept": True, "entities": [],
                                             "note": "no entities in the snapshot files transcribed here"})
    pathlib.Path(a.out).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    n = sum(len(v["entities"]) for v in result["fixtures"].values())
    print(f"{len(result['fixtures'])} fixtures, {n} entities -> {a.out}")


if __name__ == "__main__":
    sys.exit(main())
