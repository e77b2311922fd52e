#!/usr/bin/python3
"""The README's tour runs as written: every ```sh block under "## A tour" is extracted and run with bash -e in
a fresh folder (with the repository's examples/ and the two project folders transplt's examples name), the
built tools first on PATH. The reference pages' examples are covered by the e2e suites of each tool.
usage: test_readme.py SOURCE_DIR BUILD_DIR WORK_DIR"""
import os
import re
import shutil
import subprocess
import sys
import unittest

SRC, BUILD, WORK = (os.path.abspath(p) for p in sys.argv[1:4])
TOOLS = ("atc", "msame", "msaccucmp", "aoe", "transplt", "profparse")
TRAIN = """import torch
model = torch.nn.Linear(4, 2).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 4).to('cuda')
    loss = model(x).sum()
    loss.backward()
    opt.step()
"""


def tour_blocks():
    with open(f"{SRC}/README.md") as f:
        text = f.read()
    tour = text[text.index("## A tour"):]
    tour = tour[:tour.index("\n## ", 1)]
    return re.findall(r"```sh\n(.*?)```", tour, re.S)


class Readme(unittest.TestCase):
    def test_the_tour_runs(self):
        shutil.rmtree(WORK, ignore_errors=True)
        os.makedirs(WORK)
        os.symlink(f"{SRC}/examples", f"{WORK}/examples")
        for project, script in (("train_project", "train.py"), ("proj", "main.py")):
            os.makedirs(f"{WORK}/{project}")
            with open(f"{WORK}/{project}/{script}", "w") as f:
                f.write(TRAIN)
        path = ":".join(f"{BUILD}/tools/{t}" for t in TOOLS) + ":/usr/bin:/bin"
        env = {"PATH": path, "HOME": WORK, "ASCEND_PROCESS_LOG_PATH": f"{WORK}/log"}
        blocks = tour_blocks()
        self.assertGreaterEqual(len(blocks), 6, "one example per tool")
        for block in blocks:
            p = subprocess.run(["bash", "-e", "-c", block], cwd=WORK, env=env, capture_output=True, text=True, check=False)
            self.assertEqual(p.returncode, 0, f"{block}\n---\n{p.stdout[-3000:]}{p.stderr[-3000:]}")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=1)
