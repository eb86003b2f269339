#!/usr/bin/python3
"""Renders a LAVA device dictionary into the device configuration lava-run reads.

    render-device.py DEVICE.jinja2 [--job JOB.yaml] [--out DEVICE.yaml]

A LAVA server renders a device's dictionary (a Jinja2 file extending a
device type's template) with the job's `context` before the dispatcher
runs the job; this does the same for `lava-run` alone, with the device-type
templates of lava-server (/etc/lava-server/dispatcher-config/device-types,
then /usr/share/lava-server/device-types) and the dictionaries next to this
script (devices/).  Exit 2 on bad input.
"""
import argparse
import os
import sys

import jinja2
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE_DIRS = [
    "/etc/lava-server/dispatcher-config/device-types",
    "/usr/share/lava-server/device-types",
]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("device", help="device dictionary (.jinja2), e.g. devices/qemu-tcg.jinja2")
    p.add_argument("--job", help="job definition whose context the template gets")
    p.add_argument("--out", help="device configuration to write (default: stdout)")
    a = p.parse_args()
    dirs = [os.path.dirname(os.path.abspath(a.device)), os.path.join(HERE, "devices")]
    dirs += [d for d in TEMPLATE_DIRS if os.path.isdir(d)]
    if not any(os.path.isfile(os.path.join(d, "qemu.jinja2")) for d in dirs):
        print("render-device: no LAVA device-type templates (apt-get install lava-server)", file=sys.stderr)
        return 2
    context = {}
    if a.job:
        try:
            with open(a.job, encoding="utf-8") as f:
                context = (yaml.safe_load(f) or {}).get("context", {}) or {}
        except (OSError, yaml.YAMLError) as e:
            print(f"render-device: {a.job}: {e}", file=sys.stderr)
            return 2
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(dirs), trim_blocks=True, autoescape=False)
    try:
        text = env.get_template(os.path.basename(a.device)).render(**context)
        yaml.safe_load(text)  # the dispatcher reads it as YAML
    except (jinja2.TemplateError, yaml.YAMLError) as e:
        print(f"render-device: {a.device}: {e}", file=sys.stderr)
        return 2
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
