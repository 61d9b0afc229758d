"""A stand-in for anchor's Python worker, written from its documented claim
protocol (shared/anchor/BEHAVIOUR.md section 6), to race fleetwatch workers on
one tree. It drains the ready lanes the way anchor's work_once does: ready-path
lease with O_CREAT|O_EXCL, check the destination, rename (which overwrites, as
anchor's does), drop the ready lease, write the in-progress lease plainly.

usage: anchor_claim.py PLANS_DIR AGENT_ID BARRIER_FILE [PAUSE_SECONDS]
Prints one line per claim: the in-progress rel. PAUSE_SECONDS after each claim
stands in for anchor's slower loop, so both tools keep racing to the end.
"""
import json
import os
import sys
import time

plans, agent, barrier = sys.argv[1], sys.argv[2], sys.argv[3]
pause = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
leases = os.path.join(plans, ".leases")


def lease_path(rel):
    return os.path.join(leases, rel.replace("/", "__") + ".json")


def read_lease(rel):
    try:
        with open(lease_path(rel)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def claim(rel, ttl=3600):
    now = time.time()
    cur = read_lease(rel)
    if cur is not None:
        if now < cur.get("expires_at", 0) and cur.get("agent_id") != agent:
            return False
        try:
            os.unlink(lease_path(rel))
        except OSError:
            pass
    os.makedirs(leases, exist_ok=True)
    try:
        fd = os.open(lease_path(rel), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as f:
        json.dump({"plan": rel, "agent_id": agent, "claimed_at": now, "expires_at": now + ttl}, f, indent=2)
        f.write("\n")
    return True


def claim_and_move(rel):
    name = rel.split("/", 1)[1]
    dst = "in-progress/" + name
    if not os.path.exists(os.path.join(plans, rel)) or os.path.exists(os.path.join(plans, dst)):
        return None
    if not claim(rel):
        return None
    try:
        os.rename(os.path.join(plans, rel), os.path.join(plans, dst))
    except OSError:
        os.unlink(lease_path(rel))
        return None
    os.unlink(lease_path(rel))
    now = time.time()
    with open(lease_path(dst), "w") as f:
        json.dump({"plan": dst, "agent_id": agent, "claimed_at": now, "expires_at": now + 3600, "origin": rel}, f, indent=2)
        f.write("\n")
    return dst


open("%s.ready.%d" % (barrier, os.getpid()), "w").close()
while not os.path.exists(barrier):
    time.sleep(0.0002)
while True:
    ready = []
    for lane in ("bugs", "features"):
        d = os.path.join(plans, lane)
        ready += [lane + "/" + n for n in sorted(os.listdir(d)) if n.endswith(".md")]
    if not ready:
        break
    skip = set()
    for rel in ready:
        cur = read_lease(rel)
        if cur is not None and time.time() < cur.get("expires_at", 0):
            continue
        got = claim_and_move(rel)
        if got:
            print(got, flush=True)
            time.sleep(pause)
            break
    else:
        break
