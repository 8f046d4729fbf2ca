"""The build step that puts the workflow into the package: the metadata is pyproject.toml's;
this only copies the workflow's files (``varprobe.workflow_files.FILES``: the Snakefile, rules,
schemas, profiles, default config) from the checkout into the built package as
``varprobe/_workflow/``, so that a wheel runs ``varprobe run`` outside a clone. Git holds the
files once, where the checkout runs them; an editable install reads them there."""

import runpy
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
LAYOUT = runpy.run_path(str(HERE / "src" / "varprobe" / "workflow_files.py"))


class BuildWithWorkflow(build_py):
    """``build_py``, then a copy of the workflow's files into the built package."""

    def run(self):
        super().run()
        if self.editable_mode:
            return  # the checkout's own files are read (varprobe.workflow_files.root)
        target = Path(self.build_lib) / "varprobe" / LAYOUT["PACKAGED"]
        if target.exists():
            shutil.rmtree(target)
        for name in LAYOUT["FILES"]:
            source, copy = HERE / name, target / name
            if not source.exists():
                raise FileNotFoundError(f"{source}: a file of the workflow is missing from the source tree")
            copy.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir():
                shutil.copytree(source, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(source, copy)


setup(cmdclass={"build_py": BuildWithWorkflow})
