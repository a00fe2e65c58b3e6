#!/usr/bin/env python3
"""Load every zoo node dump into a running python-matter-server via `import_test_node`.

Usage: import_check.py [--port 5599] [--out results.json] [--sample-out get_nodes-sample.json]
Needs aiohttp (present in the .venv-matter venv). The server must already be running, e.g.
  mkdir -p /data
  .venv-matter/bin/matter-server --storage-path /tmp/zoo/storage --port 5599
import_test_node wants a Home Assistant *diagnostics* dump, so each HA node fixture is
wrapped as {"data": {"node": <fixture>}} and sent as a JSON *string* in args.dump.
"""
import argparse, asyncio, json, pathlib, sys
import aiohttp

HERE = pathlib.Path(__file__).resolve().parent


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=5599)
    ap.add_argument("--out", default=None)
    ap.add_argument("--sample-out", default=None)
    ap.add_argument("--sample", default="yandex_smart_socket")
    ap.add_argument("--probe-commands", action="store_true")
    a = ap.parse_args()
    results = {"fixtures": {}, "probes": {}}
    mid = 0
    async with aiohttp.ClientSession() as s:
        async with s.ws_connect(f"ws://127.0.0.1:{a.port}/ws") as ws:
            info = await ws.receive_json()
            results["server_info"] = info

            async def call(command, args=None):
                nonlocal mid
                mid += 1
                msg = {"message_id": str(mid), "command": command}
                if args is not None:
                    msg["args"] = args
                await ws.send_json(msg)
                while True:
                    r = await ws.receive_json()
                    if r.get("message_id") == str(mid):
                        return r
                    results.setdefault("events_seen", []).append(r.get("event"))

            before = {n["node_id"] for n in (await call("get_nodes"))["result"]}
            for f in sorted((HERE / "nodes").glob("*.json")):
                fixture = json.loads(f.read_text(encoding="utf-8"))
                dump = json.dumps({"data": {"node": fixture}})
                r = await call("import_test_node", {"dump": dump})
                entry = {"response": r}
                if "error_code" in r and "Extra key" in r.get("details", ""):
                    # strict=True in the server: drop top-level keys MatterNodeData lacks
                    # (HA fixtures may carry e.g. "last_subscription_attempt") and retry.
                    known = {"node_id", "date_commissioned", "last_interview",
                             "interview_version", "available", "is_bridge",
                             "attributes", "attribute_subscriptions"}
                    dropped = sorted(set(fixture) - known)
                    fixture = {k: v for k, v in fixture.items() if k in known}
                    dump = json.dumps({"data": {"node": fixture}})
                    r = await call("import_test_node", {"dump": dump})
                    entry = {"first_response": entry["response"], "dropped_keys": dropped,
                             "response": r}
                nodes = (await call("get_nodes"))["result"]
                new = [n for n in nodes if n["node_id"] not in before]
                before |= {n["node_id"] for n in new}
                if "error_code" in r:
                    entry["ok"] = False
                else:
                    entry["ok"] = len(new) == 1
                    if new:
                        n = new[0]
                        entry["node_id"] = n["node_id"]
                        entry["attr_count_server"] = len(n["attributes"])
                        entry["attr_count_fixture"] = len(fixture["attributes"])
                        fa = fixture["attributes"]
                        entry["attributes_equal"] = n["attributes"] == fa
                        entry["attributes_differing"] = {
                            k: {"fixture": fa.get(k), "server": n["attributes"].get(k)}
                            for k in sorted(set(fa) | set(n["attributes"]))
                            if fa.get(k) != n["attributes"].get(k)}
                        if f.stem == a.sample and a.sample_out:
                            pathlib.Path(a.sample_out).write_text(
                                json.dumps(n, indent=2) + "\n", encoding="utf-8")
                results["fixtures"][f.stem] = entry
            sl = await call("start_listening")
            results["start_listening"] = {
                "keys": sorted(sl.keys()),
                "result_type": type(sl.get("result")).__name__,
                "result_len": len(sl.get("result") or []),
                "first_node_keys": sorted(sl["result"][0].keys()) if sl.get("result") else None,
            }
            if a.probe_commands:
                some = next(e["node_id"] for e in results["fixtures"].values() if e.get("node_id"))
                results["probes"]["node_id"] = some
                results["probes"]["get_node"] = {k: v for k, v in (await call("get_node", {"node_id": some})).items() if k != "result"}
                results["probes"]["device_command"] = await call("device_command", {
                    "node_id": some, "endpoint_id": 1, "cluster_id": 6,
                    "command_name": "Toggle", "payload": {}})
                results["probes"]["read_attribute"] = await call("read_attribute", {
                    "node_id": some, "attribute_path": "1/6/0"})
                results["probes"]["write_attribute"] = await call("write_attribute", {
                    "node_id": some, "attribute_path": "1/6/16385", "value": 5})
                results["probes"]["interview_node"] = await call("interview_node", {"node_id": some})
                results["probes"]["remove_node"] = await call("remove_node", {"node_id": 123456789})
    out = json.dumps(results, indent=2, default=str)
    if a.out:
        pathlib.Path(a.out).write_text(out + "\n", encoding="utf-8")
    else:
        print(out)
    bad = [k for k, v in results["fixtures"].items() if not v.get("ok")]
    print("failed:", bad, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
