"""Skills as other agents read them: every built-in skill, and an export of a library holding
built-in, learned and imported skills, pass the Agent Skills reference validator
(`agentskills validate`, from skills-ref, pinned in requirements.txt)."""

import json
import os
import subprocess
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conftest import METACLAW, PROXY_KEY, ROOT, MetaClaw
from skills_ref.parser import read_properties

AGENTSKILLS = str(Path(sys.executable).parent / "agentskills")

# As ClawHub publishes a skill: `version` at the top level, `metadata.openclaw` as JSON; the
# `---` in its description must not end the frontmatter for readers that cut at the first one.
CLAWHUB = """---
name: todoist-tasks
description: Manage tasks via the Todoist API --- today's, then the rest.
version: 1.2.0
metadata: {"openclaw": {"requires": {"env": ["TODOIST_API_KEY"], "bins": ["curl"]}}}
---

List the tasks due today, then add the new ones.
"""


def refused(folders):
    """What the validator says of each folder it refuses (one process per folder, as a
    user would run it; two at a time)."""

    def check(folder):
        r = subprocess.run([AGENTSKILLS, "validate", str(folder)], capture_output=True, text=True)
        return None if r.returncode == 0 else r.stderr.strip()

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        return [e for e in pool.map(check, folders) if e]


def skill_folders(root: Path):
    return sorted(p.parent for p in root.glob("*/SKILL.md"))


def test_the_validator_refuses_the_earlier_format(tmp_path):
    folder = tmp_path / "old-style"
    folder.mkdir()
    (folder / "SKILL.md").write_text(
        "---\nname: old-style\ndescription: d\ncategory: coding\ntags: [a, b]\n---\nbody\n"
    )
    assert refused([folder]), "the check would pass anything"


def test_every_built_in_skill_is_valid():
    folders = skill_folders(ROOT / "skills")
    assert len(folders) >= 40
    assert refused(folders) == []


def post(mc, path, body):
    token = (mc.home / "run" / "admin_token").read_text().strip()
    req = urllib.request.Request(
        mc.base + path,
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)


def chat(mc, session, text):
    req = urllib.request.Request(
        mc.base + "/v1/chat/completions",
        data=json.dumps({"model": "m", "messages": [{"role": "user", "content": text}]}).encode(),
        method="POST",
        headers={
            "Authorization": f"Bearer {PROXY_KEY}",
            "Content-Type": "application/json",
            "x-session-id": session,
        },
    )
    urllib.request.urlopen(req, timeout=30).close()


def cli(mc, *args):
    env = dict(os.environ, METACLAW_HOME=str(mc.home), METACLAW_SECRET_BACKEND="file")
    r = subprocess.run([METACLAW, *args], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r
    return r.stdout


def test_an_export_of_built_in_learned_and_imported_skills_is_valid(fake, tmp_path):
    mc = MetaClaw(fake, "openai", "skills:\n  auto_evolve: false\n")
    try:
        # Learned: the fake learning model writes a skill for each "From now on" rule.
        chat(mc, "s-dates", "From now on, always write dates as YYYY-MM-DD in reports. Thanks!")
        learned = post(mc, "/api/skills/evolve", {"session_id": "s-dates"})
        assert learned["added"], learned
        # Imported: a ClawHub skill, its own frontmatter kept.
        source = tmp_path / "in" / "todoist-tasks"
        source.mkdir(parents=True)
        (source / "SKILL.md").write_text(CLAWHUB)
        cli(mc, "skills", "import", str(source.parent))
        out = tmp_path / "out"
        cli(mc, "skills", "export", str(out))
    finally:
        mc.stop()

    folders = skill_folders(out)
    assert refused(folders) == []
    # As the reference library reads them.
    props = {f.name: read_properties(f) for f in folders}
    sources = {name: p.metadata["metaclaw-source"] for name, p in props.items()}
    assert sources[learned["added"][0]] == "evolved"
    assert sources["todoist-tasks"] == "imported"
    assert "builtin" in sources.values()
    todoist = props["todoist-tasks"]
    assert todoist.description == "Manage tasks via the Todoist API --- today's, then the rest."
    assert todoist.metadata["version"] == "1.2.0"
    assert json.loads(todoist.metadata["openclaw"])["requires"]["bins"] == ["curl"]
