#!/usr/bin/python3
"""LAVA's scheduler for the lab (lab.sh): on events, and every 2 s between them.

Run with lava-scheduler's own arguments, in the lab's environment
(DJANGO_SETTINGS_MODULE, LAVA_JSON_SETTINGS), as lab.sh starts it.

LAVA's scheduler acts on the publisher's events (a job submitted, a device
gone idle) and otherwise looks every 20 s (INTERVAL in lava-scheduler.py).
The server sends a device's "Idle" event from inside the transaction that
makes it idle (the job's end, under select_for_update), so the scheduler can
read the device before that transaction commits, find it still busy, and
leave the next queued job waiting for its 20-s look: gaps of 14-22 s
between a job's end and the next job's start on that device, where most
were 1-2 s.  Here the look comes every 2 s between events: a single-node
lab's database has room for it, and a missed event costs 2 s at most.
The workers' offline timeout (3 x the interval, fixed when LAVA's module is
imported) stays 60 s.
"""
import importlib
import sys

import django
from django.core.management import execute_from_command_line

django.setup()
scheduler = importlib.import_module("lava_server.management.commands.lava-scheduler")
scheduler.INTERVAL = 2
execute_from_command_line(["lava-server", "lava-scheduler"] + sys.argv[1:])
