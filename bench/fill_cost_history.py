"""Fills a gleaner.db with 30 days of minutes for every GPU it has recorded.

Usage: fill_cost_history.py DB NOW_UNIX_S. The database must come from a
gleaner of schema version 5 or later that has seen its GPUs (bench/cost_report.sh
makes one with `gleaner up --fake demo`). Each minute is, by a seeded draw:
30 % idle, 10 % held idle by alice, 20 % harvested by bob's job, 40 % alice's work.
"""
import sqlite3, sys, random
db, now_s = sys.argv[1], int(sys.argv[2])
c = sqlite3.connect(db)
uuids = [r[0] for r in c.execute("SELECT uuid FROM gpus")]
c.execute("DELETE FROM gpu_minutes")
rnd = random.Random(7)
rows = []
start = (now_s // 60) * 60 - 30 * 86400
for u in uuids:
    for m in range(30 * 1440):
        t = start + 60 * m
        kind = rnd.random()
        idle = held = harv = 0.0
        users, job_users = "alice", ""
        if kind < 0.3: idle, users = 60.0, ""
        elif kind < 0.4: held = 60.0
        elif kind < 0.6: harv, users, job_users = 60.0, "", "bob"
        busy = 60.0 - idle
        rows.append((u, t, 60, 0, 30, 90, None, 300.0, "1", users, "busy", 60.0, busy, idle, held, harv, job_users))
c.executemany("INSERT INTO gpu_minutes (uuid, minute_s, samples, utilization_min_pct, utilization_mean_pct, utilization_max_pct, memory_used_max_bytes, power_mean_w, pids, users, state, observed_s, busy_s, idle_s, held_idle_s, harvested_s, job_users) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
c.commit()
print(len(rows), "minutes for", len(uuids), "GPUs")
