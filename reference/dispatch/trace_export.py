"""The `--trace` timeline in the Trace Event Format that Perfetto (ui.perfetto.dev) and
chrome://tracing open: one complete ("X") event per job, coordinator step and phase, on
one track per target, named by the flow; the record's other fields are its args."""

_KEYS = ("event", "time", "flow", "target", "phase", "state")


def _key(record: dict):
    if record["event"] == "phase":
        return ("phase", record["phase"]), "run", record["state"] == "start"
    return ("job", record["flow"], record["target"]), record["target"], \
        record["event"] == "start"


def chrome_trace(records) -> dict:
    """The records (as `--trace` writes them, in order) as one Trace Event document."""
    tracks: dict[str, int] = {}
    begun: dict[tuple, dict] = {}
    events = []
    for r in records:
        if r.get("event") not in ("start", "end", "phase"):
            continue
        key, track, starts = _key(r)
        if starts:
            begun[key] = r
            continue
        first = begun.pop(key, None)
        if first is None:
            continue
        tid = tracks.setdefault(track, len(tracks) + 1)
        events.append({"name": r.get("flow") or r["phase"], "cat": track, "ph": "X",
                       "pid": 1, "tid": tid, "ts": round(first["time"] * 1e6),
                       "dur": round((r["time"] - first["time"]) * 1e6),
                       "args": {k: v for k, v in {**first, **r}.items() if k not in _KEYS}})
    names = [{"name": "thread_name", "ph": "M", "pid": 1, "tid": tid, "args": {"name": name}}
             for name, tid in tracks.items()]
    return {"traceEvents": names + events, "displayTimeUnit": "ms"}
