"""The results page of a run (``docs/results.md`` for the paper-scale run): its config, commit,
machine and measured stage times, the papers' tables built from the run's tables with the
papers' values beside ours (``paper``), every registered summary table and every figure,
rendered through one Markdown template (``template.md.j2``) by the ``results_page`` rule."""
