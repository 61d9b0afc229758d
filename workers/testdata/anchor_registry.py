"""A stand-in for anchor's worktree registry handling, written from what
anchor's worktree_for_agent.py does with var/worktrees/registry.json: it
reads the "agents" object, skipping any entry without agent_id, path or
branch, and it writes the file back rebuilt from those records alone (a
top-level "project" and "agents", five keys per agent, agents sorted,
indent 2), so any other key is dropped.

usage: anchor_registry.py list|rewrite PROJECT
list prints one line per agent, "AGENT_ID<TAB>BRANCH<TAB>PATH", sorted;
rewrite reads and writes the registry the way anchor's ensure and remove do.
"""
import json
import os
import sys

FIELDS = ("agent_id", "path", "branch", "integration", "project")


def load(project):
    try:
        with open(os.path.join(project, "var", "worktrees", "registry.json")) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    agents = data.get("agents") if isinstance(data, dict) else None
    out = {}
    for key, entry in (agents or {}).items():
        if not isinstance(entry, dict) or not all(k in entry for k in FIELDS[:3]):
            continue
        out[str(key)] = {k: str(entry.get(k) or "") for k in FIELDS}
    return out


def main():
    verb, project = sys.argv[1], sys.argv[2]
    records = load(project)
    if verb == "list":
        for key, rec in sorted(records.items()):
            print("%s\t%s\t%s" % (key, rec["branch"], rec["path"]))
    elif verb == "rewrite":
        payload = {"project": project, "agents": dict(sorted(records.items()))}
        with open(os.path.join(project, "var", "worktrees", "registry.json"), "w") as f:
            f.write(json.dumps(payload, indent=2) + "\n")
    else:
        sys.exit("unknown verb " + verb)


if __name__ == "__main__":
    main()
