"""The table-driven integration tests' verdicts: each check prints `ok: NAME`
or `FAIL: NAME: DETAIL` (the detail cut to its last `limit` characters) and
the failures are counted in `failures` for the script's exit status."""

failures = []


def check(name, cond, detail="", limit=3000):
    if cond:
        print(f"ok: {name}", flush=True)
    else:
        print(f"FAIL: {name}: {str(detail)[-limit:]}", flush=True)
        failures.append(name)
