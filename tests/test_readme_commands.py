"""Every shell command the README shows is run by a test or by `.ci/run`.

A newcomer types the README's commands as written; this keeps the list of them and where
each is run in one table, and fails when the README gains a command nobody runs, or when the
test named for a command no longer runs it (its file must still contain the evidence).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# (a regular expression a README command line matches, the file that runs it, a string that
# file must contain as the evidence that it does; None for commands no single machine can run)
WHERE_RUN = [
    (r"apt-get install -y dataset-fashion-mnist python3-venv .*pip install -e \"\.\[test\]\" && zero mnist$",
     ".ci/run", 'pip install --quiet -e ".[test]"'),
    (r"apt-get install -y dataset-fashion-mnist python3-venv .*zero mnist$",
     "tests/cli/test_mnist_job.py", "def test_one_epoch_of_fashion_mnist_reaches_85_percent"),
    (r"apt-get install -y graphviz$", ".ci/run", "graphviz"),
    (r"^python -m pytest -q$", ".ci/run", "python -m pytest -q"),
    (r"^zero gpt train --overwrite && zero gpt sample --run runs/gpt --stream$",
     "tests/cli/test_newcomer.py", "def test_the_readme_gpt_command_runs_twice"),
    (r"^(mkdir -p data && cat /usr/share/common-licenses|zero gpt prepare data/licenses.txt|"
     r"zero gpt train --data data/licenses|zero gpt sample --run runs/licenses|zero plot runs/licenses)",
     "tests/cli/test_newcomer.py", 'if "common-licenses" in b'),
    (r"^mpirun -n 2 --oversubscribe zero (gpt train|mnist)", "tests/distributed/test_cli_jobs.py",
     "mpirun -n 2 zero gpt train"),
    (r"^(cat > hosts <<'HOSTS'|node[12] slots=2|HOSTS|mpirun -n 4 --hostfile hosts)", None,
     "several machines: the hostfile's command line is checked by tests/distributed/test_process_group.py"),
]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        lines += [line.strip() for line in block.splitlines() if line.strip()]
    return lines


@pytest.mark.parametrize("command", readme_commands())
def test_each_readme_command_is_run_somewhere(command):
    runners = [(path, evidence) for pattern, path, evidence in WHERE_RUN if re.search(pattern, command)]
    assert runners, f"the README's command {command!r} is run by no test and not by .ci/run: add one, and a row here"
    for path, evidence in runners:
        if path is not None:
            assert evidence in (ROOT / path).read_text(encoding="utf-8"), (
                f"{path} no longer holds {evidence!r}, the evidence that it runs {command!r}")


def test_every_row_of_the_table_names_a_readme_command():
    commands = readme_commands()
    for pattern, _, _ in WHERE_RUN:
        assert any(re.search(pattern, c) for c in commands), f"no README command matches {pattern!r}: remove the row"
