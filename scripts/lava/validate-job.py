#!/usr/bin/python3
"""Checks LAVA job definitions against LAVA's own job schema.

    validate-job.py JOB.yaml...

lava_common.schemas.validate (python3-lava-common, installed with
lava-dispatcher) is what lava-server runs on a submitted job, strict
(unknown keys refused).  Exit 0 when every job is valid, 1 when one is not
(its errors printed), 2 when a file cannot be read or LAVA is not installed.
"""
import sys

import yaml

try:
    from lava_common.schemas import validate
    from voluptuous import Invalid
except ImportError as e:
    print(f"validate-job: LAVA's schemas are missing ({e}): apt-get install lava-dispatcher", file=sys.stderr)
    sys.exit(2)


def main(paths):
    if not paths:
        print("usage: validate-job.py JOB.yaml...", file=sys.stderr)
        return 2
    bad = 0
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:
                job = yaml.safe_load(f)
        except (OSError, yaml.YAMLError) as e:
            print(f"validate-job: {path}: {e}", file=sys.stderr)
            return 2
        try:
            validate(job, strict=True)
            print(f"{path}: valid ({job.get('device_type')})")
        except Invalid as e:
            print(f"{path}: INVALID: {e} (at {'/'.join(str(p) for p in e.path)})")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
