#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# scripts/check-workflow.sh -- check .github/workflows/*.yml without a GitHub runner.
#
#   ./scripts/check-workflow.sh [FILE...]        default: every .github/workflows/*.yml
#
# The workflow is for users' and forks' hosted runners; the project's CI cannot run it, so it
# checks what can be checked here, and CI fails on any of it:
#   - the file is YAML, with name, on and jobs at the top;
#   - every job has runs-on and a non-empty list of steps, and uses only keys Actions knows;
#   - every step has exactly one of run and uses, only keys Actions knows, and a uses of the
#     form owner/repo@ref;
#   - every ${{ matrix.X }} a job names is a key of that job's matrix;
#   - every run script that a bash runs (the default on Linux and macOS runners, shell: bash
#     anywhere) parses with bash -n, and every ./scripts/ or build path of this tree that a
#     script starts exists here (build outputs excepted);
#   - the run script given to the FreeBSD VM action parses with sh -n.
# It reads PyYAML through Debian's python3-yaml (scripts/deps.sh test installs it).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
files=("$@")
if ((${#files[@]} == 0)); then
	shopt -s nullglob
	files=(.github/workflows/*.yml .github/workflows/*.yaml)
fi
if ((${#files[@]} == 0)); then
	echo "check-workflow: no workflow under .github/workflows" >&2
	exit 1
fi
# Debian's interpreter, which has python3-yaml, whatever python3 comes first on PATH.
py=/usr/bin/python3
[[ -x $py ]] || py=python3

exec "$py" - "${files[@]}" <<'EOF'
import re
import subprocess
import sys

try:
    import yaml
except ImportError:
    sys.exit("check-workflow: PyYAML is missing: apt-get install python3-yaml (scripts/deps.sh test)")

JOB_KEYS = {"name", "runs-on", "steps", "strategy", "defaults", "env", "if", "needs", "permissions",
            "timeout-minutes", "continue-on-error", "container", "services", "outputs", "concurrency",
            "environment"}
STEP_KEYS = {"name", "id", "run", "uses", "with", "env", "if", "shell", "working-directory",
             "continue-on-error", "timeout-minutes"}
USES = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[A-Za-z0-9_.-]+$")
MATRIX = re.compile(r"\$\{\{\s*matrix\.([A-Za-z0-9_-]+)\s*\}\}")
EXPR = re.compile(r"\$\{\{[^}]*\}\}")
LOCAL = re.compile(r"(?:^|[\s;&|(])\./(scripts/[A-Za-z0-9_./-]+)")

errors = []


def fail(where, what):
    errors.append(f"{where}: {what}")


def shell_ok(where, script, shell):
    # Expressions are replaced by a word, as the runner replaces them before the shell runs.
    text = EXPR.sub("X", script)
    r = subprocess.run([shell, "-n"], input=text, text=True, capture_output=True)
    if r.returncode != 0:
        fail(where, f"{shell} -n: {r.stderr.strip()}")
    for path in LOCAL.findall(text):
        try:
            open(path).close()
        except OSError:
            fail(where, f"./{path} does not exist in this tree")


def matrix_keys(job):
    m = (job.get("strategy") or {}).get("matrix") or {}
    keys = {k for k in m if k not in ("include", "exclude")}
    for row in m.get("include") or []:
        keys |= set(row)
    return keys


for path in sys.argv[1:]:
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        fail(path, f"not YAML: {e}")
        continue
    if not isinstance(doc, dict):
        fail(path, "the top is not a mapping")
        continue
    # YAML 1.1 reads the key "on" as true.
    if "on" not in doc and True not in doc:
        fail(path, "no 'on:' (the events that start it)")
    for key in ("name", "jobs"):
        if key not in doc:
            fail(path, f"no '{key}:'")
    jobs = doc.get("jobs") or {}
    if not isinstance(jobs, dict) or not jobs:
        fail(path, "jobs is empty")
        continue
    for jname, job in jobs.items():
        where = f"{path}: job {jname}"
        if not isinstance(job, dict):
            fail(where, "not a mapping")
            continue
        for key in set(job) - JOB_KEYS:
            fail(where, f"unknown key '{key}'")
        if "runs-on" not in job:
            fail(where, "no runs-on")
        steps = job.get("steps")
        if not isinstance(steps, list) or not steps:
            fail(where, "no steps")
            continue
        runner = str(job.get("runs-on", ""))
        keys = matrix_keys(job)
        for ref in sorted(set(MATRIX.findall(yaml.safe_dump(job)))):
            if ref not in keys:
                fail(where, f"matrix.{ref} is not a key of the job's matrix")
        default_shell = ((job.get("defaults") or {}).get("run") or {}).get("shell")
        for i, step in enumerate(steps, 1):
            swhere = f"{where}, step {i} ({step.get('name', step.get('uses', '?')) if isinstance(step, dict) else '?'})"
            if not isinstance(step, dict):
                fail(swhere, "not a mapping")
                continue
            for key in set(step) - STEP_KEYS:
                fail(swhere, f"unknown key '{key}'")
            if ("run" in step) == ("uses" in step):
                fail(swhere, "needs exactly one of run and uses")
                continue
            if "uses" in step:
                if not USES.match(str(step["uses"])):
                    fail(swhere, f"uses '{step['uses']}' is not owner/repo@ref")
                run = (step.get("with") or {}).get("run")
                if str(step["uses"]).startswith("vmactions/freebsd-vm@") and run:
                    shell_ok(swhere + ", the VM's run", run, "sh")
                continue
            shell = step.get("shell", default_shell)
            bash = shell == "bash" or (shell is None and "windows" not in runner)
            if bash:
                shell_ok(swhere, str(step["run"]), "bash")

if errors:
    for e in errors:
        print("check-workflow:", e, file=sys.stderr)
    sys.exit(1)
print(f"check-workflow: ok ({len(sys.argv) - 1} workflow file(s))")
EOF
